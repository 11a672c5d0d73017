//===- AdjointBuilder.cpp - Building adjoints in tra ops ------------------===//

#include "AdjointBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

RankedTensorType AdjointBuilder::termType(StringRef term,
                                          const IndexExtents &extents,
                                          Type elt) {
  SmallVector<int64_t> shape;
  for (char c : term)
    shape.push_back(extents.lookup(c));
  return RankedTensorType::get(shape, elt);
}

Value AdjointBuilder::fill(RankedTensorType type, double value) {
  return FillOp::create(b, loc, type,
                        FloatAttr::get(type.getElementType(), value));
}

Value AdjointBuilder::einsum(StringRef spec, CombinerKind combiner,
                             ValueRange inputs, RankedTensorType type,
                             AggregationKind agg) {
  return EinsumOp::create(b, loc, type, spec, combiner, agg, inputs);
}

Value AdjointBuilder::map(StringRef spec, ValueRange inputs,
                          RankedTensorType type, const ScalarBodyFn &body) {
  return createMap(b, loc, type, inputs, spec, body);
}

Value AdjointBuilder::add(Value x, Value y) {
  return map("", {x, y}, llvm::cast<RankedTensorType>(x.getType()),
             [](OpBuilder &ib, Location l, ValueRange a) -> Value {
               return arith::AddFOp::create(ib, l, a[0], a[1]);
             });
}

Value AdjointBuilder::convert(Value v, Type elt) {
  auto type = llvm::cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elt)
    return v;
  return ConvertOp::create(b, loc, type.clone(elt), v);
}

Value AdjointBuilder::reduceAndBroadcast(Value v, StringRef from, StringRef to,
                                         const IndexExtents &extents) {
  Type elt = llvm::cast<RankedTensorType>(v.getType()).getElementType();
  std::string kept;
  for (char c : to)
    if (from.contains(c))
      kept.push_back(c);
  if (kept != from)
    v = einsum((from + "->" + kept).str(), CombinerKind::id, {v},
               termType(kept, extents, elt));
  if (kept != to)
    v = map(kept + "->" + to.str(), {v}, termType(to, extents, elt),
            [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return v;
}

Value mlir::tra::autodiff::scalarConstant(OpBuilder &b, Location loc, Type type,
                                          double value) {
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, value));
}
