//===- DataMovementAdjoints.cpp - Adjoints of data movement ops -----------===//
//
// reshape: the inverse reshape. slice: the gradient padded with zeros
// (concat). concat: slices. convert: the conversion back. update_slice: the
// destination's gradient with the written window zeroed (a map reading the
// position), the update's gradient the window of g (a gather of its rows).
// gather: the scatter-add written relationally, a one-hot join
// onehot[I, v] = (indices[I] == v) aggregated with g: "Iv,Ir->vr".
//
//===----------------------------------------------------------------------===//

#include "AdjointBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

/// Index letters for `rank` dimensions: "abc...".
static std::string letters(unsigned rank, unsigned first = 0) {
  std::string s;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned n = first + i;
    s.push_back(n < 26 ? char('a' + n) : char('A' + n - 26));
  }
  return s;
}

static RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

/// `t` with extent `n` in dimension `dim`.
static RankedTensorType withExtent(RankedTensorType t, int64_t dim, int64_t n) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = n;
  return t.clone(shape);
}

/// The position (a 0-d integer tensor's element in a map body) as i64.
static Value positionAsI64(OpBuilder &b, Location l, Value p) {
  if (p.getType().isInteger(64))
    return p;
  return arith::ExtSIOp::create(b, l, b.getI64Type(), p);
}

static Value sliceGradient(AdjointBuilder &ab, SliceOp op, Value g) {
  RankedTensorType inType = tensorType(op.getInput());
  int64_t dim = op.getDim(), offset = op.getOffset(), size = op.getSize();
  int64_t after = inType.getDimSize(dim) - offset - size;
  SmallVector<Value> parts;
  if (offset > 0)
    parts.push_back(ab.fill(withExtent(inType, dim, offset), 0.0));
  parts.push_back(g);
  if (after > 0)
    parts.push_back(ab.fill(withExtent(inType, dim, after), 0.0));
  if (parts.size() == 1)
    return g;
  return ConcatOp::create(ab.builder(), ab.location(), inType, dim, parts);
}

static OperandGradients concatGradients(AdjointBuilder &ab, ConcatOp op,
                                        Value g, ArrayRef<bool> needed) {
  OperandGradients grads(op.getInputs().size());
  int64_t offset = 0, dim = op.getDim();
  for (auto [i, in] : llvm::enumerate(op.getInputs())) {
    RankedTensorType t = tensorType(in);
    int64_t size = t.getDimSize(dim);
    if (needed[i])
      grads[i] =
          SliceOp::create(ab.builder(), ab.location(), t, g, dim, offset, size);
    offset += size;
  }
  return grads;
}

/// g with dimension `dim` moved to the front (or back, `toFront` false,
/// from a tensor whose first dimension is `dim`).
static Value moveDim(AdjointBuilder &ab, Value g, int64_t dim, bool toFront) {
  if (dim == 0)
    return g;
  RankedTensorType t = tensorType(g);
  unsigned rank = t.getRank();
  std::string natural = letters(rank);
  std::string front = natural;
  front.erase(dim, 1);
  front.insert(front.begin(), natural[dim]);
  std::string from = toFront ? natural : front;
  std::string to = toFront ? front : natural;
  IndexExtents extents;
  for (auto [c, n] : llvm::zip(from, t.getShape()))
    extents[c] = n;
  return ab.reduceAndBroadcast(g, from, to, extents);
}

static OperandGradients updateSliceGradients(AdjointBuilder &ab,
                                             UpdateSliceOp op, Value g,
                                             ArrayRef<bool> needed) {
  OperandGradients grads(2);
  int64_t dim = op.getDim();
  RankedTensorType destType = tensorType(op.getDest());
  RankedTensorType updateType = tensorType(op.getUpdate());
  int64_t n = updateType.getDimSize(dim);
  std::string term = letters(destType.getRank());
  Value pos = op.getPosition();
  if (needed[1]) {
    // The destination's elements in [pos, pos + n) were overwritten.
    grads[1] = ab.map(
        term + ",->" + term, {g, pos}, destType,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               IndexOp::create(b, l, dim));
          Value p = positionAsI64(b, l, a[1]);
          Value end = arith::AddIOp::create(
              b, l, p, arith::ConstantOp::create(b, l, b.getI64IntegerAttr(n)));
          Value before =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, p);
          Value past =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, end);
          Value kept = arith::OrIOp::create(b, l, before, past);
          return arith::SelectOp::create(
              b, l, kept, a[0],
              scalarConstant(b, l, destType.getElementType(), 0.0));
        });
  }
  if (needed[0]) {
    // Rows pos .. pos + n - 1 of g along dim: a gather of g's rows.
    Value rows = ab.map(
        "->a", {pos}, RankedTensorType::get({n}, ab.builder().getI64Type()),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               IndexOp::create(b, l, 0));
          return arith::AddIOp::create(b, l, i, positionAsI64(b, l, a[0]));
        });
    Value table = moveDim(ab, g, dim, /*toFront=*/true);
    RankedTensorType tableType = tensorType(table);
    RankedTensorType gathered = withExtent(tableType, 0, n);
    Value window =
        GatherOp::create(ab.builder(), ab.location(), gathered, table, rows);
    grads[0] = moveDim(ab, window, dim, /*toFront=*/false);
  }
  return grads;
}

static Value gatherGradient(AdjointBuilder &ab, GatherOp op, Value g) {
  RankedTensorType tableType = tensorType(op.getTable());
  RankedTensorType indexType = tensorType(op.getIndices());
  unsigned ni = indexType.getRank();
  unsigned nr = tableType.getRank() - 1;
  std::string iTerm = letters(ni);
  std::string rTerm = letters(nr, ni + 1);
  char v = letters(1, ni)[0];
  Type elt = tableType.getElementType();
  SmallVector<int64_t> onehotShape(indexType.getShape());
  onehotShape.push_back(tableType.getDimSize(0));
  Value onehot = ab.map(
      iTerm + "->" + iTerm + v, {op.getIndices()},
      RankedTensorType::get(onehotShape, elt),
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value row = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                               IndexOp::create(b, l, ni));
        Value idx = positionAsI64(b, l, a[0]);
        Value eq =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, idx, row);
        return arith::SelectOp::create(b, l, eq, scalarConstant(b, l, elt, 1.0),
                                       scalarConstant(b, l, elt, 0.0));
      });
  return ab.einsum(iTerm + v + "," + iTerm + rTerm + "->" + v + rTerm,
                   CombinerKind::mul, {onehot, g}, tableType);
}

FailureOr<OperandGradients>
mlir::tra::autodiff::dataMovementAdjoint(AdjointBuilder &ab, Operation *op,
                                         Value g, ArrayRef<bool> needed) {
  OperandGradients grads(op->getNumOperands());
  auto isFloat = [](Value v) {
    return llvm::isa<FloatType>(tensorType(v).getElementType());
  };
  bool handled =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case([&](ReshapeOp o) {
            grads[0] = ReshapeOp::create(ab.builder(), ab.location(),
                                         tensorType(o.getInput()), g);
            return true;
          })
          .Case([&](SliceOp o) {
            grads[0] = sliceGradient(ab, o, g);
            return true;
          })
          .Case([&](ConcatOp o) {
            grads = concatGradients(ab, o, g, needed);
            return true;
          })
          .Case([&](ConvertOp o) {
            if (isFloat(o.getInput()))
              grads[0] =
                  ab.convert(g, tensorType(o.getInput()).getElementType());
            return true;
          })
          .Case([&](UpdateSliceOp o) {
            grads = updateSliceGradients(ab, o, g, needed);
            return true;
          })
          .Case([&](GatherOp o) {
            if (needed[0])
              grads[0] = gatherGradient(ab, o, g);
            return true;
          })
          .Default([](Operation *) { return false; });
  if (!handled)
    return op->emitOpError() << "has no gradient (tra-autodiff)", failure();
  for (auto [i, grad] : llvm::enumerate(grads))
    if (!needed[i])
      grad = Value();
  return grads;
}
