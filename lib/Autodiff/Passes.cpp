//===- Passes.cpp - The tra-autodiff pass ---------------------------------===//

#include "tra/Autodiff/Passes.h"
#include "tra/Autodiff/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "tra/Autodiff/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;

namespace {
struct AutodiffPass : public tra::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func;
    if (!entry.empty()) {
      func = module.lookupSymbol<func::FuncOp>(entry);
      if (!func) {
        module.emitError() << "tra-autodiff: no function @" << entry;
        return signalPassFailure();
      }
    } else {
      for (auto f : module.getOps<func::FuncOp>()) {
        if (f.isExternal())
          continue;
        if (func) {
          module.emitError() << "tra-autodiff: the module has several "
                                "functions; name the loss with entry=NAME";
          return signalPassFailure();
        }
        func = f;
      }
      if (!func) {
        module.emitError() << "tra-autodiff: the module has no function "
                              "with a body";
        return signalPassFailure();
      }
    }
    GradientOptions options;
    options.wrt.assign(wrt.begin(), wrt.end());
    options.name = gradName;
    if (failed(buildGradientFunction(func, options)))
      signalPassFailure();
  }
};
} // namespace
