//===- Passes.cpp - Decomposition optimizer passes ------------------------===//

#include "tra/Optimizer/Passes.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/Planner.h"

#include "tra/Hardware/Hardware.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_ASSIGNPARTITIONS
#define GEN_PASS_DEF_INSERTREPARTITIONS
#define GEN_PASS_DEF_DECOMPOSE
#define GEN_PASS_DEF_VERIFYPLAN
#include "tra/Optimizer/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

/// Loads the hardware named by a pass option, or emits an error on `module`.
static std::optional<CostModel>
loadCostModel(ModuleOp module, StringRef passName, StringRef spec) {
  auto hardware = ::tra::hw::loadHardware(spec);
  if (!hardware) {
    module.emitError() << passName << ": "
                       << llvm::toString(hardware.takeError());
    return std::nullopt;
  }
  return CostModel(*hardware);
}

/// Runs `plan` (assignPartitions or planFunction) on every function with a
/// body; false after emitting its errors at the functions.
static bool
planAll(ModuleOp module,
        llvm::function_ref<llvm::Expected<PlanSummary>(func::FuncOp)> plan) {
  bool ok = true;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    auto summary = plan(func);
    if (!summary) {
      func.emitError() << llvm::toString(summary.takeError());
      ok = false;
    }
  }
  return ok;
}

/// Inserts the moves of every function; false after emitting an error.
static bool insertAll(ModuleOp module, const CostModel &model) {
  bool ok = true;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isDeclaration())
      ok &= succeeded(insertRepartitions(func, model));
  return ok;
}

namespace {
struct AssignPartitionsPass
    : public mlir::tra::impl::AssignPartitionsBase<AssignPartitionsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<CostModel> model =
        loadCostModel(getOperation(), getArgument(), hw);
    PlannerOptions options;
    options.beam = beam;
    options.choices.maxSplitIndices = maxSplitIndices;
    options.recompute = recompute;
    options.stream = stream;
    options.pipeline = pipeline;
    options.choices.uneven = uneven;
    if (!model || !planAll(getOperation(), [&](func::FuncOp func) {
          return assignPartitions(func, *model, options);
        }))
      signalPassFailure();
  }
};

struct InsertRepartitionsPass
    : public mlir::tra::impl::InsertRepartitionsBase<InsertRepartitionsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<CostModel> model =
        loadCostModel(getOperation(), getArgument(), hw);
    if (!model || !insertAll(getOperation(), *model))
      signalPassFailure();
  }
};

struct DecomposePass : public mlir::tra::impl::DecomposeBase<DecomposePass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<CostModel> model =
        loadCostModel(getOperation(), getArgument(), hw);
    PlannerOptions options;
    options.beam = beam;
    options.choices.maxSplitIndices = maxSplitIndices;
    options.recompute = recompute;
    options.stream = stream;
    options.pipeline = pipeline;
    options.choices.uneven = uneven;
    if (!model || !planAll(getOperation(), [&](func::FuncOp func) {
          return planFunction(func, *model, options);
        }))
      signalPassFailure();
  }
};

struct VerifyPlanPass : public mlir::tra::impl::VerifyPlanBase<VerifyPlanPass> {
  using Base::Base;
  void runOnOperation() override {
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isDeclaration())
        ok &= succeeded(verifyPlan(func));
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
