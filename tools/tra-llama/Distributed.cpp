//===- Distributed.cpp - tra-llama on multi-device hardware ---------------===//
//
// For a hardware file with several devices, @forward is planned for it and
// compiled, once per step length (1 token for decoding, the prompt's length
// for prefill), into a shared library holding every rank's program
// (`forward-dist-<key>.so` in the library cache, the key covering the
// planned module, so the plan). The whole generation then runs as one
// `mpirun -np N tra-llama-worker` job (the engine's tra/Engine/MpiJob.h):
// each rank loads the libraries, reads its own weight tiles from the
// checkpoint, keeps its KV-cache tiles in memory, and rank 0 chooses and
// prints the tokens.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"

#include "tra/Conversion/Executable/Executable.h"
#include "tra/Engine/MpiJob.h"
#include "tra/Frontend/Llama.h"
#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::tra;
namespace rt = ::tra::rt;

DistributedModel::~DistributedModel() {
  if (!scratchDir.empty())
    llvm::sys::fs::remove_directories(scratchDir);
}

std::string DistributedModel::init(const rt::LlamaParams &params,
                                   const ::tra::hw::HardwareDescription &hw,
                                   int64_t numThreads, bool emulate,
                                   const std::string &cache) {
  p = params;
  this->hw = &hw;
  ranks = hw.numDevices();
  threads = numThreads;
  cacheDir = cache;
  ::tra::rt::Result<std::string> found = ::tra::engine::findOnPath("mpirun");
  if (!found)
    return hw.getName().str() + " has " + std::to_string(ranks) +
           " devices: the run needs mpirun (Open MPI), which is not on PATH";
  mpirun = *found;
  bool gpu = false;
  for (unsigned d = 0; d < hw.numDevices(); ++d)
    gpu |= hw.getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
  if (gpu && !emulate)
    return hw.getName().str() +
           " has GPU devices: GPU code generation is not implemented; "
           "--emulate-on-cpu runs its plan with CPU code on this machine";
  // The worker is installed next to tra-llama.
  static int anchor;
  llvm::SmallString<128> path(
      llvm::sys::fs::getMainExecutable(nullptr, &anchor));
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "tra-llama-worker");
  if (!llvm::sys::fs::can_execute(path))
    return std::string(path) + ": not found (tra-llama-worker runs the ranks "
                               "of a distributed model; build it with "
                               "tra-llama, which needs MPI)";
  worker = std::string(path);
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tra-llama", scratch))
    return "cannot create a temporary directory: " + ec.message();
  scratchDir = std::string(scratch);
  return "";
}

std::string DistributedModel::addProgram(MLIRContext &ctx, int64_t seq) {
  // Plan @forward for the hardware, as tra-compile --emit=plan does.
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, p, seq);
  if (failed(verify(*module)))
    return "internal error: the generated model does not verify";
  PassManager pm(&ctx);
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  if (failed(pm.run(*module)))
    return "internal error: cannot inline the model";
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return "internal error: the model has no @forward";
  plan::CostModel model(*hw);
  auto summary = plan::assignPartitions(forward, model, {});
  if (!summary)
    return "cannot plan the model for " + hw->getName().str() + ": " +
           llvm::toString(summary.takeError());
  if (failed(plan::insertRepartitions(forward, model)) ||
      failed(plan::verifyPlan(forward)))
    return "internal error: the plan of @forward is inconsistent";

  CodegenOptions options;
  options.entry = "forward";
  options.numThreads = threads;
  options.profile = false;
  std::string notes;
  llvm::raw_string_ostream notesStream(notes);
  llvm::Expected<CachedLibrary> library = findOrCompileDistributedLibrary(
      *module, options, cacheDir, hw->toJSONText(), scratchDir, notesStream);
  for (llvm::StringRef line : llvm::split(llvm::StringRef(notes).rtrim(), '\n'))
    if (!line.empty())
      llvm::errs() << "tra-llama: " << line << "\n";
  if (!library)
    return "code generation for " + hw->getName().str() +
           " failed: " + llvm::toString(library.takeError());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::StringRef perStep = seq == 1 ? " token per step" : " tokens per step";
  if (library->fromCache)
    llvm::errs() << "tra-llama: found cached @forward for " << ranks
                 << " MPI ranks (" << seq << perStep << ") in "
                 << llvm::format("%.2f", seconds) << " s: " << library->path
                 << "\n";
  else
    llvm::errs() << "tra-llama: compiled @forward for " << ranks
                 << " MPI ranks in "
                 << llvm::format("%.2f", library->compileSeconds) << " s ("
                 << seq << perStep << ")\n";
  compileSeconds += library->compileSeconds;
  anyCompiled |= !library->fromCache;
  programs.push_back({seq, library->path});
  return "";
}

std::string
DistributedModel::generate(const ::tra::engine::GenerationConfig &config,
                           const std::string &checkpoint,
                           const std::string &tokenizer) {
  ::tra::engine::MpiJob job;
  job.mpirun = mpirun;
  job.worker = worker;
  job.ranks = ranks;
  job.hostfile = hostfile;
  job.mpirunArgs = mpirunArgs;
  ::tra::engine::WorkerOptions options;
  options.checkpoint = checkpoint;
  for (auto &[seq, path] : programs)
    options.programs.push_back(path);
  options.maxSeqLen = p.maxSeqLen;
  options.threads = threads;
  options.stepTimeout = stepTimeout;
  options.tokenizer = tokenizer;
  options.generation = config;
  llvm::outs().flush();
  llvm::errs().flush();
  return ::tra::engine::runWorkerJob(job, options).message();
}
