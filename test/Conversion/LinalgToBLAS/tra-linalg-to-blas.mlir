// RUN: tra-opt %s --tra-linalg-to-blas --canonicalize --split-input-file | FileCheck %s

// Arguments of tra_exec_sgemm: batch, transA, transB, M, N, K, alpha,
// A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A zero fill right before the contraction becomes beta = 0.
// CHECK-LABEL: func.func private @tra_exec_sgemm(i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<16x32xf32>, %[[B:.*]]: memref<32x24xf32>, %[[C:.*]]: memref<16x24xf32>)
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[AI:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG: %[[BI:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: %[[CI:.*]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK-DAG: %[[PA:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: call @tra_exec_sgemm(%c1_i64, %c0_i64, %c0_i64, %c16_i64, %c24_i64, %c32_i64, %[[ONE]], %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c24_i64, %c0_i64, %[[ZERO]], %{{.*}}, %c24_i64, %c0_i64)
// CHECK-NOT: linalg.contract
func.func @matmul(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x24xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xf32>)
  return
}

// -----

// Named matmuls are contractions too; without a zero fill, beta = 1.
// CHECK-LABEL: func.func @named_matmul_accumulates
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @tra_exec_sgemm(%c1_i64, %c0_i64, %c0_i64, %c16_i64, %c24_i64, %c32_i64, %[[ONE]], %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c24_i64, %c0_i64, %[[ONE]], %{{.*}}, %c24_i64, %c0_i64)
func.func @named_matmul_accumulates(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xf32>)
  return
}

// -----

// B stored [n][k] (Meta's weight layout): transB = 1, ldb = K.
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @transposed_b
// CHECK: call @tra_exec_sgemm(%c1_i64, %c0_i64, %c1_i64, %c16_i64, %c24_i64, %c32_i64, %{{.*}}, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %{{.*}}, %c24_i64, %c0_i64)
func.func @transposed_b(%a: memref<16x32xf32>, %b: memref<24x32xf32>, %c: memref<16x24xf32>) {
  linalg.contract indexing_maps = [#mk, #nk, #mn] ins(%a, %b : memref<16x32xf32>, memref<24x32xf32>) outs(%c : memref<16x24xf32>)
  return
}

// -----

// A column-major C is computed as C^T = B^T A^T: A and B trade places and
// are both read transposed.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nm = affine_map<(m, n, k) -> (n, m)>
// CHECK-LABEL: func.func @column_major_c
// CHECK-SAME: (%[[A:.*]]: memref<16x32xf32>, %[[B:.*]]: memref<32x24xf32>, %[[C:.*]]: memref<24x16xf32>)
// CHECK: %[[BI:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[AI:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @tra_exec_sgemm(%c1_i64, %c1_i64, %c1_i64, %c24_i64, %c16_i64, %c32_i64, %{{.*}}, %{{.*}}, %c24_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %{{.*}}, %c16_i64, %c0_i64)
func.func @column_major_c(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<24x16xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #nm] ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<24x16xf32>)
  return
}

// -----

// A batch dimension becomes a batch count with per-operand strides.
// CHECK-LABEL: func.func @batched
// CHECK: call @tra_exec_sgemm(%c3_i64, %c0_i64, %c0_i64, %c16_i64, %c8_i64, %c32_i64, %{{.*}}, %{{.*}}, %c32_i64, %c512_i64, %{{.*}}, %c8_i64, %c256_i64, %{{.*}}, %{{.*}}, %c8_i64, %c128_i64)
func.func @batched(%a: memref<3x16x32xf32>, %b: memref<3x32x8xf32>, %c: memref<3x16x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x16x32xf32>, memref<3x32x8xf32>) outs(%c : memref<3x16x8xf32>)
  return
}

// -----

// A batch of products under 4096 multiply-adds each (here 8 x 4 x 16) stays
// in the generated loops: the runtime would call BLAS once per product.
// CHECK-LABEL: func.func @batched_tiny
// CHECK-NOT: call
// CHECK: linalg.batch_matmul
// CHECK-NOT: call
func.func @batched_tiny(%a: memref<3x8x16xf32>, %b: memref<3x16x4xf32>, %c: memref<3x8x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x8x16xf32>, memref<3x16x4xf32>) outs(%c : memref<3x8x4xf32>)
  return
}

// -----

// Consecutive m dims (s, r) flatten into M = 4 * 8; the batch dim g sits
// between the rows and the columns of A, so lda = 16 and strideA = 8.
#a = affine_map<(g, s, r, t, d) -> (s, r, g, d)>
#b = affine_map<(g, s, r, t, d) -> (g, t, d)>
#c = affine_map<(g, s, r, t, d) -> (g, s, r, t)>
// CHECK-LABEL: func.func @flattened_groups
// CHECK: call @tra_exec_sgemm(%c2_i64, %c0_i64, %c1_i64, %c32_i64, %c16_i64, %c8_i64, %{{.*}}, %{{.*}}, %c16_i64, %c8_i64, %{{.*}}, %c8_i64, %c128_i64, %{{.*}}, %{{.*}}, %c16_i64, %c512_i64)
func.func @flattened_groups(%a: memref<4x8x2x8xf32>, %b: memref<2x16x8xf32>, %c: memref<2x4x8x16xf32>) {
  linalg.contract indexing_maps = [#a, #b, #c] ins(%a, %b : memref<4x8x2x8xf32>, memref<2x16x8xf32>) outs(%c : memref<2x4x8x16xf32>)
  return
}

// -----

// The m dims (s, r) are not consecutive in A: no matrix view of both. With r
// peeled into a loop, each matrix product would be 4 x 16 x 8, 512
// multiply-adds, too few to be worth a BLAS call each: loops stay.
#a = affine_map<(g, s, r, t, d) -> (s, g, r, d)>
#b = affine_map<(g, s, r, t, d) -> (g, t, d)>
#c = affine_map<(g, s, r, t, d) -> (g, s, r, t)>
// CHECK-LABEL: func.func @negative_split_group
// CHECK-NOT: call
// CHECK: linalg.contract
func.func @negative_split_group(%a: memref<4x2x8x8xf32>, %b: memref<2x16x8xf32>, %c: memref<2x4x8x16xf32>) {
  linalg.contract indexing_maps = [#a, #b, #c] ins(%a, %b : memref<4x2x8x8xf32>, memref<2x16x8xf32>) outs(%c : memref<2x4x8x16xf32>)
  return
}

// -----

// Only f32 contractions call sgemm.
// CHECK-LABEL: func.func @negative_f16
// CHECK-NOT: call
// CHECK: linalg.matmul
func.func @negative_f16(%a: memref<16x32xf16>, %b: memref<32x24xf16>, %c: memref<16x24xf16>) {
  linalg.matmul ins(%a, %b : memref<16x32xf16>, memref<32x24xf16>) outs(%c : memref<16x24xf16>)
  return
}

// -----

// Neither rows nor columns of a strided view are contiguous.
// CHECK-LABEL: func.func @negative_no_unit_stride
// CHECK-NOT: call
// CHECK: linalg.matmul
func.func @negative_no_unit_stride(%a: memref<16x32xf32, strided<[64, 2]>>, %b: memref<32x24xf32>, %c: memref<16x24xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32, strided<[64, 2]>>, memref<32x24xf32>) outs(%c : memref<16x24xf32>)
  return
}

// -----

// Small contractions stay loops under min-flops.
// RUN: tra-opt %s --tra-linalg-to-blas="min-flops=100000" --split-input-file | FileCheck %s --check-prefix=MIN
// MIN-LABEL: func.func @small
// MIN-NOT: call
// MIN: linalg.matmul
// MIN-LABEL: func.func @large
// MIN: call @tra_exec_sgemm
func.func @small(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xf32>)
  return
}
func.func @large(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Decoding attention scores, "sgrd,tgd->grst" with one query position (s)
// and one query head per group (r): the unit dimensions take no part in the
// matrices, so this is a batch of g = 8 products (1 x 64) * (64 x 256) with
// k read transposed from the cache [t][g][d] (ldb = 512, batch stride 64).
#q = affine_map<(g, r, s, t, d) -> (s, g, r, d)>
#k = affine_map<(g, r, s, t, d) -> (t, g, d)>
#o = affine_map<(g, r, s, t, d) -> (g, r, s, t)>
// CHECK-LABEL: func.func @decode_scores
// CHECK: call @tra_exec_sgemm(%c8_i64, %c0_i64, %c1_i64, %c1_i64, %c256_i64, %c64_i64, %{{.*}}, %{{.*}}, %c64_i64, %c64_i64, %{{.*}}, %c512_i64, %c64_i64, %{{.*}}, %{{.*}}, %c256_i64, %c256_i64)
// CHECK-NOT: linalg.contract
func.func @decode_scores(%q: memref<1x8x1x64xf32>, %k: memref<256x8x64xf32>, %c: memref<8x1x1x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x1x1x256xf32>)
  linalg.contract indexing_maps = [#q, #k, #o] ins(%q, %k : memref<1x8x1x64xf32>, memref<256x8x64xf32>) outs(%c : memref<8x1x1x256xf32>)
  return
}

// -----

// The weighted sum of the values, "grst,tgd->sgrd": a batch of g products
// (1 x 256) * (256 x 64) reading v [t][g][d] as stored (ldb = 512).
#p = affine_map<(s, g, r, d, t) -> (g, r, s, t)>
#v = affine_map<(s, g, r, d, t) -> (t, g, d)>
#out = affine_map<(s, g, r, d, t) -> (s, g, r, d)>
// CHECK-LABEL: func.func @decode_values
// CHECK: call @tra_exec_sgemm(%c8_i64, %c0_i64, %c0_i64, %c1_i64, %c64_i64, %c256_i64, %{{.*}}, %{{.*}}, %c256_i64, %c256_i64, %{{.*}}, %c512_i64, %c64_i64, %{{.*}}, %{{.*}}, %c64_i64, %c64_i64)
// CHECK-NOT: linalg.contract
func.func @decode_values(%p: memref<8x1x1x256xf32>, %v: memref<256x8x64xf32>, %c: memref<1x8x1x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x1x64xf32>)
  linalg.contract indexing_maps = [#p, #v, #out] ins(%p, %v : memref<8x1x1x256xf32>, memref<256x8x64xf32>) outs(%c : memref<1x8x1x64xf32>)
  return
}

// -----

// Prefill attention scores with grouped query heads, "sgrd,tgd->grst" with
// 128 query positions and r = 2 query heads per key/value head: s and r do
// not flatten (g sits between them in q), so r becomes a loop around the
// call. Each iteration offsets q by r * 8 floats (32 bytes) and the scores
// by r * 128 * 256 floats (131072 bytes), and multiplies a batch of g = 4
// (128 x 8) * (8 x 256) matrices, k read transposed (ldb = 32).
#q = affine_map<(g, r, s, t, d) -> (s, g, r, d)>
#k = affine_map<(g, r, s, t, d) -> (t, g, d)>
#o = affine_map<(g, r, s, t, d) -> (g, r, s, t)>
// CHECK-LABEL: func.func @prefill_scores
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c2 step
// CHECK:   %[[QOFF:.*]] = arith.muli %[[R]], %c32 : index
// CHECK:   arith.addi %{{.*}}, %[[QOFF]] : index
// CHECK:   %[[COFF:.*]] = arith.muli %[[R]], %c131072 : index
// CHECK:   arith.addi %{{.*}}, %[[COFF]] : index
// CHECK:   call @tra_exec_sgemm(%c4_i64, %c0_i64, %c1_i64, %c128_i64, %c256_i64, %c8_i64, %{{.*}}, %{{.*}}, %c64_i64, %c16_i64, %{{.*}}, %c32_i64, %c8_i64{{.*}}, %{{.*}}, %{{.*}}, %c256_i64{{.*}}, %c65536_i64)
// CHECK: }
// CHECK-NOT: linalg.contract
func.func @prefill_scores(%q: memref<128x4x2x8xf32>, %k: memref<256x4x8xf32>, %c: memref<4x2x128x256xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x2x128x256xf32>)
  linalg.contract indexing_maps = [#q, #k, #o] ins(%q, %k : memref<128x4x2x8xf32>, memref<256x4x8xf32>) outs(%c : memref<4x2x128x256xf32>)
  return
}

// -----

// The weighted sum of the values in the same prefill, "grst,tgd->sgrd": r
// is a loop again (s and r are in the opposite order in p and the output),
// each call a batch of g = 4 (128 x 256) * (256 x 8) products, v read as
// stored (ldb = 32) and the output rows 64 floats apart.
#p = affine_map<(s, g, r, d, t) -> (g, r, s, t)>
#v = affine_map<(s, g, r, d, t) -> (t, g, d)>
#out = affine_map<(s, g, r, d, t) -> (s, g, r, d)>
// CHECK-LABEL: func.func @prefill_values
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c2 step
// CHECK:   arith.muli %[[R]], %c131072 : index
// CHECK:   arith.muli %[[R]], %c32 : index
// CHECK:   call @tra_exec_sgemm(%c4_i64, %c0_i64, %c0_i64, %c128_i64, %c8_i64, %c256_i64, %{{.*}}, %{{.*}}, %c256_i64{{.*}}, %c65536_i64, %{{.*}}, %c32_i64, %c8_i64{{.*}}, %{{.*}}, %{{.*}}, %c64_i64, %c16_i64)
// CHECK-NOT: linalg.contract
func.func @prefill_values(%p: memref<4x2x128x256xf32>, %v: memref<256x4x8xf32>, %c: memref<128x4x2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x4x2x8xf32>)
  linalg.contract indexing_maps = [#p, #v, #out] ins(%p, %v : memref<4x2x128x256xf32>, memref<256x4x8xf32>) outs(%c : memref<128x4x2x8xf32>)
  return
}

// -----

// Two batch dims that do not nest in the output (it holds them in the
// other order than A and B): the cheaper one (extent 2) is the loop, the
// other the call's batch.
#a = affine_map<(i, j, m, n, k) -> (i, j, m, k)>
#b = affine_map<(i, j, m, n, k) -> (i, j, k, n)>
#c = affine_map<(i, j, m, n, k) -> (j, i, m, n)>
// CHECK-LABEL: func.func @two_batch_dims
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2 step
// CHECK:   call @tra_exec_sgemm(%c8_i64,
// CHECK-NOT: scf.for
// CHECK-NOT: linalg.contract
func.func @two_batch_dims(%a: memref<8x2x32x32xf32>, %b: memref<8x2x32x32xf32>, %c: memref<2x8x32x32xf32>) {
  linalg.contract indexing_maps = [#a, #b, #c] ins(%a, %b : memref<8x2x32x32xf32>, memref<8x2x32x32xf32>) outs(%c : memref<2x8x32x32xf32>)
  return
}

// -----

// The rotary embedding's contraction: peeling p would leave 4 x 128
// products of 8 x 2 x 2, far too small for BLAS; loops stay.
#r = affine_map<(s, h, p, t, u) -> (s, p, t, u)>
#x = affine_map<(s, h, p, t, u) -> (s, h, p, u)>
#y = affine_map<(s, h, p, t, u) -> (s, h, p, t)>
// CHECK-LABEL: func.func @negative_rotary
// CHECK-NOT: call
// CHECK: linalg.contract
func.func @negative_rotary(%r: memref<128x4x2x2xf32>, %x: memref<128x8x4x2xf32>, %y: memref<128x8x4x2xf32>) {
  linalg.contract indexing_maps = [#r, #x, #y] ins(%r, %x : memref<128x4x2x2xf32>, memref<128x8x4x2xf32>) outs(%y : memref<128x8x4x2xf32>)
  return
}
