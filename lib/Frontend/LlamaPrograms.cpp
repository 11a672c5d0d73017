//===- LlamaPrograms.cpp - Compiled step programs of a LLaMA model --------===//

#include "tra/Frontend/LlamaPrograms.h"

#include "tra/Frontend/Llama.h"
#include "tra/Frontend/LlamaTraining.h"
#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/Report.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::tra;

/// The verified model of one step.
static llvm::Expected<OwningOpRef<ModuleOp>>
buildStep(MLIRContext &context, const ::tra::rt::LlamaParams &params,
          int64_t seq, const LlamaWeightDTypes &weightDTypes = {},
          bool lastRowLogits = false) {
  if (seq < 1 || seq > params.maxSeqLen)
    return llvm::createStringError("a step of " + std::to_string(seq) +
                                   " tokens does not fit the KV cache of " +
                                   std::to_string(params.maxSeqLen) +
                                   " positions");
  OwningOpRef<ModuleOp> module =
      buildLlamaModule(&context, params, seq, weightDTypes, lastRowLogits);
  if (failed(verify(*module)))
    return llvm::createStringError(
        "internal error: the generated model does not verify");
  return module;
}

/// The code generation options of a step on `threads` threads of
/// `hardware`'s first device (its parallel costs when it is a CPU; none
/// known without a description).
static CodegenOptions
stepOptions(int64_t threads, const ::tra::hw::HardwareDescription *hardware,
            bool cuda = false) {
  CodegenOptions options;
  options.entry = "forward";
  options.numThreads = threads;
  options.profile = false;
  options.cuda = cuda;
  if (hardware && hardware->numDevices() > 0)
    options.parallelCosts = hardware->getDevice(0).getParallelCosts();
  return options;
}

/// "@forward (1 token per step) planned for H": how the notes on a plan of
/// the step start.
static std::string plannedStep(int64_t seq,
                               const ::tra::hw::HardwareDescription &hardware) {
  return "@forward (" + std::to_string(seq) +
         (seq == 1 ? " token" : " tokens") + " per step) planned for " +
         hardware.getName().str();
}

/// Notes the weights a plan of @forward keeps in the memory tiers.
static void noteStreaming(ModuleOp planned,
                          const ::tra::hw::HardwareDescription &hardware,
                          const plan::PlanSummary &summary, int64_t seq,
                          llvm::raw_ostream &notes) {
  auto func = planned.lookupSymbol<func::FuncOp>("forward");
  if (!func || !summary.streamed)
    return;
  plan::CostModel model(hardware);
  plan::PlanReport report = plan::analyzePlan(func, model);
  double most = 0;
  for (double bytes : report.memory.streamed)
    most = std::max(most, bytes);
  notes << plannedStep(seq, hardware) << ": " << summary.streamed
        << " weights ("
        << plan::formatBytes(report.hostBytes + report.diskBytes)
        << ") live in its memory tiers, streamed each step (estimated "
        << plan::formatSeconds(report.getStepTime()) << " per step, "
        << int64_t(most) << " bytes to the busiest device)\n";
}

/// Notes the pipeline stages of a plan of @forward.
static void notePipeline(const ::tra::hw::HardwareDescription &hardware,
                         const plan::PlanSummary &summary, int64_t seq,
                         llvm::raw_ostream &notes) {
  if (summary.stages.empty())
    return;
  notes << plannedStep(seq, hardware) << " in " << summary.stages.size()
        << " pipeline stages:";
  for (auto [i, stage] : llvm::enumerate(summary.stages))
    notes << (i ? "; " : " ") << "devices " << stage.getDevicesText();
  notes << "\n";
}

llvm::Expected<CompiledProgram> mlir::tra::compileLlamaStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t seq,
    int64_t threads, StringRef cacheDirectory, StringRef keyExtra,
    llvm::raw_ostream &notes, bool cuda, const LlamaWeightDTypes &weightDTypes,
    bool lastRowLogits, const ::tra::hw::HardwareDescription *hardware) {
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildStep(context, params, seq, weightDTypes, lastRowLogits);
  if (!module)
    return module.takeError();
  if (hardware) {
    // The memory check of the plan; one device compiles the whole step.
    OwningOpRef<ModuleOp> planned = (*module)->clone();
    plan::PlanOptions planOptions;
    planOptions.entry = "forward";
    llvm::Expected<llvm::StringMap<plan::PlanSummary>> summaries =
        plan::planModule(*planned, *hardware, planOptions);
    if (!summaries)
      return llvm::createStringError("cannot plan the model for " +
                                     hardware->getName() + ": " +
                                     llvm::toString(summaries.takeError()));
    noteStreaming(*planned, *hardware, (*summaries)["forward"], seq, notes);
    plan::takeTiers(**module, *planned);
  }
  return loadOrCompileProgram(**module, stepOptions(threads, hardware, cuda),
                              cacheDirectory, keyExtra, notes);
}

llvm::Expected<CachedLibrary> mlir::tra::compileLlamaDistributedStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t seq,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, StringRef scratchDirectory,
    llvm::raw_ostream &notes, bool cuda, const LlamaWeightDTypes &weightDTypes,
    bool lastRowLogits) {
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildStep(context, params, seq, weightDTypes, lastRowLogits);
  if (!module)
    return module.takeError();
  plan::PlanOptions planOptions;
  planOptions.entry = "forward";
  auto planned = plan::planModule(**module, hardware, planOptions);
  if (!planned)
    return llvm::createStringError("cannot plan the model for " +
                                   hardware.getName() + ": " +
                                   llvm::toString(planned.takeError()));
  noteStreaming(**module, hardware, (*planned)["forward"], seq, notes);
  notePipeline(hardware, (*planned)["forward"], seq, notes);
  llvm::Expected<CachedLibrary> library = findOrCompileDistributedLibrary(
      **module, stepOptions(threads, &hardware, cuda), cacheDirectory,
      hardware.toJSONText(), scratchDirectory, notes);
  if (!library)
    return llvm::createStringError(
        "code generation for " + hardware.getName() +
        " failed: " + llvm::toString(library.takeError()));
  return library;
}

/// The verified module whose @train_step is the whole training step of
/// `params` over `batch` sequences of `seq` tokens with `optimizer`.
static llvm::Expected<OwningOpRef<ModuleOp>>
buildTrainStepModule(MLIRContext &context, const ::tra::rt::LlamaParams &params,
                     int64_t batch, int64_t seq,
                     const OptimizerOptions &optimizer) {
  if (seq < 1 || seq > params.maxSeqLen)
    return llvm::createStringError(
        "a training sequence of " + std::to_string(seq) +
        " tokens does not fit the model's max_seq_len " +
        std::to_string(params.maxSeqLen));
  if (batch < 1)
    return llvm::createStringError("the batch size must be at least 1");
  OwningOpRef<ModuleOp> module =
      buildLlamaTrainingModule(&context, params, batch, seq);
  auto loss = module->lookupSymbol<func::FuncOp>("loss");
  std::string diagnostics;
  FailureOr<func::FuncOp> step;
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    step = buildTrainStep(loss, GradientOptions(), optimizer, "train_step");
  }
  if (failed(step))
    return llvm::createStringError("cannot build the training step: " +
                                   diagnostics);
  loss.erase(); // the step holds its forward pass
  if (failed(verify(*module)))
    return llvm::createStringError(
        "internal error: the training step does not verify");
  return module;
}

/// Plans the training step of `module` for `hardware` (for one device, a
/// memory check that may recompute activations: plan::planForOneDevice),
/// prints the EXPLAIN report to `explain` when given, and notes the plan's
/// estimated step time and largest per-device memory.
static llvm::Error planTrainStep(ModuleOp module,
                                 const ::tra::hw::HardwareDescription &hardware,
                                 llvm::raw_ostream &notes,
                                 llvm::raw_ostream *explain) {
  plan::PlanOptions planOptions;
  planOptions.entry = "train_step";
  bool oneDevice = hardware.numDevices() == 1;
  // One device: the copy planned is the one reported.
  OwningOpRef<ModuleOp> planned;
  ModuleOp target = module;
  if (oneDevice) {
    planned = module.clone();
    target = *planned;
  }
  llvm::Expected<llvm::StringMap<plan::PlanSummary>> summaries =
      plan::planModule(target, hardware, planOptions);
  if (!summaries)
    return llvm::createStringError("cannot plan the training step for " +
                                   hardware.getName() + ": " +
                                   llvm::toString(summaries.takeError()));
  auto func = target.lookupSymbol<func::FuncOp>("train_step");
  plan::CostModel model(hardware);
  if (explain)
    plan::printExplain(func, model, *explain, &(*summaries)["train_step"]);
  plan::PlanReport report = plan::analyzePlan(func, model);
  double peak = 0;
  for (unsigned d = 0; d < hardware.numDevices(); ++d)
    peak = std::max(peak, report.memory.getPeak(d));
  notes << "training step planned for " << hardware.numDevices()
        << (oneDevice ? " device" : " devices") << ": estimated "
        << plan::formatSeconds(report.getStepTime()) << " per step (compute "
        << plan::formatSeconds(report.computeTime) << ", moves "
        << plan::formatSeconds(report.communicationTime) << "), at most "
        << plan::formatBytes(peak) << " per device";
  if (report.recomputed)
    notes << ", " << report.recomputed
          << " activations recomputed instead of kept";
  notes << "\n";
  // One device compiles the whole step, with the plan's recomputation.
  if (oneDevice)
    return plan::takeRecomputation(module, target, *summaries);
  return llvm::Error::success();
}

llvm::Expected<CompiledProgram> mlir::tra::compileLlamaTrainStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t batch,
    int64_t seq, const OptimizerOptions &optimizer,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, llvm::raw_ostream &notes,
    llvm::raw_ostream *explain) {
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildTrainStepModule(context, params, batch, seq, optimizer);
  if (!module)
    return module.takeError();
  if (llvm::Error error = planTrainStep(**module, hardware, notes, explain))
    return std::move(error);
  CodegenOptions options = stepOptions(threads, &hardware);
  options.entry = "train_step";
  return loadOrCompileProgram(**module, options, cacheDirectory,
                              hardware.toJSONText(), notes);
}

llvm::Expected<CachedLibrary> mlir::tra::compileLlamaDistributedTrainStep(
    MLIRContext &context, const ::tra::rt::LlamaParams &params, int64_t batch,
    int64_t seq, const OptimizerOptions &optimizer,
    const ::tra::hw::HardwareDescription &hardware, int64_t threads,
    StringRef cacheDirectory, StringRef scratchDirectory,
    llvm::raw_ostream &notes, llvm::raw_ostream *explain) {
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildTrainStepModule(context, params, batch, seq, optimizer);
  if (!module)
    return module.takeError();
  if (llvm::Error error = planTrainStep(**module, hardware, notes, explain))
    return std::move(error);
  CodegenOptions options = stepOptions(threads, &hardware);
  options.entry = "train_step";
  llvm::Expected<CachedLibrary> library = findOrCompileDistributedLibrary(
      **module, options, cacheDirectory, hardware.toJSONText(),
      scratchDirectory, notes);
  if (!library)
    return llvm::createStringError(
        "code generation for " + hardware.getName() +
        " failed: " + llvm::toString(library.takeError()));
  return library;
}
