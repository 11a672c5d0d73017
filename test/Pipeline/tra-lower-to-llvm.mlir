// The LLaMA block example lowers to the LLVM dialect alone, with BLAS calls
// for its projections and the C interface on the entry.
// RUN: tra-opt %tra_src/examples/llama_block.mlir --tra-lower-to-llvm="entry=llama_block" \
// RUN:   | FileCheck %s --implicit-check-not="= tra." --implicit-check-not=linalg. \
// RUN:     --implicit-check-not=memref. --implicit-check-not=tensor. \
// RUN:     --implicit-check-not=" scf." --implicit-check-not=" cf." --implicit-check-not=bufferization.
// CHECK-DAG: llvm.func @tra_exec_sgemm(i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-DAG: llvm.func @tra_exec_check_failed(!llvm.ptr)
// CHECK-LABEL: llvm.func @llama_block(
// CHECK: llvm.call @tra_exec_sgemm
// CHECK: llvm.call @tra_exec_check_failed
// CHECK-LABEL: llvm.func @_mlir_ciface_llama_block(
// CHECK: llvm.call @llama_block(

// Without BLAS the contractions are loops.
// RUN: tra-opt %tra_src/examples/llama_block.mlir --tra-lower-to-llvm="entry=llama_block blas=false" \
// RUN:   | FileCheck %s --check-prefix=NOBLAS
// NOBLAS-NOT: tra_exec_sgemm
// NOBLAS-LABEL: llvm.func @_mlir_ciface_llama_block(
