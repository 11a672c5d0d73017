//===- Autodiff.cpp - Reverse-mode differentiation of tra functions -------===//
//
// The gradient function is the original body (the forward pass) followed by
// the reverse sweep: walking the operations backwards, each active
// operation's adjoint rule turns the gradient of its result into gradients of
// its operands, which are summed where a value has several uses. Only active
// values get gradients: those that depend on a chosen argument and that the
// loss depends on.
//
//===----------------------------------------------------------------------===//

#include "tra/Autodiff/Autodiff.h"
#include "AdjointBuilder.h"

#include "tra/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

std::string mlir::tra::gradientResultName(StringRef argName) {
  return ("grad_" + argName).str();
}

static bool isFloatTensor(Type t) {
  auto tt = llvm::dyn_cast<RankedTensorType>(t);
  return tt && llvm::isa<FloatType>(tt.getElementType());
}

FailureOr<SmallVector<unsigned>>
mlir::tra::resolveGradientArguments(func::FuncOp func,
                                    const GradientOptions &options) {
  SmallVector<unsigned> wrt;
  unsigned n = func.getNumArguments();
  if (options.wrt.empty()) {
    for (unsigned i = 0; i < n; ++i)
      if (func.getArgAttr(i, "tra.wrt"))
        wrt.push_back(i);
    if (wrt.empty())
      for (unsigned i = 0; i < n; ++i)
        if (isFloatTensor(func.getArgumentTypes()[i]))
          wrt.push_back(i);
    if (wrt.empty())
      return func.emitError() << "tra-autodiff: @" << func.getName()
                              << " has no floating-point argument to "
                                 "differentiate with respect to",
             failure();
    return wrt;
  }
  for (const std::string &name : options.wrt) {
    std::optional<unsigned> found;
    for (unsigned i = 0; i < n; ++i)
      if (getArgumentName(func, i) == name)
        found = i;
    if (!found) {
      SmallVector<std::string> names;
      for (unsigned i = 0; i < n; ++i)
        names.push_back(getArgumentName(func, i));
      return func.emitError()
                 << "tra-autodiff: @" << func.getName()
                 << " has no argument named '" << name
                 << "' (arguments: " << llvm::join(names, ", ") << ")",
             failure();
    }
    if (!isFloatTensor(func.getArgumentTypes()[*found]))
      return func.emitError() << "tra-autodiff: argument '" << name << "' of @"
                              << func.getName() << " has type "
                              << func.getArgumentTypes()[*found]
                              << "; only floating-point arguments have "
                                 "gradients",
             failure();
    if (llvm::is_contained(wrt, *found))
      return func.emitError()
                 << "tra-autodiff: argument '" << name << "' is named twice",
             failure();
    wrt.push_back(*found);
  }
  llvm::sort(wrt);
  return wrt;
}

/// Checks what the reverse sweep relies on: one block, one floating-point
/// result of one element, no calls.
static LogicalResult checkDifferentiable(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError()
           << "tra-autodiff: @" << func.getName() << " has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "tra-autodiff: @" << func.getName() << " has more than one block";
  if (func.getNumResults() != 1)
    return func.emitError()
           << "tra-autodiff: @" << func.getName() << " returns "
           << func.getNumResults() << " values; a loss function returns one";
  auto lossType = llvm::dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
  if (!lossType || !llvm::isa<FloatType>(lossType.getElementType()) ||
      lossType.getNumElements() != 1)
    return func.emitError()
           << "tra-autodiff: the loss of @" << func.getName() << " has type "
           << func.getResultTypes()[0]
           << "; a loss is a floating-point tensor of one element";
  WalkResult walk = func.walk([](Operation *op) {
    if (llvm::isa<CallOpInterface>(op)) {
      op->emitOpError() << "is a call: tra-autodiff differentiates one "
                           "function; inline the callee first (--inline)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// The values of `body` that depend on `seeds` and that `loss` depends on.
static llvm::DenseSet<Value> activeValues(Block &body, ArrayRef<Value> seeds,
                                          Value loss) {
  llvm::DenseSet<Value> varied(seeds.begin(), seeds.end());
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value r : op.getResults())
        if (isFloatTensor(r.getType()))
          varied.insert(r);
  llvm::DenseSet<Value> useful{loss};
  for (Operation &op : llvm::reverse(body))
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value v : op.getOperands())
        useful.insert(v);
  llvm::DenseSet<Value> active;
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
  return active;
}

/// The gradients of `op`'s operands given its result's gradient `g`.
static FailureOr<OperandGradients> adjointOf(AdjointBuilder &ab, Operation *op,
                                             Value g, ArrayRef<bool> needed) {
  if (auto einsum = llvm::dyn_cast<EinsumOp>(op))
    return einsumAdjoint(ab, einsum, g, needed);
  if (auto map = llvm::dyn_cast<MapOp>(op))
    return mapAdjoint(ab, map, g, needed);
  return dataMovementAdjoint(ab, op, g, needed);
}

FailureOr<func::FuncOp>
mlir::tra::buildGradientFunction(func::FuncOp func,
                                 const GradientOptions &options) {
  FailureOr<SmallVector<unsigned>> wrt =
      resolveGradientArguments(func, options);
  if (failed(wrt) || failed(checkDifferentiable(func)))
    return failure();
  auto module = func->getParentOfType<ModuleOp>();
  std::string name =
      options.name.empty() ? (func.getName() + "_grad").str() : options.name;
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return func.emitError() << "tra-autodiff: the module already has a "
                               "symbol named @"
                            << name,
           failure();

  // The new function: the same arguments; the loss and the gradients.
  SmallVector<Type> resultTypes{func.getResultTypes()[0]};
  for (unsigned i : *wrt)
    resultTypes.push_back(func.getArgumentTypes()[i]);
  OpBuilder b(func->getContext());
  b.setInsertionPointAfter(func);
  auto grad = func::FuncOp::create(
      b, func.getLoc(), name,
      b.getFunctionType(func.getArgumentTypes(), resultTypes));
  grad.setVisibility(func.getVisibility());
  if (ArrayAttr argAttrs = func.getAllArgAttrs())
    grad.setAllArgAttrs(argAttrs);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    grad.removeArgAttr(i, "tra.wrt");
  grad.setResultAttr(0, "tra.name", b.getStringAttr(getResultName(func, 0)));
  for (auto [r, i] : llvm::enumerate(*wrt))
    grad.setResultAttr(
        r + 1, "tra.name",
        b.getStringAttr(gradientResultName(getArgumentName(func, i))));
  IRMapping mapping;
  func.getBody().cloneInto(&grad.getBody(), mapping);
  Block &body = grad.getBody().front();
  auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  SmallVector<Value> seeds;
  for (unsigned i : *wrt)
    seeds.push_back(body.getArgument(i));
  llvm::DenseSet<Value> active = activeValues(body, seeds, loss);

  // The reverse sweep, inserting before the return.
  b.setInsertionPoint(ret);
  AdjointBuilder ab(b, ret.getLoc());
  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value v, Value g) {
    Value &slot = adjoint[v];
    slot = slot ? ab.add(slot, g) : g;
  };
  if (active.contains(loss))
    adjoint[loss] = ab.fill(llvm::cast<RankedTensorType>(loss.getType()), 1.0);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value g = adjoint.lookup(op->getResult(0));
    if (!g)
      continue;
    SmallVector<bool> needed;
    for (Value v : op->getOperands())
      needed.push_back(active.contains(v));
    if (!llvm::is_contained(needed, true))
      continue;
    ab.setLocation(op->getLoc());
    FailureOr<OperandGradients> grads = adjointOf(ab, op, g, needed);
    if (failed(grads)) {
      grad.erase();
      return failure();
    }
    for (auto [v, dv] : llvm::zip(op->getOperands(), *grads))
      if (dv && active.contains(v))
        accumulate(v, dv);
  }

  ab.setLocation(ret.getLoc());
  SmallVector<Value> results{loss};
  for (unsigned i : *wrt) {
    Value arg = body.getArgument(i);
    Value g = adjoint.lookup(arg);
    results.push_back(
        g ? g : ab.fill(llvm::cast<RankedTensorType>(arg.getType()), 0.0));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  return grad;
}
