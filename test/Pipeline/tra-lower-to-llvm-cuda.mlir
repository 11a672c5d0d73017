// REQUIRES: cuda-toolkit
// For an NVIDIA GPU the LLaMA block lowers to host code in the LLVM dialect
// that calls cuBLAS for its projections, launches kernels for every other op
// and reads the cache position from device memory; the kernels are compiled
// by ptxas for sm_80 and sm_90 and packed into one fatbin per kernel module.
// RUN: tra-opt %tra_src/examples/llama_block.mlir --tra-lower-to-llvm="entry=llama_block target=cuda cuda-toolkit=%cuda_toolkit" -o %t.mlir
// RUN: FileCheck %s < %t.mlir --implicit-check-not="= tra." --implicit-check-not=linalg. \
// RUN:     --implicit-check-not=memref. --implicit-check-not=tensor. \
// RUN:     --implicit-check-not=" scf." --implicit-check-not=" cf." --implicit-check-not=bufferization. \
// RUN:     --implicit-check-not=tra_exec_sgemm --implicit-check-not=_mlir_memref_to_llvm_alloc \
// RUN:     --implicit-check-not=tra_exec_profile --implicit-check-not=mgpuStreamSynchronize
// RUN: FileCheck %s --check-prefix=DECL < %t.mlir
// DECL-DAG: llvm.func @tra_cuda_gemm(i64, i64, i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// DECL-DAG: llvm.func @tra_cuda_read(!llvm.ptr, !llvm.ptr, i64)
// DECL-DAG: llvm.func @tra_cuda_memcpy(!llvm.ptr, !llvm.ptr, i64)
// DECL-DAG: llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// DECL-DAG: llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @llama_block(
// CHECK-DAG: llvm.call @mgpuMemAlloc
// CHECK-DAG: llvm.call @tra_cuda_read
// CHECK-DAG: gpu.launch_func
// CHECK-DAG: llvm.call @tra_cuda_gemm(
// CHECK-DAG: llvm.call @mgpuMemFree
// CHECK-LABEL: llvm.func @_mlir_ciface_llama_block(
// CHECK: gpu.binary @{{.*}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, properties = {tra.chips = ["sm_80", "sm_90"]}, "P\EDU\BA

// The chips can be chosen.
// RUN: tra-opt %tra_src/examples/llama_block.mlir --tra-lower-to-llvm="entry=llama_block target=cuda gpu-chips=sm_90 cuda-toolkit=%cuda_toolkit" \
// RUN:   | FileCheck %s --check-prefix=SM90
// SM90: tra.chips = ["sm_90"]
// SM90-NOT: sm_80

// Without cuBLAS the contractions are kernels too.
// RUN: tra-opt %tra_src/examples/llama_block.mlir --tra-lower-to-llvm="entry=llama_block target=cuda blas=false cuda-toolkit=%cuda_toolkit" \
// RUN:   | FileCheck %s --check-prefix=NOBLAS
// NOBLAS-NOT: tra_cuda_gemm
// NOBLAS: gpu.launch_func
