//===- TrainStep.cpp - A whole training step as one tra function ----------===//
//
// The step is the gradient function's body (forward and backward) followed
// by the global gradient norm, the clipping coefficient and, per parameter,
// the optimizer's update as tra.maps over the parameter, its gradient and
// its state (Optimizers.cpp). Nothing here is specific to a model.
//
//===----------------------------------------------------------------------===//

#include "tra/Autodiff/TrainStep.h"
#include "AdjointBuilder.h"
#include "Optimizers.h"

#include "tra/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

std::optional<OptimizerKind> mlir::tra::parseOptimizerKind(StringRef name) {
  if (name == "sgd")
    return OptimizerKind::sgd;
  if (name == "adamw")
    return OptimizerKind::adamw;
  return std::nullopt;
}

SmallVector<std::string>
mlir::tra::optimizerStateNames(const OptimizerOptions &options,
                               StringRef param) {
  if (options.kind == OptimizerKind::adamw)
    return {(param + ".adam_m").str(), (param + ".adam_v").str()};
  if (options.momentum != 0.0)
    return {(param + ".momentum").str()};
  return {};
}

std::string mlir::tra::updatedName(StringRef name) {
  return (name + "_out").str();
}

/// The letters "abc..." for a tensor of `rank`.
static std::string letters(int64_t rank) {
  std::string s;
  for (int64_t i = 0; i < rank; ++i)
    s.push_back(char('a' + i));
  return s;
}

/// sqrt(sum over `grads` of sum g^2) as a tensor<f32> (f64 when the
/// gradients are f64).
static Value globalNorm(AdjointBuilder &ab, ArrayRef<Value> grads,
                        Type scalarElt) {
  auto scalar = RankedTensorType::get({}, scalarElt);
  Value total;
  for (Value g : grads) {
    auto type = llvm::cast<RankedTensorType>(g.getType());
    Value ss = ab.einsum(letters(type.getRank()) + "->", CombinerKind::square,
                         {ab.convert(g, scalarElt)}, scalar);
    total = total ? ab.add(total, ss) : ss;
  }
  return ab.map("", {total}, scalar,
                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                  return math::SqrtOp::create(b, l, a[0]);
                });
}

FailureOr<func::FuncOp>
mlir::tra::buildTrainStep(func::FuncOp loss, const GradientOptions &gradient,
                          const OptimizerOptions &optimizer, StringRef name) {
  FailureOr<SmallVector<unsigned>> params =
      resolveGradientArguments(loss, gradient);
  if (failed(params))
    return failure();
  auto module = loss->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return loss.emitError() << "tra-train-step: the module already has a "
                               "symbol named @"
                            << name,
           failure();
  for (unsigned i : *params) {
    Type elt = llvm::cast<RankedTensorType>(loss.getArgumentTypes()[i])
                   .getElementType();
    if (!elt.isF32() && !elt.isF64())
      return loss.emitError()
                 << "tra-train-step: parameter '" << getArgumentName(loss, i)
                 << "' is " << elt
                 << "; a training step keeps its parameters in f32 (or f64)",
             failure();
  }

  // The gradient function, copied into the step and then dropped.
  GradientOptions names;
  names.name = ("__tra_train_step_gradient_of_" + loss.getName()).str();
  for (unsigned i : *params)
    names.wrt.push_back(getArgumentName(loss, i));
  FailureOr<func::FuncOp> grad = buildGradientFunction(loss, names);
  if (failed(grad))
    return failure();

  OpBuilder b(loss->getContext());
  Location loc = loss.getLoc();
  Type f32 = b.getF32Type();
  auto scalarF32 = RankedTensorType::get({}, f32);
  // The gradient norm in the widest parameter type.
  Type normElt = f32;
  for (unsigned i : *params)
    if (llvm::cast<RankedTensorType>(loss.getArgumentTypes()[i])
            .getElementType()
            .isF64())
      normElt = b.getF64Type();
  SmallVector<Type> argTypes(loss.getArgumentTypes());
  SmallVector<std::string> argNames;
  for (unsigned i = 0; i < loss.getNumArguments(); ++i)
    argNames.push_back(getArgumentName(loss, i));
  SmallVector<Type> resultTypes{loss.getResultTypes()[0],
                                RankedTensorType::get({}, normElt)};
  SmallVector<std::string> resultNames{getResultName(loss, 0), "grad_norm"};
  // The argument each result is passed back as in the next step.
  SmallVector<std::optional<unsigned>> carries(2);
  // Per parameter: its state arguments' positions.
  SmallVector<SmallVector<unsigned>> stateArgs;
  for (unsigned i : *params) {
    resultTypes.push_back(argTypes[i]);
    resultNames.push_back(updatedName(argNames[i]));
    carries.push_back(i);
    stateArgs.emplace_back();
  }
  for (auto [k, i] : llvm::enumerate(*params)) {
    for (const std::string &state :
         optimizerStateNames(optimizer, argNames[i])) {
      stateArgs[k].push_back(argTypes.size());
      carries.push_back(argTypes.size());
      argTypes.push_back(loss.getArgumentTypes()[i]);
      argNames.push_back(state);
      resultTypes.push_back(loss.getArgumentTypes()[i]);
      resultNames.push_back(updatedName(state));
    }
  }
  unsigned lrArg = argTypes.size();
  argTypes.push_back(scalarF32);
  argNames.push_back("lr");
  std::optional<unsigned> stepArg;
  if (optimizer.kind == OptimizerKind::adamw) {
    stepArg = argTypes.size();
    argTypes.push_back(scalarF32);
    argNames.push_back("step");
  }

  b.setInsertionPointAfter(loss);
  auto step = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType(argTypes, resultTypes));
  step.setVisibility(loss.getVisibility());
  for (auto [i, n] : llvm::enumerate(argNames))
    step.setArgAttr(i, "tra.name", b.getStringAttr(n));
  // tra.carries tells the planner that the next step reads the result as
  // that argument (PlanProblem.h): the update should write it in the
  // argument's tiles.
  for (auto [i, n] : llvm::enumerate(resultNames)) {
    step.setResultAttr(i, "tra.name", b.getStringAttr(n));
    if (carries[i])
      step.setResultAttr(i, "tra.carries", b.getI64IntegerAttr(*carries[i]));
  }
  Block *body = step.addEntryBlock();

  // Forward and backward.
  IRMapping mapping;
  Block &gradBody = grad->getBody().front();
  for (unsigned i = 0; i < loss.getNumArguments(); ++i)
    mapping.map(gradBody.getArgument(i), body->getArgument(i));
  b.setInsertionPointToEnd(body);
  for (Operation &op : gradBody.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> gradResults;
  for (Value v : gradBody.getTerminator()->getOperands())
    gradResults.push_back(mapping.lookup(v));
  grad->erase();

  AdjointBuilder ab(b, loc);
  SmallVector<Value> grads(gradResults.begin() + 1, gradResults.end());
  Value norm = globalNorm(ab, grads, normElt);
  Value coef;
  if (optimizer.clipNorm > 0.0)
    coef = clipCoefficient(ab, norm, optimizer.clipNorm);
  SmallVector<Value> results{gradResults[0], norm};
  SmallVector<Value> stateResults;
  for (auto [k, i] : llvm::enumerate(*params)) {
    SmallVector<Value> state;
    for (unsigned s : stateArgs[k])
      state.push_back(body->getArgument(s));
    ParameterUpdate update =
        updateParameter(ab, optimizer, body->getArgument(i), grads[k], state,
                        coef, body->getArgument(lrArg),
                        stepArg ? body->getArgument(*stepArg) : Value());
    results.push_back(update.param);
    llvm::append_range(stateResults, update.state);
  }
  llvm::append_range(results, stateResults);
  func::ReturnOp::create(b, loc, results);
  return step;
}
