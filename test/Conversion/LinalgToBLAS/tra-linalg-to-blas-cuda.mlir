// RUN: tra-opt %s --tra-linalg-to-blas=target=cuda --canonicalize --split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-linalg-to-blas --canonicalize --split-input-file | FileCheck %s --check-prefix=CPU
// RUN: not tra-opt %s --tra-linalg-to-blas=target=tpu --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// Arguments of tra_cuda_gemm: the input and output element types (0 f32,
// 1 f16, 2 bf16), then those of tra_exec_sgemm: batch, transA, transB, M, N,
// K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC.

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// An f32 contraction against a transposed weight, beta = 0 from the fill.
// CHECK-LABEL: func.func private @tra_cuda_gemm(i64, i64, i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @f32_weight
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tra_cuda_gemm(%c0_i64, %c0_i64, %c1_i64, %c0_i64, %c1_i64, %c16_i64, %c24_i64, %c32_i64, %[[ONE]], %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %[[ZERO]], %{{.*}}, %c24_i64, %c0_i64)
// CPU-LABEL: func.func @f32_weight
// CPU: call @tra_exec_sgemm
func.func @f32_weight(%x: memref<16x32xf32>, %w: memref<24x32xf32>, %y: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<16x24xf32>)
  linalg.contract indexing_maps = [#mk, #nk, #mn] ins(%x, %w : memref<16x32xf32>, memref<24x32xf32>) outs(%y : memref<16x24xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// bf16 on the GPU (tensor cores, f32 accumulation); the CPU keeps the loops
// (its 16-bit products write f32 only).
// CHECK-LABEL: func.func @bf16_weight
// CHECK: call @tra_cuda_gemm(%c2_i64, %c2_i64, %c1_i64, %c0_i64, %c1_i64, %c16_i64, %c24_i64, %c32_i64,
// CPU-LABEL: func.func @bf16_weight
// CPU-NOT: call
// CPU: linalg.contract
func.func @bf16_weight(%x: memref<16x32xbf16>, %w: memref<24x32xbf16>, %y: memref<16x24xbf16>) {
  linalg.contract indexing_maps = [#mk, #nk, #mn] ins(%x, %w : memref<16x32xbf16>, memref<24x32xbf16>) outs(%y : memref<16x24xbf16>)
  return
}

// -----

#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>

// f16 scores of 4 heads: one strided batched call, element strides.
// CHECK-LABEL: func.func @f16_batched
// CHECK: call @tra_cuda_gemm(%c1_i64, %c1_i64, %c4_i64, %c0_i64, %c1_i64, %c8_i64, %c8_i64, %c16_i64, %{{.*}}, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %{{.*}}, %c8_i64, %c64_i64)
func.func @f16_batched(%q: memref<4x8x16xf16>, %k: memref<4x8x16xf16>, %s: memref<4x8x8xf16>) {
  linalg.contract indexing_maps = [#bmk, #bnk, #bmn] ins(%q, %k : memref<4x8x16xf16>, memref<4x8x16xf16>) outs(%s : memref<4x8x8xf16>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A bf16 product accumulated in f32 (how tra lowers a bf16 einsum): cuBLAS
// writes the f32 accumulator; on the CPU, tra_exec_gemm_mixed (same
// signature) widens the operands to f32 for cblas_sgemm.
// CHECK-LABEL: func.func @bf16_into_f32
// CHECK: call @tra_cuda_gemm(%c2_i64, %c0_i64,
// CPU-LABEL: func.func @bf16_into_f32
// CPU-NOT: linalg.
// CPU: call @tra_exec_gemm_mixed(%c2_i64, %c0_i64, %c1_i64, %c0_i64, %c0_i64, %c16_i64, %c24_i64, %c32_i64, %{{.*}}, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c24_i64, %c0_i64, %{{.*}}, %{{.*}}, %c24_i64, %c0_i64)
// CPU-NOT: linalg.
func.func @bf16_into_f32(%a: memref<16x32xbf16>, %b: memref<32x24xbf16>, %c: memref<16x24xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<16x32xbf16>, memref<32x24xbf16>) outs(%c : memref<16x24xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 einsum as tra lowers it (zero fill, f32 accumulator, truncation):
// cuBLAS writes the bf16 result itself; the CPU computes the f32
// accumulator with tra_exec_gemm_mixed (beta = 0 for the fill) and keeps the
// truncation.
// CHECK-LABEL: func.func @bf16_einsum
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<16x24xbf16>
// CHECK-NOT: linalg.
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: call @tra_cuda_gemm(%c2_i64, %c2_i64,
// CHECK-NOT: linalg.
// CHECK: return
// CPU-LABEL: func.func @bf16_einsum
// CPU-NOT: linalg.fill
// CPU: call @tra_exec_gemm_mixed(%c2_i64, %c0_i64,
// CPU: arith.truncf
func.func @bf16_einsum(%a: memref<16x32xbf16>, %b: memref<32x24xbf16>, %out: memref<16x24xbf16>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<16x24xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x24xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<16x32xbf16>, memref<32x24xbf16>) outs(%acc : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x24xf32>) outs(%out : memref<16x24xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %acc : memref<16x24xf32>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// The accumulator is read again: it stays f32, the truncation a kernel.
// CHECK-LABEL: func.func @negative_accumulator_read_twice
// CHECK: call @tra_cuda_gemm(%c2_i64, %c0_i64,
// CHECK: arith.truncf
// CHECK: memref.copy
func.func @negative_accumulator_read_twice(%a: memref<16x32xbf16>, %b: memref<32x24xbf16>, %out: memref<16x24xbf16>, %raw: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<16x24xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x24xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<16x32xbf16>, memref<32x24xbf16>) outs(%acc : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x24xf32>) outs(%out : memref<16x24xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %acc, %raw : memref<16x24xf32> to memref<16x24xf32>
  memref.dealloc %acc : memref<16x24xf32>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Other mixes are left to the generated loops.
// CHECK-LABEL: func.func @negative_mixed_types
// CHECK-NOT: call
// CHECK: linalg.contract
func.func @negative_mixed_types(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xbf16>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xbf16>)
  return
}

// BAD: error: tra-linalg-to-blas: unknown target 'tpu' (expected cpu or cuda)
