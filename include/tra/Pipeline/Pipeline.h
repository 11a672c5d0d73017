//===- Pipeline.h - From model-level tra to the LLVM dialect ----*- C++ -*-===//
//
// The pass pipeline that lowers a model-level tra module to the LLVM dialect
// for one device, a CPU or an NVIDIA GPU: tra to linalg on tensors,
// bufferization, BLAS (or cuBLAS) calls for contractions, loops (or GPU
// kernels), and the LLVM dialect. It is built in three stages so
// that a driver can stop or print after each one (docs/Lowering.md).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_PIPELINE_PIPELINE_H
#define TRA_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace tra {

/// Returns true if this build links executables with an OpenMP runtime
/// (libomp), so that generated code may use OpenMP threads.
bool isOpenMPRuntimeAvailable();

/// The CUDA toolkit this build found (its ptxas), or "/usr/local/cuda".
std::string getDefaultCudaToolkit();

/// Options of the `tra-lower-to-llvm` pipeline.
struct TRAToLLVMPipelineOptions
    : public PassPipelineOptions<TRAToLLVMPipelineOptions> {
  PassOptions::Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Entry function to expose through the C interface "
                     "(default: @main, the only public function, or all "
                     "public functions)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> inlineCalls{
      *this, "inline",
      llvm::cl::desc("Inline calls before lowering, so that elementwise "
                     "chains fuse across function boundaries"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse chains of elementwise linalg ops into one loop "
                     "nest"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> maskedBlock{
      *this, "masked-block",
      llvm::cl::desc("CPU: compute masked chains (causal attention) in blocks "
                     "of this many positions, only up to the runtime bound "
                     "(tra-skip-masked-tail); 0: over every position"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> boundsChecks{
      *this, "bounds-checks",
      llvm::cl::desc("Check dynamic positions and gather indices at run "
                     "time"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every model-level op for the executable's "
                     "--profile (tra-instrument-profile)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> blas{
      *this, "blas", llvm::cl::desc("Call BLAS sgemm for f32 contractions"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blasMinFlops{
      *this, "blas-min-flops",
      llvm::cl::desc("Leave contractions with fewer multiply-adds than this "
                     "to the generated loops"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the iterations of large loop nests on OpenMP "
                     "threads (tra-parallelize-loops, convert-scf-to-openmp; "
                     "default: on if this build found an OpenMP runtime to "
                     "link executables with)"),
      llvm::cl::init(isOpenMPRuntimeAvailable())};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Compute f32 exp with a vectorizable polynomial "
                     "approximation instead of libm (tra-approximate-math)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> parallelMinWork{
      *this, "parallel-min-work",
      llvm::cl::desc("Parallelize loop nests whose iterations times body "
                     "operations are at least this"),
      llvm::cl::init(4194304)};
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Where the program runs: cpu (the host's cores) or cuda "
                     "(an NVIDIA GPU: buffers in device memory, linalg ops "
                     "as kernels, contractions through cuBLAS)"),
      llvm::cl::init("cpu")};
  PassOptions::ListOption<std::string> gpuChips{
      *this, "gpu-chips",
      llvm::cl::desc("target=cuda: the chips to compile kernels for (ptxas "
                     "runs once per chip; the program carries all of them)")};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("target=cuda: the CUDA toolkit whose ptxas, fatbinary "
                     "and libdevice are used"),
      llvm::cl::init(getDefaultCudaToolkit())};
};

/// The chips GPU kernels are compiled for when `gpu-chips` is empty.
inline constexpr const char *kDefaultGpuChips[] = {"sm_80", "sm_90"};

/// Stage 1, on tensors: checks and marks the entry function, inlines calls,
/// instruments ops for profiling, lowers tra to linalg/tensor/arith/cf and
/// fuses elementwise ops.
void buildTRAToLinalgStage(OpPassManager &pm,
                           const TRAToLLVMPipelineOptions &options);

/// Stage 2, tensors to buffers: one-shot bufferization across functions
/// (identity layouts at function boundaries), results as out-parameters,
/// deallocation, and BLAS calls for contractions.
void buildBufferizationStage(OpPassManager &pm,
                             const TRAToLLVMPipelineOptions &options);

/// Stage 3, buffers to the LLVM dialect: loops (the outer parallel loops of
/// large loop nests as OpenMP worksharing loops), control flow, then every
/// remaining dialect to LLVM.
void buildLLVMStage(OpPassManager &pm, const TRAToLLVMPipelineOptions &options);

/// Stage 3 for target=cuda, buffers to the LLVM dialect on an NVIDIA GPU:
/// device buffers and one kernel per linalg op (tra-map-to-gpu), kernels
/// outlined and compiled for every chip of `gpu-chips` (NVVM, ptxas) into one
/// fatbin (tra-gpu-fatbin), the host code lowered to the LLVM dialect with
/// the runtime calls of runtime/cuda (gpu-to-llvm).
void buildGPUStage(OpPassManager &pm, const TRAToLLVMPipelineOptions &options);

/// The three stages in order: a model-level tra module to the LLVM dialect
/// (stage 3 is buildGPUStage for target=cuda).
void buildTRAToLLVMPipeline(OpPassManager &pm,
                            const TRAToLLVMPipelineOptions &options);

/// Registers `tra-lower-to-llvm` with the pass pipeline registry.
void registerTRAToLLVMPipeline();

/// Adds to `registry` every dialect the pipeline produces or consumes and
/// the external interface models it needs (bufferization, inlining, LLVM IR
/// translation).
void registerTRACodegenDialects(DialectRegistry &registry);

} // namespace tra
} // namespace mlir

#endif // TRA_PIPELINE_PIPELINE_H
