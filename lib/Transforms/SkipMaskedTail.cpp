//===- SkipMaskedTail.cpp - Compute masked chains up to their bound -------===//
//
// Causal attention over a KV cache masks the positions past `pos + s`; the
// softmax and the product with the values then add nothing for them. This
// pass proves that of a chain of linalg ops on tensors (a seed that masks,
// elementwise users whose masked value folds to a constant, reductions that
// the constant leaves unchanged) and computes each op of the chain in blocks
// of positions, only for the blocks before the runtime bound. Description
// and assumptions: include/tra/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_SKIPMASKEDTAILPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// The value of a payload past the bound
//===----------------------------------------------------------------------===//

/// What is known of a scalar of a payload at a masked position: a constant,
/// a finite number, the reduction's accumulator unchanged, or nothing.
struct Tail {
  enum Kind { Unknown, Finite, Const, Acc } kind = Unknown;
  double value = 0;

  static Tail unknown() { return {}; }
  static Tail finite() { return {Finite, 0}; }
  static Tail acc() { return {Acc, 0}; }
  static Tail constant(double v) {
    if (std::isnan(v))
      return unknown();
    return {Const, v};
  }
  bool isConst() const { return kind == Const; }
  bool isConst(double v) const { return kind == Const && value == v; }
  bool isFiniteValue() const {
    return kind == Finite || (kind == Const && std::isfinite(value));
  }
};

/// Folds one payload operation on what is known of its operands.
Tail foldTail(Operation *op, ArrayRef<Tail> in) {
  auto both = [&](auto fn) -> Tail {
    if (in[0].isConst() && in[1].isConst())
      return Tail::constant(fn(in[0].value, in[1].value));
    return Tail::unknown();
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (isa<arith::AddFOp>(op)) {
    Tail folded = both([](double a, double b) { return a + b; });
    if (folded.kind != Tail::Unknown)
      return folded;
    for (int i = 0; i < 2; ++i) {
      const Tail &a = in[i], &b = in[1 - i];
      if (a.kind == Tail::Acc && b.isConst(0))
        return Tail::acc();
      if (a.isConst() && std::isinf(a.value) && b.kind == Tail::Finite)
        return a;
    }
    if (in[0].isFiniteValue() && in[1].isFiniteValue())
      return Tail::finite();
    return Tail::unknown();
  }
  if (isa<arith::SubFOp>(op)) {
    Tail folded = both([](double a, double b) { return a - b; });
    if (folded.kind != Tail::Unknown)
      return folded;
    if (in[0].kind == Tail::Acc && in[1].isConst(0))
      return Tail::acc();
    if (in[0].isConst() && std::isinf(in[0].value) &&
        in[1].kind == Tail::Finite)
      return in[0];
    if (in[1].isConst() && std::isinf(in[1].value) &&
        in[0].kind == Tail::Finite)
      return Tail::constant(-in[1].value);
    if (in[0].isFiniteValue() && in[1].isFiniteValue())
      return Tail::finite();
    return Tail::unknown();
  }
  if (isa<arith::MulFOp>(op)) {
    Tail folded = both([](double a, double b) { return a * b; });
    if (folded.kind != Tail::Unknown)
      return folded;
    for (int i = 0; i < 2; ++i) {
      const Tail &a = in[i], &b = in[1 - i];
      if (a.isConst(0) && b.kind == Tail::Finite)
        return Tail::constant(0);
      if (a.kind == Tail::Acc && b.isConst(1))
        return Tail::acc();
    }
    if (in[0].isFiniteValue() && in[1].isFiniteValue())
      return Tail::finite();
    return Tail::unknown();
  }
  if (isa<arith::DivFOp>(op)) {
    Tail folded = both([](double a, double b) { return a / b; });
    if (folded.kind != Tail::Unknown)
      return folded;
    // 0 / x with x finite and (assumed) nonzero.
    if (in[0].isConst(0) && in[1].kind == Tail::Finite)
      return Tail::constant(0);
    if (in[0].kind == Tail::Acc && in[1].isConst(1))
      return Tail::acc();
    return Tail::unknown();
  }
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
          arith::MinNumFOp>(op)) {
    bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
    Tail folded = both([&](double a, double b) {
      return isMax ? std::max(a, b) : std::min(a, b);
    });
    if (folded.kind != Tail::Unknown)
      return folded;
    double identity = isMax ? -inf : inf;
    for (int i = 0; i < 2; ++i)
      if (in[i].isConst(identity) &&
          (in[1 - i].kind == Tail::Acc || in[1 - i].kind == Tail::Finite))
        return in[1 - i];
    if (in[0].isFiniteValue() && in[1].isFiniteValue())
      return Tail::finite();
    return Tail::unknown();
  }
  if (isa<arith::NegFOp>(op)) {
    if (in[0].isConst())
      return Tail::constant(-in[0].value);
    return in[0].kind == Tail::Finite ? Tail::finite() : Tail::unknown();
  }
  if (isa<math::ExpOp>(op))
    return in[0].isConst() ? Tail::constant(std::exp(in[0].value))
                           : Tail::unknown();
  // Conversions between float types keep 0 and the infinities (the only
  // constants a masked chain produces); other constants would round.
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    if (in[0].isConst() && (in[0].value == 0 || std::isinf(in[0].value)))
      return in[0];
    if (in[0].kind == Tail::Finite && isa<arith::ExtFOp>(op))
      return Tail::finite();
    return Tail::unknown();
  }
  if (isa<arith::SelectOp>(op)) {
    if (in[1].isConst() && in[2].isConst() && in[1].value == in[2].value)
      return in[1];
    return Tail::unknown();
  }
  return Tail::unknown();
}

/// Evaluates the payload of `op` at a masked position: the block arguments
/// of inputs in `tails` have those values, the other inputs are finite, the
/// inits are the accumulator (`initsAreAcc`) or unknown. Returns what each
/// yielded value is.
SmallVector<Tail> evaluatePayload(linalg::LinalgOp op,
                                  const DenseMap<unsigned, double> &tails,
                                  bool initsAreAcc) {
  Block *body = op.getBlock();
  DenseMap<Value, Tail> known;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto it = tails.find(input->getOperandNumber());
    known[op.getMatchingBlockArgument(input)] =
        it != tails.end() ? Tail::constant(it->second) : Tail::finite();
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    known[op.getMatchingBlockArgument(&init)] =
        initsAreAcc ? Tail::acc() : Tail::unknown();
  SmallVector<Tail> yielded;
  for (Operation &nested : body->getOperations()) {
    if (auto yield = dyn_cast<linalg::YieldOp>(nested)) {
      for (Value v : yield.getValues())
        yielded.push_back(known.lookup(v));
      break;
    }
    SmallVector<Tail> in;
    for (Value operand : nested.getOperands()) {
      auto it = known.find(operand);
      if (it != known.end()) {
        in.push_back(it->second);
        continue;
      }
      // A constant from the payload or from above.
      FloatAttr attr;
      if (matchPattern(operand, m_Constant(&attr)))
        in.push_back(Tail::constant(attr.getValueAsDouble()));
      else
        in.push_back(Tail::unknown());
    }
    Tail result;
    if (FloatAttr attr; nested.getNumResults() == 1 &&
                        matchPattern(nested.getResult(0), m_Constant(&attr)))
      result = Tail::constant(attr.getValueAsDouble());
    else if (nested.getNumResults() == 1)
      result = foldTail(&nested, in);
    for (Value r : nested.getResults())
      known[r] = result;
  }
  return yielded;
}

//===----------------------------------------------------------------------===//
// The seed: a generic that masks
//===----------------------------------------------------------------------===//

/// The largest value of an integer expression of a payload, as a runtime
/// scalar (a 0-d input of the op, or none) plus a constant.
struct BoundExpr {
  Value scalar; // the 0-d tensor the runtime term is read from, or null
  int64_t constant = 0;
};

std::optional<BoundExpr> getUpperBound(linalg::GenericOp op, Value v,
                                       ArrayRef<int64_t> ranges,
                                       unsigned maskedDim) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    return getUpperBound(op, cast.getIn(), ranges, maskedDim);
  if (auto index = v.getDefiningOp<linalg::IndexOp>()) {
    unsigned d = index.getDim();
    if (d == maskedDim || ShapedType::isDynamic(ranges[d]))
      return std::nullopt;
    return BoundExpr{Value(), ranges[d] - 1};
  }
  if (IntegerAttr attr; matchPattern(v, m_Constant(&attr)))
    return BoundExpr{Value(), attr.getInt()};
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    std::optional<BoundExpr> a =
        getUpperBound(op, add.getLhs(), ranges, maskedDim);
    std::optional<BoundExpr> b =
        getUpperBound(op, add.getRhs(), ranges, maskedDim);
    if (!a || !b || (a->scalar && b->scalar))
      return std::nullopt;
    std::optional<int64_t> sum = llvm::checkedAdd(a->constant, b->constant);
    if (!sum)
      return std::nullopt;
    return BoundExpr{a->scalar ? a->scalar : b->scalar, *sum};
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != op.getBlock() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return std::nullopt;
  Value input = op.getDpsInputs()[arg.getArgNumber()];
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type || type.getRank() != 0 ||
      !type.getElementType().isSignlessInteger(64))
    return std::nullopt;
  return BoundExpr{input, 0};
}

/// Returns the loop dim `v` reads (`linalg.index d`, possibly cast).
std::optional<unsigned> getIndexDim(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  if (auto index = v.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// A masking generic: past `bound` along loop dim `dim`, every element it
/// yields is `value`.
struct Seed {
  linalg::GenericOp op;
  unsigned dim = 0;
  BoundExpr bound; // the first masked position
  double value = 0;
};

std::optional<Seed> matchSeed(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  auto select = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
  if (!select)
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return std::nullopt;
  // cond == (t PRED bound), with t a loop index.
  arith::CmpIPredicate pred = cmp.getPredicate();
  Value t = cmp.getLhs(), bound = cmp.getRhs();
  if (!getIndexDim(t)) {
    // bound PRED t: mirror it to t PRED' bound.
    std::swap(t, bound);
    switch (pred) {
    case arith::CmpIPredicate::sge:
      pred = arith::CmpIPredicate::sle;
      break;
    case arith::CmpIPredicate::sgt:
      pred = arith::CmpIPredicate::slt;
      break;
    case arith::CmpIPredicate::sle:
      pred = arith::CmpIPredicate::sge;
      break;
    case arith::CmpIPredicate::slt:
      pred = arith::CmpIPredicate::sgt;
      break;
    default:
      return std::nullopt;
    }
  }
  std::optional<unsigned> dim = getIndexDim(t);
  if (!dim)
    return std::nullopt;
  // Which operand of the select is the masked value, and from which
  // position on every element is masked (plus the bound's maximum).
  Value maskedValue;
  int64_t offset = 0;
  switch (pred) {
  case arith::CmpIPredicate::sle: // visible iff t <= b
    maskedValue = select.getFalseValue();
    offset = 1;
    break;
  case arith::CmpIPredicate::slt: // visible iff t < b
    maskedValue = select.getFalseValue();
    break;
  case arith::CmpIPredicate::sgt: // masked iff t > b
    maskedValue = select.getTrueValue();
    offset = 1;
    break;
  case arith::CmpIPredicate::sge: // masked iff t >= b
    maskedValue = select.getTrueValue();
    break;
  default:
    return std::nullopt;
  }
  FloatAttr constant;
  if (!matchPattern(maskedValue, m_Constant(&constant)))
    return std::nullopt;
  std::optional<BoundExpr> expr =
      getUpperBound(op, bound, op.getStaticLoopRanges(), *dim);
  if (!expr || !expr->scalar)
    return std::nullopt;
  std::optional<int64_t> first = llvm::checkedAdd(expr->constant, offset);
  if (!first)
    return std::nullopt;
  Seed seed{op, *dim, BoundExpr{expr->scalar, *first},
            constant.getValueAsDouble()};
  if (std::isnan(seed.value))
    return std::nullopt;
  return seed;
}

//===----------------------------------------------------------------------===//
// The chain
//===----------------------------------------------------------------------===//

/// An op computed in blocks: its loop dim along the masked positions, and
/// whether that dim is a reduction.
struct ChainOp {
  linalg::LinalgOp op;
  unsigned dim = 0;
  bool reduction = false;
};

/// Returns the tensor dim of `value` that operand `operand` of `op` maps to
/// loop dim `dim`, if it is a plain dim expression.
std::optional<unsigned> getTensorDim(linalg::LinalgOp op, OpOperand *operand,
                                     unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  return map.getResultPosition(getAffineDimExpr(dim, op.getContext()));
}

/// True if loop dim `dim` of `op` appears in an operand's map other than as
/// a plain dim result (`d0 + d1`), which blocks cannot slice.
bool hasCompoundUse(linalg::LinalgOp op, unsigned dim) {
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      if (!isa<AffineDimExpr>(e) && e.isFunctionOfDim(dim))
        return true;
  return false;
}

/// Collects the chain of `seed`, or returns nothing if the chain escapes or
/// a body does not fold. `extent` is the masked dim's size.
std::optional<SmallVector<ChainOp>> collectChain(const Seed &seed,
                                                 int64_t &extent) {
  linalg::LinalgOp seedOp = seed.op;
  extent = seedOp.getStaticLoopRanges()[seed.dim];
  if (ShapedType::isDynamic(extent) || hasCompoundUse(seedOp, seed.dim))
    return std::nullopt;
  Block *block = seedOp->getBlock();
  llvm::SetVector<Operation *> ops;
  SmallVector<ChainOp> chain;
  // Producers of the seed's masked operands with no other use.
  for (OpOperand *input : seedOp.getDpsInputOperands()) {
    std::optional<unsigned> tdim = getTensorDim(seedOp, input, seed.dim);
    if (!tdim)
      continue;
    auto producer = input->get().getDefiningOp<linalg::LinalgOp>();
    if (!producer || !producer.hasPureTensorSemantics() ||
        producer->getBlock() != block || !input->get().hasOneUse() ||
        producer.getNumDpsInits() != 1)
      continue;
    OpOperand *init = producer.getDpsInitOperand(0);
    AffineExpr e = producer.getMatchingIndexingMap(init).getResult(*tdim);
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d ||
        producer.getIteratorTypesArray()[d.getPosition()] !=
            utils::IteratorType::parallel ||
        producer.getStaticLoopRanges()[d.getPosition()] != extent ||
        hasCompoundUse(producer, d.getPosition()))
      continue;
    if (ops.insert(producer))
      chain.push_back({producer, d.getPosition(), false});
  }
  ops.insert(seedOp);
  chain.push_back({seedOp, seed.dim, false});

  // Values whose elements past the bound are known, by tensor dim.
  struct Masked {
    Value value;
    unsigned tensorDim;
    double tail;
  };
  DenseMap<Value, Masked> masked;
  {
    std::optional<unsigned> tdim =
        getTensorDim(seedOp, seedOp.getDpsInitOperand(0), seed.dim);
    if (!tdim)
      return std::nullopt;
    Value result = seedOp->getResult(0);
    masked[result] = Masked{result, *tdim, seed.value};
  }
  // In program order, so that every masked operand of an op is known when
  // the op is reached.
  for (Operation &o :
       llvm::make_range(std::next(seedOp->getIterator()), block->end())) {
    if (llvm::none_of(o.getOperands(),
                      [&](Value v) { return masked.count(v); }))
      continue;
    auto user = dyn_cast<linalg::LinalgOp>(&o);
    if (!user || !user.hasPureTensorSemantics() || user.getNumDpsInits() != 1 ||
        masked.count(user.getDpsInitOperand(0)->get()))
      return std::nullopt;
    // Every masked operand must run along the same loop dim.
    std::optional<unsigned> dim;
    DenseMap<unsigned, double> tails;
    for (OpOperand *input : user.getDpsInputOperands()) {
      auto it = masked.find(input->get());
      if (it == masked.end())
        continue;
      AffineExpr e =
          user.getMatchingIndexingMap(input).getResult(it->second.tensorDim);
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || (dim && *dim != d.getPosition()))
        return std::nullopt;
      dim = d.getPosition();
      tails[input->getOperandNumber()] = it->second.tail;
    }
    if (!dim || user.getStaticLoopRanges()[*dim] != extent ||
        hasCompoundUse(user, *dim))
      return std::nullopt;
    bool reduction =
        user.getIteratorTypesArray()[*dim] == utils::IteratorType::reduction;
    SmallVector<Tail> yielded = evaluatePayload(user, tails, reduction);
    if (yielded.size() != 1)
      return std::nullopt;
    if (reduction) {
      if (yielded[0].kind != Tail::Acc)
        return std::nullopt;
    } else {
      std::optional<unsigned> tdim =
          getTensorDim(user, user.getDpsInitOperand(0), *dim);
      if (!tdim || !yielded[0].isConst())
        return std::nullopt;
      Value result = user->getResult(0);
      masked[result] = Masked{result, *tdim, yielded[0].value};
    }
    ops.insert(user);
    chain.push_back({user, *dim, reduction});
  }
  // No masked value may escape the chain (a use in a nested region, a
  // return, an op of another kind).
  for (auto &[value, info] : masked)
    for (Operation *user : value.getUsers())
      if (!ops.contains(user))
        return std::nullopt;
  llvm::sort(chain, [](const ChainOp &a, const ChainOp &b) {
    return a.op->isBeforeInBlock(b.op);
  });
  return chain;
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// Where one block lies in a tensor of the chain: offset `offset` and
/// `blockSize` elements along tensor dim `dim`, all of the other dims.
struct BlockSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;

  BlockSlice(OpBuilder &b, RankedTensorType type, unsigned dim, Value offset,
             int64_t blockSize)
      : offsets(type.getRank(), b.getIndexAttr(0)),
        strides(type.getRank(), b.getIndexAttr(1)) {
    for (int64_t size : type.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets[dim] = offset;
    sizes[dim] = b.getIndexAttr(blockSize);
  }
};

/// The slice of `source` holding block `offset` along tensor dim `dim`.
Value sliceBlock(OpBuilder &b, Location loc, Value source, unsigned dim,
                 Value offset, int64_t blockSize) {
  BlockSlice slice(b, cast<RankedTensorType>(source.getType()), dim, offset,
                   blockSize);
  return tensor::ExtractSliceOp::create(b, loc, source, slice.offsets,
                                        slice.sizes, slice.strides);
}

/// Writes `block` back into `dest` at `offset` along tensor dim `dim`.
Value insertBlock(OpBuilder &b, Location loc, Value block, Value dest,
                  unsigned dim, Value offset) {
  auto type = cast<RankedTensorType>(block.getType());
  BlockSlice slice(b, type, dim, offset, type.getDimSize(dim));
  return tensor::InsertSliceOp::create(b, loc, block, dest, slice.offsets,
                                       slice.sizes, slice.strides);
}

/// Rewrites `chainOp` into a loop over the first `numBlocks` blocks.
void rewriteInBlocks(const ChainOp &chainOp, Value numBlocks,
                     int64_t blockSize) {
  linalg::LinalgOp op = chainOp.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  OpOperand *init = op.getDpsInitOperand(0);
  std::optional<unsigned> initDim =
      chainOp.reduction ? std::nullopt : getTensorDim(op, init, chainOp.dim);
  // A zero fill of the whole output becomes a fill of each block.
  Value carried = init->get();
  linalg::FillOp fill;
  if (initDim) {
    fill = carried.getDefiningOp<linalg::FillOp>();
    if (fill && fill.hasPureTensorSemantics() && carried.hasOneUse())
      carried = fill.getDpsInits()[0];
    else
      fill = {};
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = arith::ConstantIndexOp::create(b, loc, blockSize);
  auto loop = scf::ForOp::create(
      b, loc, zero, numBlocks, one, ValueRange{carried},
      [&](OpBuilder &lb, Location l, Value iv, ValueRange args) {
        Value offset = arith::MulIOp::create(lb, l, iv, size);
        SmallVector<Value> operands;
        for (OpOperand *input : op.getDpsInputOperands()) {
          std::optional<unsigned> tdim = getTensorDim(op, input, chainOp.dim);
          operands.push_back(
              tdim ? sliceBlock(lb, l, input->get(), *tdim, offset, blockSize)
                   : input->get());
        }
        Value out = args[0];
        if (initDim) {
          out = sliceBlock(lb, l, out, *initDim, offset, blockSize);
          if (fill)
            out = linalg::FillOp::create(lb, l, fill.getDpsInputs()[0], out)
                      .getResult(0);
        }
        operands.push_back(out);
        Operation *blockOp = clone(lb, op, TypeRange{out.getType()}, operands);
        // Loop indices along the blocked dim count from the block's start.
        blockOp->walk([&](linalg::IndexOp index) {
          if (index.getDim() != chainOp.dim || index->getParentOp() != blockOp)
            return;
          OpBuilder ib(index->getContext());
          ib.setInsertionPointAfter(index);
          auto shifted = arith::AddIOp::create(ib, index.getLoc(),
                                               index.getResult(), offset);
          index.getResult().replaceAllUsesExcept(shifted, shifted);
        });
        Value result = blockOp->getResult(0);
        if (initDim)
          result = insertBlock(lb, l, result, args[0], *initDim, offset);
        scf::YieldOp::create(lb, l, result);
      });
  op->getResult(0).replaceAllUsesWith(loop.getResult(0));
  op->erase();
  if (fill && fill->use_empty())
    fill->erase();
}

struct SkipMaskedTailPass
    : public tra::impl::SkipMaskedTailPassBase<SkipMaskedTailPass> {
  using SkipMaskedTailPassBase::SkipMaskedTailPassBase;

  void runOnOperation() override {
    if (blockSize < 0) {
      getOperation()->emitError()
          << "tra-skip-masked-tail: block-size " << int64_t(blockSize)
          << " must be a number of positions (0: off)";
      return signalPassFailure();
    }
    if (blockSize == 0)
      return;
    SmallVector<Seed> seeds;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<Seed> seed = matchSeed(op))
        seeds.push_back(*seed);
    });
    // Ops already rewritten (erased): a seed inside an earlier seed's chain
    // is not looked at again.
    llvm::DenseSet<Operation *> rewritten;
    for (const Seed &seed : seeds) {
      if (rewritten.contains(seed.op))
        continue;
      int64_t extent = 0;
      std::optional<SmallVector<ChainOp>> chain = collectChain(seed, extent);
      if (!chain || extent <= blockSize || extent % blockSize != 0)
        continue;
      // The bound's scalar must be available before the first op.
      Operation *first = chain->front().op;
      DominanceInfo dominance(first->getParentOp());
      if (!dominance.properlyDominates(seed.bound.scalar, first))
        continue;
      // Past the extent nothing is masked; far below 0 everything is.
      BoundExpr bound = seed.bound;
      if (bound.constant >= extent)
        continue;
      bound.constant = std::max<int64_t>(bound.constant, -extent - 1);
      Value numBlocks = buildNumBlocks(first, bound, extent);
      for (const ChainOp &op : *chain) {
        rewritten.insert(op.op);
        rewriteInBlocks(op, numBlocks, blockSize);
      }
    }
  }

  /// min(ceil(clamp(pos, 0, extent) + constant, blockSize), blocks), at
  /// least 0. Clamping pos only ever computes more blocks: positions past
  /// the true bound are masked, so extra blocks change nothing.
  Value buildNumBlocks(Operation *before, const BoundExpr &bound,
                       int64_t extent) {
    OpBuilder b(before);
    Location loc = before->getLoc();
    Value scalar = tensor::ExtractOp::create(b, loc, bound.scalar);
    auto i64 = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    Value pos = arith::MaxSIOp::create(b, loc, scalar, i64(0));
    pos = arith::MinSIOp::create(b, loc, pos, i64(extent));
    // |constant| is at most the sum of static sizes: no overflow from here.
    Value end = arith::AddIOp::create(b, loc, pos, i64(bound.constant));
    Value blocks = arith::CeilDivSIOp::create(b, loc, end, i64(blockSize));
    blocks = arith::MaxSIOp::create(b, loc, blocks, i64(0));
    blocks = arith::MinSIOp::create(b, loc, blocks, i64(extent / blockSize));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), blocks);
  }
};

} // namespace
