//===- Pipeline.cpp - The planning pipeline -------------------------------===//

#include "tra/Optimizer/Pipeline.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Optimizer/Passes.h"

#include "tra/Hardware/Hardware.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

/// Step 1: every call inlined, the functions left unused removed.
static void addInliningPasses(OpPassManager &pm) {
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
}

llvm::Expected<PlanSummary> plan::planFunction(func::FuncOp func,
                                               const CostModel &model,
                                               const PlannerOptions &options) {
  if (model.getNumDevices() > kMaxPlannedDevices)
    return llvm::createStringError(
        "the hardware '" + model.getHardware().getName() + "' has " +
        llvm::Twine(model.getNumDevices()) +
        " devices; tra plans for at most " + llvm::Twine(kMaxPlannedDevices));
  auto summary = assignPartitions(func, model, options);
  if (!summary)
    return summary.takeError();
  if (failed(insertRepartitions(func, model)) || failed(verifyPlan(func)))
    return llvm::createStringError("internal error: @" + func.getSymName() +
                                   ": the plan is inconsistent");
  return summary;
}

/// Checks a function planned already: made for `numDevices` devices and
/// consistent.
static llvm::Error checkGivenPlan(func::FuncOp func, IntegerAttr devices,
                                  unsigned numDevices) {
  if (devices.getInt() != int64_t(numDevices))
    return llvm::createStringError(
        "@" + func.getSymName() + " is planned for " +
        llvm::Twine(devices.getInt()) + " devices, the hardware has " +
        llvm::Twine(numDevices));
  if (failed(verifyPlan(func)))
    return llvm::createStringError("@" + func.getSymName() +
                                   ": the given plan is inconsistent");
  return llvm::Error::success();
}

llvm::Expected<llvm::StringMap<PlanSummary>>
plan::planModule(ModuleOp module,
                 const ::tra::hw::HardwareDescription &hardware,
                 const PlanOptions &options) {
  MLIRContext *context = module.getContext();
  DialectRegistry registry;
  func::registerInlinerExtension(registry);
  context->appendDialectRegistry(registry);
  context->getOrLoadDialect<PlanDialect>();

  PassManager pm(context);
  addInliningPasses(pm);
  if (failed(pm.run(module)))
    return llvm::createStringError("cannot inline the model");

  CostModel model(hardware);
  llvm::StringMap<PlanSummary> summaries;
  unsigned planned = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration() ||
        (!options.entry.empty() && func.getSymName() != options.entry))
      continue;
    ++planned;
    // The tra ops verify their own tensors; the signature is the function's.
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (failed(verifyPlannableTensorType(func, type,
                                           "argument #" + std::to_string(i))))
        return llvm::createStringError("@" + func.getSymName() +
                                       ": cannot plan its arguments");
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      if (failed(verifyPlannableTensorType(func, type,
                                           "result #" + std::to_string(i))))
        return llvm::createStringError("@" + func.getSymName() +
                                       ": cannot plan its results");
    if (auto devices = func->getAttrOfType<IntegerAttr>(
            PlanDialect::kNumDevicesAttrName)) {
      if (llvm::Error error =
              checkGivenPlan(func, devices, hardware.numDevices()))
        return std::move(error);
      continue;
    }
    auto summary = planFunction(func, model, options.planner);
    if (!summary)
      return summary.takeError();
    summaries[func.getSymName()] = *summary;
  }
  if (!planned)
    return llvm::createStringError(options.entry.empty()
                                       ? "no function with a body to plan"
                                       : "no function @" + options.entry);
  if (failed(verify(module)))
    return llvm::createStringError(
        "internal error: the planned module does not verify");
  return summaries;
}

/// Removes every tra_plan attribute from `module`'s functions, their
/// arguments and their operations, except the memory tier of an argument
/// (`tra_plan.tier`), which one device's program honours too
/// (tra-fetch-tiers).
static void discardPlan(ModuleOp module) {
  auto isPlan = [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("tra_plan.") &&
           attr.getName() != PlanDialect::kTierAttrName;
  };
  auto strip = [&](Operation *op) {
    SmallVector<StringAttr> names;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isPlan(attr))
        names.push_back(attr.getName());
    for (StringAttr name : names)
      op->removeDiscardableAttr(name);
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    strip(func);
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      SmallVector<StringAttr> names;
      for (NamedAttribute attr :
           mlir::function_interface_impl::getArgAttrs(func, i))
        if (isPlan(attr))
          names.push_back(attr.getName());
      for (StringAttr name : names)
        func.removeArgAttr(i, name);
    }
    func.walk([&](Operation *op) {
      if (op != func)
        strip(op);
    });
  }
}

void plan::takeTiers(ModuleOp module, ModuleOp planned) {
  for (auto func : planned.getOps<func::FuncOp>()) {
    auto target = module.lookupSymbol<func::FuncOp>(func.getSymName());
    if (!target || target.getNumArguments() != func.getNumArguments())
      continue;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto tier = func.getArgAttr(i, PlanDialect::kTierAttrName))
        target.setArgAttr(i, PlanDialect::kTierAttrName, tier);
  }
}

llvm::Error
plan::takeRecomputation(ModuleOp module, ModuleOp planned,
                        const llvm::StringMap<PlanSummary> &summaries) {
  if (llvm::none_of(summaries,
                    [](const auto &entry) { return entry.second.recomputed; }))
    return llvm::Error::success();
  // One device: no moves to undo, only the plan's attributes.
  bool moves = false;
  planned->walk([&](Operation *op) {
    moves |= op->getDialect() && op->getDialect()->getNamespace() ==
                                     PlanDialect::getDialectNamespace();
  });
  if (moves)
    return llvm::createStringError(
        "internal error: a plan for one device moves tiles");
  discardPlan(planned);
  module.getBodyRegion().takeBody(planned.getBodyRegion());
  return llvm::Error::success();
}

llvm::Expected<llvm::StringMap<PlanSummary>>
plan::planForOneDevice(ModuleOp module,
                       const ::tra::hw::HardwareDescription &hardware,
                       const PlanOptions &options) {
  OwningOpRef<ModuleOp> planned = module.clone();
  auto summaries = planModule(*planned, hardware, options);
  if (!summaries)
    return summaries.takeError();
  if (llvm::Error error = takeRecomputation(module, *planned, *summaries))
    return std::move(error);
  // Without recomputation the module is still unplanned: it gets the
  // tiers of the plan (with it, the plan's body and tiers were taken).
  takeTiers(module, *planned);
  return summaries;
}

void plan::buildPlanningPipeline(OpPassManager &pm,
                                 const PlanPipelineOptions &options) {
  addInliningPasses(pm);
  DecomposeOptions decompose;
  decompose.hw = options.hw;
  decompose.beam = options.beam;
  decompose.maxSplitIndices = options.maxSplitIndices;
  pm.addPass(createDecompose(decompose));
}

void plan::registerPlanningPipeline() {
  PassPipelineRegistration<PlanPipelineOptions>(
      "tra-plan-pipeline",
      "Plan a model-level tra module for a hardware description: inline, "
      "symbol-dce, tra-decompose (assign partitions, insert repartitions, "
      "verify the plan)",
      buildPlanningPipeline);
}
