//===- EinsumAdjoint.cpp - The adjoint of tra.einsum ----------------------===//
//
//   out[O] = AGG_{U \ O} C(in_0[T_0], ..., in_n[T_n])      (U: every index)
//
// Sum aggregation: d in_k[T_k] = sum_{U \ T_k} g[O] * dC/dx_k(...).
//  - C = mul (or a one-input identity): the partial is the product of the
//    other inputs, so the adjoint is one einsum "O,T_j..->T_k" mul: the
//    matmul's gradients are matmuls, with no extra work.
//  - C with a constant partial (add, sub): g summed to T_k and scaled by the
//    number of assignments of the indices in neither O nor T_k.
//  - any other C: the partial is a map over U, summed to T_k.
// Max/min/prod aggregation: out = AGG_{U \ O} v[U] with v = C(...) over U;
// the gradient of v goes to where the extremum is reached (split evenly among
// ties), or, for prod, to g * (product of the others), computed exactly with
// zeros; then v's gradient flows back through C as above.
//
//===----------------------------------------------------------------------===//

#include "AdjointBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

namespace {
/// The terms, extents and element type of one einsum.
struct EinsumParts {
  SmallVector<std::string> terms; // one per input
  std::string out;                // O
  std::string all;                // U, in index order
  IndexExtents extents;
  Type elt; // the result's element type: every adjoint is computed in it
};
} // namespace

static EinsumParts getParts(EinsumOp op) {
  EinsumParts p;
  EinsumSpec spec = op.getParsedSpec();
  for (unsigned i = 0; i < spec.getNumInputs(); ++i) {
    p.terms.push_back(spec.inputTerm(i));
    auto shape =
        llvm::cast<RankedTensorType>(op.getInputs()[i].getType()).getShape();
    for (auto [c, n] : llvm::zip(p.terms.back(), shape))
      p.extents[c] = n;
  }
  p.out = spec.outputTerm();
  for (unsigned idx = 0; idx < spec.getNumIndices(); ++idx)
    p.all.push_back(spec.getName(idx));
  p.elt = op.getType().getElementType();
  return p;
}

/// Whether `inputs` combined by `kind` is linear in each input with the
/// product of the others as its partial.
static bool isProductLike(CombinerKind kind, size_t numInputs) {
  if (kind == CombinerKind::mul)
    return true;
  return numInputs == 1 &&
         (kind == CombinerKind::id || kind == CombinerKind::add ||
          kind == CombinerKind::max || kind == CombinerKind::min);
}

/// The constant partial dC/dx_k, if C has one.
static std::optional<double> constantPartial(CombinerKind kind, unsigned k) {
  switch (kind) {
  case CombinerKind::add:
    return 1.0;
  case CombinerKind::sub:
    return k == 0 ? 1.0 : -1.0;
  case CombinerKind::neg:
    return -1.0;
  default:
    return std::nullopt;
  }
}

/// The gradient of input k of a sum-aggregated einsum "terms->out" with
/// combiner `kind`, given the result's gradient g (indexed by out).
static Value sumAggregationGradient(AdjointBuilder &ab, ValueRange inputs,
                                    const EinsumParts &p, CombinerKind kind,
                                    Value g, unsigned k) {
  const std::string &tk = p.terms[k];
  if (isProductLike(kind, inputs.size())) {
    if (inputs.size() == 1)
      return ab.reduceAndBroadcast(g, p.out, tk, p.extents);
    SmallVector<Value> operands{g};
    SmallVector<std::string> terms{p.out};
    for (auto [j, in] : llvm::enumerate(inputs)) {
      if (j == k)
        continue;
      operands.push_back(in);
      terms.push_back(p.terms[j]);
    }
    // Indices of T_k that no other term has are broadcast afterwards.
    std::string joined = llvm::join(terms, "");
    std::string kept;
    for (char c : tk)
      if (llvm::StringRef(joined).contains(c))
        kept.push_back(c);
    Value r =
        ab.einsum(llvm::join(terms, ",") + "->" + kept, CombinerKind::mul,
                  operands, AdjointBuilder::termType(kept, p.extents, p.elt));
    return ab.reduceAndBroadcast(r, kept, tk, p.extents);
  }
  if (std::optional<double> c = constantPartial(kind, k)) {
    // Indices in neither O nor T_k multiply each element's gradient by
    // their number of assignments.
    double count = 1.0;
    for (char idx : p.all)
      if (!llvm::StringRef(p.out).contains(idx) &&
          !llvm::StringRef(tk).contains(idx))
        count *= double(p.extents.lookup(idx));
    Value r = ab.reduceAndBroadcast(g, p.out, tk, p.extents);
    double scale = *c * count;
    if (scale == 1.0)
      return r;
    return ab.map("", {r}, llvm::cast<RankedTensorType>(r.getType()),
                  [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::MulFOp::create(
                        b, l, a[0], scalarConstant(b, l, p.elt, scale));
                  });
  }
  // A general combiner: g * dC/dx_k over every index, summed to T_k.
  SmallVector<Value> operands{g};
  SmallVector<std::string> terms{p.out};
  for (auto [j, in] : llvm::enumerate(inputs)) {
    operands.push_back(in);
    terms.push_back(p.terms[j]);
  }
  Type elt = p.elt;
  Value h =
      ab.map(llvm::join(terms, ",") + "->" + p.all, operands,
             AdjointBuilder::termType(p.all, p.extents, elt),
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               SmallVector<Value> xs;
               for (Value x : a.drop_front())
                 xs.push_back(x.getType() == elt
                                  ? x
                                  : Value(arith::ExtFOp::create(b, l, elt, x)));
               Value partial = buildCombinerPartial(b, l, kind, xs, k);
               return arith::MulFOp::create(b, l, a[0], partial);
             });
  return ab.reduceAndBroadcast(h, p.all, tk, p.extents);
}

/// The gradient of v[vTerm] where out[O] = AGG_{vTerm \ O} v and g is out's
/// gradient.
static Value aggregationGradient(AdjointBuilder &ab, AggregationKind agg,
                                 Value v, StringRef vTerm, Value out,
                                 const EinsumParts &p, Value g) {
  Type elt = p.elt;
  RankedTensorType vType = AdjointBuilder::termType(vTerm, p.extents, elt);
  RankedTensorType outType = llvm::cast<RankedTensorType>(out.getType());
  std::string spec2 = (vTerm + "," + p.out + "->" + vTerm).str();
  auto isZero = [](OpBuilder &b, Location l, Value x) -> Value {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x,
                                 scalarConstant(b, l, x.getType(), 0.0));
  };
  auto indicator = [&](Value cond, OpBuilder &b, Location l) -> Value {
    return arith::SelectOp::create(b, l, cond, scalarConstant(b, l, elt, 1.0),
                                   scalarConstant(b, l, elt, 0.0));
  };
  if (agg == AggregationKind::max || agg == AggregationKind::min) {
    // The gradient goes to the elements equal to the extremum, split evenly.
    Value hit = ab.map(spec2, {v, out}, vType,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value eq = arith::CmpFOp::create(
                             b, l, arith::CmpFPredicate::OEQ, a[0], a[1]);
                         return indicator(eq, b, l);
                       });
    Value count = ab.einsum((vTerm + "->" + p.out).str(), CombinerKind::id,
                            {hit}, outType);
    return ab.map((vTerm + "," + p.out + "," + p.out + "->" + vTerm).str(),
                  {hit, g, count}, vType,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    Value share = arith::DivFOp::create(b, l, a[1], a[2]);
                    return arith::MulFOp::create(b, l, a[0], share);
                  });
  }
  assert(agg == AggregationKind::prod && "sum is handled by the caller");
  // d out / d v_u = product of the other elements: out / v_u without zeros;
  // with exactly one zero, the product of the non-zeros at the zero and 0
  // elsewhere; with two or more, 0 everywhere.
  Value nonZero = ab.map(
      "", {v}, vType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::SelectOp::create(b, l, isZero(b, l, a[0]),
                                       scalarConstant(b, l, elt, 1.0), a[0]);
      });
  Value zeroFlags = ab.map(
      "", {v}, vType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return indicator(isZero(b, l, a[0]), b, l);
      });
  std::string toOut = (vTerm + "->" + p.out).str();
  Value prodNonZero = ab.einsum(toOut, CombinerKind::id, {nonZero}, outType,
                                AggregationKind::prod);
  Value zeros = ab.einsum(toOut, CombinerKind::id, {zeroFlags}, outType);
  std::string o = p.out;
  return ab.map(
      (vTerm + "," + o + "," + o + "," + o + "->" + vTerm).str(),
      {v, g, prodNonZero, zeros}, vType,
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value x = a[0], grad = a[1], pnz = a[2], nz = a[3];
        Value zero = scalarConstant(b, l, elt, 0.0);
        Value one = scalarConstant(b, l, elt, 1.0);
        Value gp = arith::MulFOp::create(b, l, grad, pnz);
        Value noZero =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, nz, zero);
        Value oneZero =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, nz, one);
        Value atTheZero = arith::AndIOp::create(b, l, oneZero, isZero(b, l, x));
        Value elsewhere = arith::SelectOp::create(b, l, atTheZero, gp, zero);
        Value divided = arith::DivFOp::create(b, l, gp, x);
        return arith::SelectOp::create(b, l, noZero, divided, elsewhere);
      });
}

FailureOr<OperandGradients>
mlir::tra::autodiff::einsumAdjoint(AdjointBuilder &ab, EinsumOp op, Value g,
                                   ArrayRef<bool> needed) {
  EinsumParts p = getParts(op);
  ValueRange inputs = op.getInputs();
  OperandGradients grads(inputs.size());
  auto finish = [&](unsigned k, Value grad) {
    Type inElt =
        llvm::cast<RankedTensorType>(inputs[k].getType()).getElementType();
    grads[k] = ab.convert(grad, inElt);
  };
  bool reduces = p.out.size() != p.all.size();
  AggregationKind agg = op.getAggregation();
  if (!reduces || agg == AggregationKind::sum) {
    for (unsigned k = 0; k < inputs.size(); ++k)
      if (needed[k])
        finish(k,
               sumAggregationGradient(ab, inputs, p, op.getCombiner(), g, k));
    return grads;
  }
  // v[U] = C(inputs); out = AGG v. A one-input identity einsum whose input is
  // indexed by every index is its own v.
  Value in0 = inputs[0];
  bool inputIsV =
      inputs.size() == 1 && op.getCombiner() == CombinerKind::id &&
      p.terms[0].size() == p.all.size() &&
      llvm::cast<RankedTensorType>(in0.getType()).getElementType() == p.elt;
  std::string vTerm = inputIsV ? p.terms[0] : p.all;
  Value v = inputIsV
                ? in0
                : ab.einsum(llvm::join(p.terms, ",") + "->" + p.all,
                            op.getCombiner(), inputs,
                            AdjointBuilder::termType(p.all, p.extents, p.elt));
  Value dv = aggregationGradient(ab, agg, v, vTerm, op.getResult(), p, g);
  if (inputIsV) {
    if (needed[0])
      grads[0] = dv;
    return grads;
  }
  EinsumParts pv = p;
  pv.out = p.all;
  for (unsigned k = 0; k < inputs.size(); ++k)
    if (needed[k])
      finish(k,
             sumAggregationGradient(ab, inputs, pv, op.getCombiner(), dv, k));
  return grads;
}
