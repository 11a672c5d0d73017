//===- CodegenOptions.h - How a module is compiled to native code -*- C++
//-*-===//
//
// The switches of code generation that every emission path shares: the
// entry, the target CPU, LLVM's optimization level and the options of the
// lowering pipeline (tra/Pipeline/Pipeline.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_CODEGENOPTIONS_H
#define TRA_TARGET_CODEGENOPTIONS_H

#include "tra/Exec/ParallelCosts.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tra {

struct TRAToLLVMPipelineOptions;

/// How to compile a module to native code.
struct CodegenOptions {
  /// Entry function (see `findEntryFunction`).
  std::string entry;
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 3;
  /// Target CPU and features; empty means the host's.
  std::string cpu;
  std::string features;
  /// Pipeline switches (see TRAToLLVMPipelineOptions).
  bool blas = true;
  int64_t blasMinFlops = 0;
  bool boundsChecks = true;
  bool fuseElementwise = true;
  /// Positions per block of masked chains (tra-skip-masked-tail); 0: off.
  int64_t maskedBlock = 64;
  /// Time every model-level op for the executable's --profile.
  bool profile = true;
  /// Distributed programs: blocking tile moves in program order instead of
  /// non-blocking moves that overlap computation (tra-localize's
  /// blocking-moves; for comparison and debugging).
  bool blockingMoves = false;
  /// Threads the hardware description gives the device (the executable's
  /// default for --threads); 0 lets the executable use all cores.
  int64_t numThreads = 0;
  /// The pipeline's parallel-min-work, if not its default.
  std::optional<int64_t> parallelMinWork;
  /// The CPU's parallel costs from the hardware description
  /// (hw::Device::getParallelCosts), which the program's descriptor carries
  /// to the runtime: they decide which of its products run on the threads.
  /// Invalid (zeros): the runtime's defaults.
  ::tra::exec::ParallelCosts parallelCosts;
  /// Compile for an NVIDIA GPU (the pipeline's target=cuda): kernels for
  /// `gpuChips` (empty: sm_80 and sm_90), buffers in device memory, the
  /// program linked with runtime/cuda.
  bool cuda = false;
  std::vector<std::string> gpuChips;
  /// The hardware description compiled for (its name, for the program's
  /// messages).
  std::string hardwareName;
};

/// Sets the switches of `pipeline` that `options` carries (BLAS, bounds
/// checks, fusion, profiling, thread threshold); the caller sets the entry.
void setPipelineOptions(TRAToLLVMPipelineOptions &pipeline,
                        const CodegenOptions &options);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_CODEGENOPTIONS_H
