//===- Distributed.cpp - tra-llama on multi-device hardware ---------------===//
//
// For a hardware file with several devices, @forward is planned for it and
// compiled (CPU code, or on GPUs GPU code whose moves are NCCL's), once per
// step length (1 token for decoding, the prompt's length
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

#include "tra/Engine/MpiJob.h"
#include "tra/Frontend/LlamaPrograms.h"
#include "tra/Target/LibraryCache.h"

#include "llvm/ADT/StringExtras.h"
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

llvm::Error DistributedModel::init(const rt::LlamaParams &params,
                                   const ::tra::hw::HardwareDescription &hw,
                                   int64_t numThreads, bool emulate,
                                   const std::string &cache,
                                   LlamaWeightDTypes weightDTypes) {
  p = params;
  dtypes = std::move(weightDTypes);
  this->hw = &hw;
  ranks = hw.numDevices();
  threads = numThreads;
  cacheDir = cache;
  ::tra::rt::Result<std::string> found = ::tra::engine::findOnPath("mpirun");
  if (!found)
    return llvm::createStringError(
        hw.getName().str() + " has " + std::to_string(ranks) +
        " devices: the run needs mpirun (Open MPI), which is not on PATH");
  mpirun = *found;
  // GPUs: one rank per GPU, every tile in device memory, moves through NCCL
  // (the compiler refuses hardware that mixes GPUs and CPU devices).
  for (unsigned d = 0; d < hw.numDevices(); ++d)
    cuda |= hw.getDevice(d).kind == ::tra::hw::DeviceKind::GPU && !emulate;
  // The worker is installed next to tra-llama.
  static int anchor;
  llvm::SmallString<128> path(
      llvm::sys::fs::getMainExecutable(nullptr, &anchor));
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "tra-llama-worker");
  if (!llvm::sys::fs::can_execute(path))
    return llvm::createStringError(
        std::string(path) +
        ": not found (tra-llama-worker runs the ranks of a distributed "
        "model; build it with tra-llama, which needs MPI)");
  worker = std::string(path);
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tra-llama", scratch))
    return llvm::createStringError("cannot create a temporary directory: " +
                                   ec.message());
  scratchDir = std::string(scratch);
  return llvm::Error::success();
}

llvm::Error DistributedModel::addProgram(MLIRContext &ctx, int64_t seq,
                                         bool lastRowLogits) {
  // Plan @forward for the hardware, as tra-compile --emit=plan does.
  auto start = std::chrono::steady_clock::now();
  std::string notes;
  llvm::raw_string_ostream notesStream(notes);
  llvm::Expected<CachedLibrary> library = compileLlamaDistributedStep(
      ctx, p, seq, *hw, threads, cacheDir, scratchDir, notesStream, cuda,
      dtypes, lastRowLogits);
  for (llvm::StringRef line : llvm::split(llvm::StringRef(notes).rtrim(), '\n'))
    if (!line.empty())
      llvm::errs() << "tra-llama: " << line << "\n";
  if (!library)
    return library.takeError();
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
  return llvm::Error::success();
}

llvm::Error
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
  if (::tra::rt::Status status = ::tra::engine::runWorkerJob(job, options);
      !status)
    return llvm::createStringError(status.message());
  return llvm::Error::success();
}
