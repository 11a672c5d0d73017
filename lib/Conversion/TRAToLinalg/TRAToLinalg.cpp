//===- TRAToLinalg.cpp - Lower model-level tra ops to linalg --------------===//
//
// Every model-level tra operation becomes upstream operations on tensors:
// einsums and maps become linalg.generic (or linalg.contract), data movement
// becomes tensor slicing and reshaping, and dynamic positions are checked at
// run time with cf.assert.
//
//===----------------------------------------------------------------------===//

#include "tra/Conversion/TRAToLinalg/TRAToLinalg.h"

#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_CONVERTTRATOLINALGPASS
#include "tra/Conversion/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;

/// Tensors of at most this many elements are materialized by tra.fill as an
/// arith.constant; larger ones as a linalg.fill, so that a large constant
/// never ends up in the object file.
static constexpr int64_t kMaxConstantFillElements = 16;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

/// Returns a scalar constant `value` of the float type `type`.
static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getFloatAttr(type, value)));
}

/// Returns `value` converted to `to` with the semantics of tra.convert:
/// floats round to nearest even, floats to integers truncate toward zero,
/// anything to i1 tests for nonzero, i1 converts as 0 or 1.
static Value convertScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    if (fromFloat.getWidth() > toFloat.getWidth())
      return arith::TruncFOp::create(b, loc, to, value);
    // f16 <-> bf16: widening to f32 is exact, so this rounds once.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   floatConstant(b, loc, from, 0.0));
    Value zero = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getIntegerAttr(from, 0)));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (from.isInteger(1))
    return toFloat ? Value(arith::UIToFPOp::create(b, loc, to, value))
                   : Value(arith::ExtUIOp::create(b, loc, to, value));
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, value);
  if (toFloat)
    return arith::SIToFPOp::create(b, loc, to, value);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, value);
  return arith::TruncIOp::create(b, loc, to, value);
}

/// Folds `xs` left to right with the binary operation `OpTy`.
template <typename OpTy>
static Value foldLeft(OpBuilder &b, Location loc, ValueRange xs) {
  Value acc = xs.front();
  for (Value x : xs.drop_front())
    acc = OpTy::create(b, loc, acc, x);
  return acc;
}

/// Returns numerator / (1 + exp(-x)): the sigmoid of x for numerator 1,
/// silu for numerator x.
static Value buildLogistic(OpBuilder &b, Location loc, Value numerator,
                           Value x) {
  Value one = floatConstant(b, loc, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, numerator,
                               arith::AddFOp::create(b, loc, one, e));
}

/// Returns the einsum combiner `kind` applied to the scalars `xs`, with the
/// semantics of `applyCombiner` (max and min propagate NaN).
static Value buildCombiner(OpBuilder &b, Location loc, CombinerKind kind,
                           ValueRange xs) {
  Value x = xs.front();
  Type t = x.getType();
  switch (kind) {
  case CombinerKind::mul:
    return foldLeft<arith::MulFOp>(b, loc, xs);
  case CombinerKind::add:
    return foldLeft<arith::AddFOp>(b, loc, xs);
  case CombinerKind::max:
    return foldLeft<arith::MaximumFOp>(b, loc, xs);
  case CombinerKind::min:
    return foldLeft<arith::MinimumFOp>(b, loc, xs);
  case CombinerKind::sub:
    return arith::SubFOp::create(b, loc, xs[0], xs[1]);
  case CombinerKind::div:
    return arith::DivFOp::create(b, loc, xs[0], xs[1]);
  case CombinerKind::id:
    return x;
  case CombinerKind::neg:
    return arith::NegFOp::create(b, loc, x);
  case CombinerKind::exp:
    return math::ExpOp::create(b, loc, x);
  case CombinerKind::silu:
    return buildLogistic(b, loc, x, x);
  case CombinerKind::rsqrt:
    return math::RsqrtOp::create(b, loc, x);
  case CombinerKind::sqrt:
    return math::SqrtOp::create(b, loc, x);
  case CombinerKind::square:
    return arith::MulFOp::create(b, loc, x, x);
  case CombinerKind::tanh:
    return math::TanhOp::create(b, loc, x);
  case CombinerKind::abs:
    return math::AbsFOp::create(b, loc, x);
  case CombinerKind::recip:
    return arith::DivFOp::create(b, loc, floatConstant(b, loc, t, 1.0), x);
  case CombinerKind::relu: {
    // x > 0 ? x : 0, so that NaN gives 0 as in the interpreter.
    Value zero = floatConstant(b, loc, t, 0.0);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    return arith::SelectOp::create(b, loc, positive, x, zero);
  }
  case CombinerKind::sigmoid:
    return buildLogistic(b, loc, floatConstant(b, loc, t, 1.0), x);
  }
  llvm_unreachable("unknown combiner");
}

/// Returns `acc` and `value` combined by the aggregation `kind`.
static Value buildAggregation(OpBuilder &b, Location loc, AggregationKind kind,
                              Value acc, Value value) {
  switch (kind) {
  case AggregationKind::sum:
    return arith::AddFOp::create(b, loc, acc, value);
  case AggregationKind::prod:
    return arith::MulFOp::create(b, loc, acc, value);
  case AggregationKind::max:
    return arith::MaximumFOp::create(b, loc, acc, value);
  case AggregationKind::min:
    return arith::MinimumFOp::create(b, loc, acc, value);
  }
  llvm_unreachable("unknown aggregation");
}

/// Returns "OPNAME at FILE:LINE:COL" (or just the op name without a file
/// location), for run-time error messages.
static std::string describeOp(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto loc = op->getLoc()->findInstanceOf<FileLineColLoc>())
    text += " at " + loc.getFilename().str() + ":" +
            std::to_string(loc.getLine()) + ":" +
            std::to_string(loc.getColumn());
  return text;
}

/// Emits a run-time check that `lower <= value <= upper` (all index values),
/// a cf.assert with `message`, and returns `value` clamped into the range.
/// Compiled code reports a failed check to the runtime and goes on
/// (tra-report-failed-checks), so the clamped value is what it uses: no
/// memory outside a buffer is touched, and the run is reported as failed.
static Value buildRangeCheck(OpBuilder &b, Location loc, Value value,
                             int64_t lower, int64_t upper,
                             const std::string &message) {
  Value lo = arith::ConstantIndexOp::create(b, loc, lower);
  Value hi = arith::ConstantIndexOp::create(b, loc, upper);
  Value aboveLo =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, value, lo);
  Value belowHi =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, value, hi);
  Value ok = arith::AndIOp::create(b, loc, aboveLo, belowHi);
  cf::AssertOp::create(b, loc, ok, message);
  Value clamped = arith::MaxSIOp::create(b, loc, value, lo);
  return arith::MinSIOp::create(b, loc, clamped, hi);
}

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

/// Returns `n` parallel iterator types.
static SmallVector<utils::IteratorType> parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// Returns an uninitialized tensor of `shape` and `elementType`.
static Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

/// Returns `input` with every element converted to `elementType`.
static Value convertTensor(OpBuilder &b, Location loc, Value input,
                           Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType)
    return input;
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Value init = emptyTensor(b, loc, type.getShape(), elementType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, parallelIterators(rank),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                convertScalar(nb, nl, args[0], elementType));
      });
  return generic.getResult(0);
}

/// Returns static index attributes for `values`.
static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  return llvm::map_to_vector(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

//===----------------------------------------------------------------------===//
// tra.einsum
//===----------------------------------------------------------------------===//

bool mlir::tra::isContractionSpec(const EinsumSpec &spec) {
  if (spec.getNumInputs() != 2 || spec.getReducedIndices().empty())
    return false;
  for (unsigned idx = 0, e = spec.getNumIndices(); idx < e; ++idx) {
    unsigned terms = spec.isOutputIndex(idx) +
                     spec.getInputPosition(0, idx).has_value() +
                     spec.getInputPosition(1, idx).has_value();
    if (terms < 2)
      return false;
  }
  return true;
}

namespace {
/// The loop nest of an einsum: one loop per index, the output indices first
/// (in output order, parallel), then the aggregated indices (reduction).
struct EinsumLoops {
  /// The loop dimension of every spec index.
  SmallVector<unsigned> dimOfIndex;
  /// The iterator type of every loop dimension.
  SmallVector<utils::IteratorType> iterators;

  explicit EinsumLoops(const EinsumSpec &spec) {
    dimOfIndex.assign(spec.getNumIndices(), 0);
    unsigned next = 0;
    for (unsigned idx : spec.getOutput())
      dimOfIndex[idx] = next++;
    iterators = parallelIterators(next);
    for (unsigned idx : spec.getReducedIndices()) {
      dimOfIndex[idx] = next++;
      iterators.push_back(utils::IteratorType::reduction);
    }
  }

  /// Returns the indexing map of a term given by its spec indices.
  AffineMap mapOf(ArrayRef<unsigned> term, MLIRContext *ctx) const {
    SmallVector<AffineExpr> exprs =
        llvm::map_to_vector(term, [&](unsigned idx) {
          return getAffineDimExpr(dimOfIndex[idx], ctx);
        });
    return AffineMap::get(iterators.size(), 0, exprs, ctx);
  }
};

/// tra.einsum -> linalg.generic (or linalg.contract for contractions).
/// An operation the planner added to compute a value again where it is read
/// late (`tra.recomputed`, include/tra/Optimizer/Recompute.h) keeps the
/// attribute on the op that makes its result, so that CSE does not merge it
/// back into the original it repeats.
static void keepRecomputed(Operation *op, ValueRange results) {
  Attribute marker = op->getAttr("tra.recomputed");
  if (!marker)
    return;
  for (Value result : results)
    if (Operation *def = result.getDefiningOp())
      def->setAttr("tra.recomputed", marker);
}

struct EinsumLowering : public OpConversionPattern<EinsumOp> {
  EinsumLowering(MLIRContext *ctx, const ConvertTRAToLinalgPassOptions &options)
      : OpConversionPattern(ctx), options(options) {}

  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EinsumSpec spec = op.getParsedSpec();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    Type accType = elementType;
    if (options.accumulateInF32 && elementType.getIntOrFloatBitWidth() < 32)
      accType = rewriter.getF32Type();

    EinsumLoops loops(spec);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (unsigned i = 0, e = spec.getNumInputs(); i < e; ++i)
      maps.push_back(loops.mapOf(spec.getInput(i), ctx));
    maps.push_back(loops.mapOf(spec.getOutput(), ctx));

    bool aggregates = !spec.getReducedIndices().empty();
    Value init = emptyTensor(rewriter, loc, type.getShape(), accType);
    if (aggregates) {
      double identity = getAggregationIdentity(op.getAggregation());
      Value scalar = floatConstant(rewriter, loc, accType, identity);
      init = linalg::FillOp::create(rewriter, loc, ValueRange{scalar},
                                    ValueRange{init})
                 .getResult(0);
    }

    Value result;
    if (options.namedContractions && op.getCombiner() == CombinerKind::mul &&
        op.getAggregation() == AggregationKind::sum && isContractionSpec(spec))
      result =
          linalg::ContractOp::create(rewriter, loc, TypeRange{init.getType()},
                                     adaptor.getInputs(), ValueRange{init},
                                     rewriter.getAffineMapArrayAttr(maps))
              .getResult(0);
    else
      result = buildGeneric(rewriter, loc, op, adaptor.getInputs(), init, maps,
                            loops.iterators, aggregates, accType);
    Value converted = convertTensor(rewriter, loc, result, elementType);
    keepRecomputed(op, {result, converted});
    rewriter.replaceOp(op, converted);
    return success();
  }

private:
  /// Builds the linalg.generic computing the einsum into `init`.
  static Value buildGeneric(OpBuilder &b, Location loc, EinsumOp op,
                            ValueRange inputs, Value init,
                            ArrayRef<AffineMap> maps,
                            ArrayRef<utils::IteratorType> iterators,
                            bool aggregates, Type accType) {
    CombinerKind combiner = op.getCombiner();
    AggregationKind aggregation = op.getAggregation();
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          SmallVector<Value> xs =
              llvm::map_to_vector(args.drop_back(), [&](Value x) {
                return convertScalar(nb, nl, x, accType);
              });
          Value value = buildCombiner(nb, nl, combiner, xs);
          if (aggregates)
            value = buildAggregation(nb, nl, aggregation, args.back(), value);
          linalg::YieldOp::create(nb, nl, value);
        });
    return generic.getResult(0);
  }

  ConvertTRAToLinalgPassOptions options;
};

//===----------------------------------------------------------------------===//
// tra.map
//===----------------------------------------------------------------------===//

/// tra.map -> linalg.generic with the body cloned.
struct MapLowering : public OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    EinsumSpec spec = op.getParsedSpec();
    RankedTensorType type = op.getType();
    unsigned rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();

    SmallVector<AffineMap> maps;
    for (unsigned i = 0, e = spec.getNumInputs(); i < e; ++i) {
      SmallVector<AffineExpr> exprs;
      for (unsigned idx : spec.getInput(i)) {
        std::optional<unsigned> pos = spec.getOutputPosition(idx);
        if (!pos)
          return rewriter.notifyMatchFailure(op, "input index not in output");
        exprs.push_back(getAffineDimExpr(*pos, ctx));
      }
      maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));

    Block &body = op.getBody().front();
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, adaptor.getInputs(), ValueRange{init},
        maps, parallelIterators(rank),
        [&](OpBuilder &b, Location nl, ValueRange args) {
          IRMapping mapping;
          mapping.map(body.getArguments(), args.drop_back());
          for (Operation &inner : body.without_terminator()) {
            if (auto index = dyn_cast<IndexOp>(inner)) {
              mapping.map(
                  index.getResult(),
                  linalg::IndexOp::create(b, index.getLoc(), index.getDim())
                      .getResult());
              continue;
            }
            b.clone(inner, mapping);
          }
          linalg::YieldOp::create(
              b, nl, mapping.lookupOrDefault(op.getYieldedValue()));
        });
    keepRecomputed(op, generic.getResults());
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// tra.slice -> tensor.extract_slice.
struct SliceLowering : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[op.getDim()] = op.getOffset();
    SmallVector<int64_t> strides(type.getRank(), 1);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getInput(), indexAttrs(rewriter, offsets),
        indexAttrs(rewriter, type.getShape()), indexAttrs(rewriter, strides));
    return success();
  }
};

/// tra.concat -> tensor.insert_slice of every input into an empty tensor.
struct ConcatLowering : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    unsigned dim = op.getDim();
    Value result =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (Value input : adaptor.getInputs()) {
      ArrayRef<int64_t> shape =
          cast<RankedTensorType>(input.getType()).getShape();
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, shape), indexAttrs(rewriter, strides));
      offsets[dim] += shape[dim];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// tra.update_slice -> a bounds-checked tensor.insert_slice at the position
/// read from the 0-d position tensor.
struct UpdateSliceLowering : public OpConversionPattern<UpdateSliceOp> {
  UpdateSliceLowering(MLIRContext *ctx, bool boundsChecks)
      : OpConversionPattern(ctx), boundsChecks(boundsChecks) {}

  LogicalResult
  matchAndRewrite(UpdateSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto updateType = cast<RankedTensorType>(op.getUpdate().getType());
    RankedTensorType destType = op.getType();
    unsigned dim = op.getDim();
    Value raw = tensor::ExtractOp::create(rewriter, loc, adaptor.getPosition(),
                                          ValueRange{});
    Value pos =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), raw);
    int64_t last = destType.getDimSize(dim) - updateType.getDimSize(dim);
    if (boundsChecks)
      pos = buildRangeCheck(rewriter, loc, pos, 0, last,
                            describeOp(op) + ": position out of range [0, " +
                                std::to_string(last) + "] along dim " +
                                std::to_string(dim));

    unsigned rank = destType.getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    offsets[dim] = pos;
    SmallVector<int64_t> strides(rank, 1);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, adaptor.getUpdate(), adaptor.getDest(), offsets,
        indexAttrs(rewriter, updateType.getShape()),
        indexAttrs(rewriter, strides));
    return success();
  }

private:
  bool boundsChecks;
};

/// tra.gather -> linalg.generic over the result reading the table with a
/// bounds-checked tensor.extract.
struct GatherLowering : public OpConversionPattern<GatherOp> {
  GatherLowering(MLIRContext *ctx, bool boundsChecks)
      : OpConversionPattern(ctx), boundsChecks(boundsChecks) {}

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto tableType = cast<RankedTensorType>(op.getTable().getType());
    auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
    unsigned rank = type.getRank();
    unsigned indexRank = indicesType.getRank();
    int64_t rows = tableType.getDimSize(0);
    std::string message = describeOp(op) + ": index out of range [0, " +
                          std::to_string(rows) + ")";

    SmallVector<AffineExpr> indexExprs;
    for (unsigned d = 0; d < indexRank; ++d)
      indexExprs.push_back(rewriter.getAffineDimExpr(d));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    Value table = adaptor.getTable();
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{init}, maps, parallelIterators(rank),
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value row =
              arith::IndexCastOp::create(b, nl, b.getIndexType(), args[0]);
          if (boundsChecks)
            row = buildRangeCheck(b, nl, row, 0, rows - 1, message);
          SmallVector<Value> coords = {row};
          for (unsigned d = indexRank; d < rank; ++d)
            coords.push_back(linalg::IndexOp::create(b, nl, d));
          linalg::YieldOp::create(
              b, nl,
              tensor::ExtractOp::create(b, nl, table, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }

private:
  bool boundsChecks;
};

/// tra.reshape -> tensor.collapse_shape and/or tensor.expand_shape.
struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value value = adaptor.getInput();
    auto sourceType = cast<RankedTensorType>(value.getType());
    if (sourceType == type) {
      rewriter.replaceOp(op, value);
      return success();
    }
    // To or from 0-d: every dimension on the other side is 1.
    if (type.getRank() == 0) {
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
          op, type, value, ArrayRef<ReassociationIndices>{});
      return success();
    }
    if (sourceType.getRank() == 0) {
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          op, type, value, ArrayRef<ReassociationIndices>{});
      return success();
    }
    // Collapse every source group to one dimension, then expand it to the
    // group's result dimensions; skip either step when it is the identity.
    SmallVector<ReassociationIndices> collapse, expand;
    bool collapses = false, expands = false;
    for (auto &[source, result] : op.getGroups()) {
      collapse.emplace_back(source.begin(), source.end());
      expand.emplace_back(result.begin(), result.end());
      collapses |= source.size() > 1;
      expands |= result.size() > 1;
    }
    if (collapses)
      value = tensor::CollapseShapeOp::create(rewriter, loc, value, collapse);
    if (expands)
      value = tensor::ExpandShapeOp::create(rewriter, loc, type, value, expand);
    rewriter.replaceOp(op, value);
    return success();
  }
};

/// tra.fill -> arith.constant (small) or linalg.fill (large).
struct FillLowering : public OpConversionPattern<FillOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FillOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    TypedAttr value = op.getValue();
    if (type.getNumElements() <= kMaxConstantFillElements) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, SplatElementsAttr::get(type, value));
      return success();
    }
    Value scalar = arith::ConstantOp::create(rewriter, loc, value);
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    rewriter.replaceOp(op,
                       linalg::FillOp::create(rewriter, loc, ValueRange{scalar},
                                              ValueRange{init})
                           .getResults());
    return success();
  }
};

/// tra.convert -> linalg.generic of arith casts.
struct ConvertLowering : public OpConversionPattern<ConvertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value converted = convertTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                    op.getType().getElementType());
    keepRecomputed(op, converted);
    rewriter.replaceOp(op, converted);
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Checks, patterns and the pass
//===----------------------------------------------------------------------===//

/// Returns success if every operand and result of `op` with a shaped type has
/// a static shape; emits an error otherwise.
static LogicalResult checkStaticShapes(Operation *op) {
  auto isStatic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  };
  if (llvm::all_of(op->getOperandTypes(), isStatic) &&
      llvm::all_of(op->getResultTypes(), isStatic))
    return success();
  return op->emitOpError(
      "has a dynamic shape; the lowering to linalg handles static shapes only");
}

/// Returns success if the body of `op` uses only arith, math, tra.index and
/// tra.yield; emits an error at the first other operation otherwise.
static LogicalResult checkMapBody(MapOp op) {
  for (Operation &inner : op.getBody().front()) {
    if (isa<IndexOp, YieldOp>(inner) ||
        isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      continue;
    InFlightDiagnostic diag =
        op.emitOpError("body operation '")
        << inner.getName()
        << "' cannot be lowered: a tra.map body may use arith and math only";
    diag.attachNote(inner.getLoc()) << "see the operation here";
    return diag;
  }
  EinsumSpec spec = op.getParsedSpec();
  for (unsigned i = 0, e = spec.getNumInputs(); i < e; ++i)
    for (unsigned idx : spec.getInput(i))
      if (!spec.isOutputIndex(idx))
        return op.emitOpError("input #")
               << i << " has index '" << spec.getName(idx)
               << "' that is not in the result";
  return success();
}

LogicalResult mlir::tra::checkLowerableToLinalg(Operation *op) {
  if (failed(checkStaticShapes(op)))
    return failure();
  if (auto map = dyn_cast<MapOp>(op))
    return checkMapBody(map);
  return success();
}

void mlir::tra::populateTRAToLinalgConversionPatterns(
    RewritePatternSet &patterns, const ConvertTRAToLinalgPassOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<EinsumLowering>(ctx, options);
  patterns.add<UpdateSliceLowering, GatherLowering>(ctx, options.boundsChecks);
  patterns.add<MapLowering, SliceLowering, ConcatLowering, ReshapeLowering,
               FillLowering, ConvertLowering>(ctx);
}

namespace {
struct ConvertTRAToLinalgPass
    : public tra::impl::ConvertTRAToLinalgPassBase<ConvertTRAToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    bool lowerable = true;
    root->walk([&](Operation *op) {
      if (isa<TRADialect>(op->getDialect()) && !isa<IndexOp, YieldOp>(op))
        lowerable &= succeeded(checkLowerableToLinalg(op));
    });
    if (!lowerable)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<TRADialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    ConvertTRAToLinalgPassOptions options;
    options.accumulateInF32 = accumulateInF32;
    options.boundsChecks = boundsChecks;
    options.namedContractions = namedContractions;
    populateTRAToLinalgConversionPatterns(patterns, options);
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
