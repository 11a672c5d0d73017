// RUN: tra-opt %s --tra-linalg-to-blas --canonicalize --split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-linalg-to-blas=target=cuda --split-input-file | FileCheck %s --check-prefix=CUDA

// Products by Q8_0 weights ("sBJ,eBJ,eB->se": f32 activations, i8 values,
// f16 block scales). Arguments of tra_exec_gemm_q8: M, N, blocks, A, lda,
// Q, ldq, S, lds, beta, C, ldc. On a GPU they stay generics (kernels).

#a = affine_map<(s, e, b, j) -> (s, b, j)>
#q = affine_map<(s, e, b, j) -> (e, b, j)>
#sc = affine_map<(s, e, b, j) -> (e, b)>
#c = affine_map<(s, e, b, j) -> (s, e)>

// CHECK-LABEL: func.func private @tra_exec_gemm_q8(i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-LABEL: func.func @prefill
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tra_exec_gemm_q8(%c4_i64, %c64_i64, %c3_i64, %{{.*}}, %c96_i64, %{{.*}}, %c96_i64, %{{.*}}, %c3_i64, %[[ZERO]], %{{.*}}, %c64_i64)
// CHECK-NOT: linalg.generic
// CUDA-LABEL: func.func @prefill
// CUDA: linalg.generic
// CUDA-NOT: tra_exec_gemm_q8
func.func @prefill(%x: memref<4x3x32xf32>, %w: memref<64x3x32xi8>, %s: memref<64x3xf16>, %y: memref<4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x64xf32>)
  linalg.generic {indexing_maps = [#a, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %s : memref<4x3x32xf32>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%y : memref<4x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  return
}

// -----

// One row taken from a larger buffer (strided rows), the product in
// another order, accumulating (beta = 1).
#a = affine_map<(s, e, b, j) -> (s, b, j)>
#q = affine_map<(s, e, b, j) -> (e, b, j)>
#sc = affine_map<(s, e, b, j) -> (e, b)>
#c = affine_map<(s, e, b, j) -> (s, e)>
// CHECK-LABEL: func.func @decode_row
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @tra_exec_gemm_q8(%c1_i64, %c64_i64, %c3_i64, %{{.*}}, %c96_i64, %{{.*}}, %c96_i64, %{{.*}}, %c3_i64, %[[ONE]], %{{.*}}, %c64_i64)
func.func @decode_row(%x: memref<1x3x32xf32, strided<[96, 32, 1], offset: 192>>, %w: memref<64x3x32xi8>, %s: memref<64x3xf16>, %y: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#a, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %s : memref<1x3x32xf32, strided<[96, 32, 1], offset: 192>>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%y : memref<1x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.addf %3, %out : f32
    linalg.yield %4 : f32
  }
  return
}

// -----

// Not the runtime's layout or not its product: stays a generic.
#a = affine_map<(s, e, b, j) -> (s, b, j)>
#at = affine_map<(s, e, b, j) -> (s, j, b)>
#q = affine_map<(s, e, b, j) -> (e, b, j)>
#sc = affine_map<(s, e, b, j) -> (e, b)>
#c = affine_map<(s, e, b, j) -> (s, e)>
#ct = affine_map<(s, e, b, j) -> (e, s)>
// CHECK-LABEL: func.func @unmatched
// CHECK-NOT: tra_exec_gemm_q8
// CHECK-COUNT-4: linalg.generic
func.func @unmatched(%x: memref<4x3x32xf32>, %xt: memref<4x32x3xf32>, %x16: memref<4x3x16xf32>, %w: memref<64x3x32xi8>, %w16: memref<64x3x16xi8>, %s: memref<64x3xf16>, %y: memref<4x64xf32>, %yt: memref<64x4xf32>) {
  // Blocks of 16 values.
  linalg.generic {indexing_maps = [#a, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x16, %w16, %s : memref<4x3x16xf32>, memref<64x3x16xi8>, memref<64x3xf16>) outs(%y : memref<4x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  // The activations' values not contiguous.
  linalg.generic {indexing_maps = [#at, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%xt, %w, %s : memref<4x32x3xf32>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%y : memref<4x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  // C transposed.
  linalg.generic {indexing_maps = [#a, #q, #sc, #ct], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %s : memref<4x3x32xf32>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%yt : memref<64x4xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  // Another body: the scale added, not multiplied.
  linalg.generic {indexing_maps = [#a, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %s : memref<4x3x32xf32>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%y : memref<4x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.addf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  return
}
