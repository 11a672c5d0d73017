//===- Distributed.h - tra-llama on multi-device hardware -------*- C++ -*-===//
//
// Runs a LLaMA model planned for hardware with several devices as ONE MPI
// job for the whole generation (see Distributed.cpp and
// worker/tra-llama-worker.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H
#define TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H

#include "tra/Engine/Generate.h"
#include "tra/Frontend/Llama.h"

#include "tra/Hardware/Hardware.h"
#include "tra/Runtime/Llama.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

class DistributedModel {
public:
  ~DistributedModel();
  /// Prepares a run on `hw` (one MPI rank per device: GPU code for GPUs,
  /// or with `emulate` CPU code for every device) with `threads` threads
  /// per rank; compiled programs are cached in `cacheDir` (none if empty).
  /// The programs read the weights `weightDTypes` names in that 16-bit type
  /// (buildLlamaModule), the others as f32.
  llvm::Error init(const ::tra::rt::LlamaParams &params,
                   const ::tra::hw::HardwareDescription &hw, int64_t threads,
                   bool emulate, const std::string &cacheDir,
                   mlir::tra::LlamaWeightDTypes weightDTypes = {});
  /// Whether the ranks run on GPUs.
  bool onGpus() const { return cuda; }
  /// Plans @forward over `seq` tokens per step for the hardware and finds
  /// its library in the cache or compiles it; with `lastRowLogits` the step
  /// returns the logits of its last token only (buildLlamaModule).
  llvm::Error addProgram(mlir::MLIRContext &ctx, int64_t seq,
                         bool lastRowLogits = false);
  /// Runs the generation as one `mpirun -np N tra-llama-worker` job, the
  /// ranks reading their weight tiles from `checkpoint`; rank 0 prints what
  /// `config` asks for.
  llvm::Error generate(const ::tra::engine::GenerationConfig &config,
                       const std::string &checkpoint,
                       const std::string &tokenizer);
  int64_t numRanks() const { return ranks; }

  double compileSeconds = 0;
  bool anyCompiled = false;
  /// mpirun's --hostfile (none: every rank on this machine, oversubscribed
  /// when there are more ranks than cores) and extra mpirun arguments.
  std::string hostfile;
  std::vector<std::string> mpirunArgs;
  /// The workers' --step-timeout (seconds; 0: none).
  double stepTimeout = 0;

private:
  ::tra::rt::LlamaParams p;
  const ::tra::hw::HardwareDescription *hw = nullptr;
  std::string mpirun, worker, cacheDir, scratchDir;
  int64_t ranks = 0, threads = 1;
  bool cuda = false;
  mlir::tra::LlamaWeightDTypes dtypes;
  /// The library of each step length.
  std::vector<std::pair<int64_t, std::string>> programs;
};

#endif // TRA_TOOLS_TRA_LLAMA_DISTRIBUTED_H
