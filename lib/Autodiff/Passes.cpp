//===- Passes.cpp - The tra-autodiff pass ---------------------------------===//

#include "tra/Autodiff/Passes.h"
#include "tra/Autodiff/Autodiff.h"
#include "tra/Autodiff/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_AUTODIFFPASS
#define GEN_PASS_DEF_TRAINSTEPPASS
#include "tra/Autodiff/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;

/// The function named `entry`, or the module's only function with a body;
/// a null function after a diagnostic otherwise.
static func::FuncOp findEntry(ModuleOp module, StringRef entry,
                              StringRef pass) {
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func)
      module.emitError() << pass << ": no function @" << entry;
    return func;
  }
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    if (func) {
      module.emitError() << pass
                         << ": the module has several functions; name the "
                            "loss with entry=NAME";
      return func::FuncOp();
    }
    func = f;
  }
  if (!func)
    module.emitError() << pass << ": the module has no function with a body";
  return func;
}

namespace {
struct AutodiffPass : public tra::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;

  void runOnOperation() override {
    func::FuncOp func = findEntry(getOperation(), entry, "tra-autodiff");
    if (!func)
      return signalPassFailure();
    GradientOptions options;
    options.wrt.assign(wrt.begin(), wrt.end());
    options.name = gradName;
    if (failed(buildGradientFunction(func, options)))
      signalPassFailure();
  }
};

struct TrainStepPass : public tra::impl::TrainStepPassBase<TrainStepPass> {
  using TrainStepPassBase::TrainStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = findEntry(module, entry, "tra-train-step");
    if (!func)
      return signalPassFailure();
    OptimizerOptions opt;
    std::optional<OptimizerKind> kind = parseOptimizerKind(optimizer);
    if (!kind) {
      module.emitError() << "tra-train-step: unknown optimizer '" << optimizer
                         << "' (sgd or adamw)";
      return signalPassFailure();
    }
    opt.kind = *kind;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.eps = eps;
    opt.weightDecay = weightDecay;
    opt.momentum = momentum;
    opt.nesterov = nesterov;
    opt.clipNorm = clipNorm;
    GradientOptions gradient;
    gradient.wrt.assign(wrt.begin(), wrt.end());
    if (failed(buildTrainStep(func, gradient, opt, stepName)))
      signalPassFailure();
  }
};
} // namespace
