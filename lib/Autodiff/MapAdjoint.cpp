//===- MapAdjoint.cpp - The adjoint of tra.map ----------------------------===//
//
//   out[O] = f(in_0[T_0], ..., in_n[T_n])        (every T_k within O)
//
// d in_k[T_k] = sum_{O \ T_k} g[O] * df/dx_k(...): a new map whose body is the
// original body followed by its forward-mode derivative with respect to
// argument k (ScalarDerivative.cpp), times g; summed over the broadcast
// indices when input k was broadcast.
//
//===----------------------------------------------------------------------===//

#include "AdjointBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

FailureOr<OperandGradients>
mlir::tra::autodiff::mapAdjoint(AdjointBuilder &ab, MapOp op, Value g,
                                ArrayRef<bool> needed) {
  EinsumSpec spec = op.getParsedSpec();
  std::string out = spec.outputTerm();
  SmallVector<std::string> terms{out};
  IndexExtents extents;
  for (auto [c, n] : llvm::zip(out, op.getType().getShape()))
    extents[c] = n;
  for (unsigned i = 0; i < spec.getNumInputs(); ++i)
    terms.push_back(spec.inputTerm(i));
  std::string mapSpec = llvm::join(terms, ",") + "->" + out;
  RankedTensorType outType = op.getType();
  Block &body = op.getBody().front();

  SmallVector<Value> operands{g};
  llvm::append_range(operands, op.getInputs());
  OperandGradients grads(op.getInputs().size());
  OpBuilder &b = ab.builder();
  for (unsigned k = 0; k < grads.size(); ++k) {
    Type inElt = llvm::cast<RankedTensorType>(op.getInputs()[k].getType())
                     .getElementType();
    if (!needed[k] || !llvm::isa<FloatType>(inElt))
      continue;
    auto grad = MapOp::create(b, op.getLoc(), outType, operands, mapSpec);
    Block &block = grad.getBody().front();
    IRMapping mapping;
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      mapping.map(arg, block.getArgument(i + 1));
    FailureOr<Value> tangent;
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&block);
      tangent = buildBodyTangent(b, body, mapping, k);
      if (succeeded(tangent) && *tangent) {
        Value r = arith::MulFOp::create(b, op.getLoc(), block.getArgument(0),
                                        *tangent);
        YieldOp::create(b, op.getLoc(), r);
      }
    }
    if (failed(tangent) || !*tangent) {
      grad.erase(); // the derivative is zero, or undefined (diagnosed)
      if (failed(tangent))
        return failure();
      continue;
    }
    Value r = ab.reduceAndBroadcast(grad, out, terms[k + 1], extents);
    grads[k] = ab.convert(r, inElt);
  }
  return grads;
}
