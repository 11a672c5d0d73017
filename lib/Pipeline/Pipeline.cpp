//===- Pipeline.cpp - From model-level tra to the LLVM dialect ------------===//

#include "tra/Pipeline/Pipeline.h"

#include "tra/Conversion/Passes.h"
#include "tra/Dialect/Comm/IR/Comm.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tra;

std::string mlir::tra::getDefaultCudaToolkit() {
#ifdef TRA_CUDA_TOOLKIT
  return TRA_CUDA_TOOLKIT;
#else
  return "/usr/local/cuda";
#endif
}

/// Whether `options` compile for an NVIDIA GPU.
static bool isCuda(const TRAToLLVMPipelineOptions &options) {
  return options.target == "cuda";
}

bool mlir::tra::isOpenMPRuntimeAvailable() {
#ifdef TRA_HAVE_OPENMP_RUNTIME
  return true;
#else
  return false;
#endif
}

void mlir::tra::buildTRAToLinalgStage(OpPassManager &pm,
                                      const TRAToLLVMPipelineOptions &options) {
  PrepareEntryPassOptions entryOptions;
  entryOptions.entry = options.entry;
  pm.addPass(createPrepareEntryPass(entryOptions));
  if (options.inlineCalls) {
    pm.addPass(createInlinerPass());
    pm.addPass(createSymbolDCEPass());
  }
  // Weights the plan keeps in a memory tier are fetched before each reader.
  pm.nest<func::FuncOp>().addPass(createFetchTiersPass());
  // On a GPU the host only issues work: timing host calls would measure
  // issuing, not the kernels.
  if (options.profile && !isCuda(options))
    pm.addPass(createInstrumentProfilePass());
  ConvertTRAToLinalgPassOptions linalgOptions;
  linalgOptions.boundsChecks = options.boundsChecks;
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertTRAToLinalgPass(linalgOptions));
  funcPm.addPass(createCanonicalizerPass());
  if (options.fuseElementwise)
    funcPm.addPass(createFuseElementwisePass());
  funcPm.addPass(createCSEPass());
  // After CSE, which merges the zero fills of all contractions.
  funcPm.addPass(createPrivatizeFillInitsPass());
  // After the fills are private: each block of a masked chain fills its own
  // slice. GPU kernels are mapped from whole linalg ops: CPU only for now.
  if (options.maskedBlock > 0 && !isCuda(options)) {
    SkipMaskedTailPassOptions maskedOptions;
    maskedOptions.blockSize = options.maskedBlock;
    funcPm.addPass(createSkipMaskedTailPass(maskedOptions));
    funcPm.addPass(createCanonicalizerPass());
  }
}

void mlir::tra::buildBufferizationStage(
    OpPassManager &pm, const TRAToLLVMPipelineOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
  bufferization::BufferResultsToOutParamsPassOptions outParamsOptions;
  outParamsOptions.hoistStaticAllocs = true;
  outParamsOptions.modifyPublicFunctions = true;
  pm.addPass(
      bufferization::createBufferResultsToOutParamsPass(outParamsOptions));
  // An output that starts as a copy of an input (a KV cache) may be passed
  // the input's buffer; the copy is then skipped.
  pm.nest<func::FuncOp>().addPass(createAliasEntryOutputsPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // Before BLAS calls take raw pointers: free buffers after their last use.
  pm.addPass(createEarlyDeallocPass());
  // After deallocation: the BLAS call reads buffers through raw pointers.
  if (options.blas) {
    ConvertLinalgToBLASPassOptions blasOptions;
    blasOptions.minFlops = options.blasMinFlops;
    blasOptions.target = isCuda(options) ? "cuda" : "cpu";
    pm.addPass(createConvertLinalgToBLASPass(blasOptions));
  }
}

void mlir::tra::buildLLVMStage(OpPassManager &pm,
                               const TRAToLLVMPipelineOptions &options) {
  OpPassManager &loopsPm = pm.nest<func::FuncOp>();
  loopsPm.addPass(createExpandStridedCopiesPass());
  if (options.parallel) {
    ParallelizeLoopsPassOptions parallelOptions;
    parallelOptions.minWork = options.parallelMinWork;
    loopsPm.addPass(createParallelizeLoopsPass(parallelOptions));
  }
  if (options.approximateMath)
    loopsPm.addPass(createApproximateMathPass());
  loopsPm.addPass(createConvertLinalgToLoopsPass());
  PromoteAccumulatorsPassOptions promoteOptions;
  promoteOptions.disableUnroll = true;
  loopsPm.addPass(createPromoteAccumulatorsPass(promoteOptions));
  // scf.parallel becomes omp.parallel + omp.wsloop; the thread count is the
  // runtime's (omp_set_num_threads from the executable's --threads). The
  // canonicalizer inlines the memref.alloca_scope it wraps bodies in.
  if (options.parallel)
    pm.addPass(createConvertSCFToOpenMPPass());
  // The runtime's products (BLAS calls) multiply with a micro-kernel
  // compiled for this target: added after the loop passes above, which must
  // not touch its k loop.
  if (options.blas)
    pm.addPass(createEmitCPUMicrokernelsPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  if (options.parallel)
    funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createLowerAffinePass());
  funcPm.addPass(createSCFToControlFlowPass());
  funcPm.addPass(createCanonicalizerPass());
  // Ceil/floor divisions and bf16 arithmetic and casts become integer and
  // f32 code; max/min stay intrinsics that LLVM vectorizes as reductions.
  funcPm.addPass(createExpandArithPass());
  // A failed run-time check calls the runtime and goes on, instead of
  // abort() (cf.assert's lowering).
  pm.addPass(createReportFailedChecksPass());
  // The micro-kernel's vector ops (before memref: vector loads and stores
  // on memrefs lower with them).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Buffers come from the runtime's allocator (runtime/exec/Alloc.cpp),
  // which keeps large blocks for the next call instead of faulting fresh
  // pages in on every call.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // The reduction loops' "do not unroll" (tra-promote-accumulators) becomes
  // !llvm.loop metadata.
  pm.addPass(createAttachLoopAnnotationsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tra::buildGPUStage(OpPassManager &pm,
                              const TRAToLLVMPipelineOptions &options) {
  // Device buffers, and one kernel per linalg op whose loops run inside it.
  pm.nest<func::FuncOp>().addPass(createExpandStridedCopiesPass());
  pm.addPass(createMapToGPUPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertLinalgToLoopsPass());
  funcPm.addPass(createPromoteAccumulatorsPass());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createLowerAffinePass());
  // bf16 arithmetic and integer divisions, on the host and in kernels.
  funcPm.addPass(createExpandArithPass());
  pm.addPass(createGpuKernelOutliningPass());
  // The layers' kernels are compiled once.
  pm.addPass(createGpuDedupKernelsPass());

  // Kernels: NVVM, then one cubin per chip (ptxas, libdevice from the
  // toolkit), packed into one fatbin.
  SmallVector<std::string> chips(options.gpuChips.begin(),
                                 options.gpuChips.end());
  if (chips.empty())
    chips.assign(std::begin(kDefaultGpuChips), std::end(kDefaultGpuChips));
  for (const std::string &chip : chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  OpPassManager &kernelPm = pm.nest<gpu::GPUModuleOp>();
  kernelPm.addPass(memref::createExpandStridedMetadataPass());
  kernelPm.addPass(createLowerAffinePass());
  kernelPm.addPass(createSCFToControlFlowPass());
  kernelPm.addPass(createConvertGpuOpsToNVVMOps());
  kernelPm.addPass(createCanonicalizerPass());
  kernelPm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaToolkit;
  binary.compilationTarget = "bin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  GpuFatbinPassOptions fatbin;
  fatbin.toolkit = options.cudaToolkit;
  pm.addPass(createGpuFatbinPass(fatbin));

  // The host: launches and allocations become calls of runtime/cuda.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  OpPassManager &hostPm = pm.nest<func::FuncOp>();
  hostPm.addPass(createSCFToControlFlowPass());
  hostPm.addPass(createCanonicalizerPass());
  pm.addPass(createReportFailedChecksPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tra::buildTRAToLLVMPipeline(
    OpPassManager &pm, const TRAToLLVMPipelineOptions &options) {
  buildTRAToLinalgStage(pm, options);
  buildBufferizationStage(pm, options);
  if (isCuda(options))
    buildGPUStage(pm, options);
  else
    buildLLVMStage(pm, options);
}

void mlir::tra::registerTRAToLLVMPipeline() {
  PassPipelineRegistration<TRAToLLVMPipelineOptions>(
      "tra-lower-to-llvm",
      "Lower a model-level tra module to the LLVM dialect for one device (a "
      "CPU, or an NVIDIA GPU with target=cuda)",
      buildTRAToLLVMPipeline);
}

void mlir::tra::registerTRACodegenDialects(DialectRegistry &registry) {
  registry.insert<TRADialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  omp::OpenMPDialect, scf::SCFDialect, tensor::TensorDialect,
                  ub::UBDialect, vector::VectorDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect, comm::CommDialect, plan::PlanDialect>();
  func::registerInlinerExtension(registry);
  // Bufferization.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Fetches from the memory tiers (tra-fetch-tiers).
  comm::registerBufferizableOpInterfaceExternalModels(registry);
  // Results to out-parameters and deallocation: what allocates, how buffers
  // alias through other ops, and how ownership flows through branches.
  memref::registerAllocationOpInterfaceExternalModels(registry);
  arith::registerBufferViewFlowOpInterfaceExternalModels(registry);
  memref::registerBufferViewFlowOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  // Folding of shapes and offsets.
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  memref::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  // Translation to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  // GPU programs: kernels compiled for NVVM targets, gpu.binary embedded and
  // gpu.launch_func translated to runtime calls.
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the other dialects in kernels through their
  // ConvertToLLVM interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}
