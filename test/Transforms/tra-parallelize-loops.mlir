// RUN: tra-opt %s --split-input-file --tra-parallelize-loops | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-parallelize-loops="min-work=1000000000" \
// RUN:   | FileCheck %s --check-prefix=NONE
// RUN: tra-opt %s --split-input-file --tra-parallelize-loops --canonicalize \
// RUN:   | FileCheck %s --check-prefix=CANON

// A large elementwise map: the rows are distributed, the columns stay the
// inner (vectorizable) loop.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bias_relu(
// CHECK-SAME: %[[X:[^:]*]]: memref<256x2048xf32>, %[[B:[^:]*]]: memref<2048xf32>, %[[Y:[^:]*]]: memref<256x2048xf32>)
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C2048:.*]] = arith.constant 2048 : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C256]]) step (%{{.*}}) {
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C2048]] step %{{.*}} {
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[B]]
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
// CANON-LABEL: func.func @bias_relu(
// CANON-SAME: %[[X:[^:]*]]: memref<256x2048xf32>, %[[B:[^:]*]]: memref<2048xf32>, %[[Y:[^:]*]]: memref<256x2048xf32>)
// CANON: scf.parallel (%[[I:.*]]) =
// CANON-NEXT: scf.for %[[J:.*]] =
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CANON-NEXT: %[[W:.*]] = memref.load %[[B]][%[[J]]]
// CANON-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[W]]
// CANON-NEXT: %[[R:.*]] = arith.maximumf %[[S]],
// CANON-NEXT: memref.store %[[R]], %[[Y]][%[[I]], %[[J]]]
// NONE-LABEL: func.func @bias_relu(
// NONE-NOT: scf.
// NONE: linalg.generic
func.func @bias_relu(%x: memref<256x2048xf32>, %b: memref<2048xf32>,
                     %y: memref<256x2048xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #col, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<256x2048xf32>, memref<2048xf32>)
      outs(%y : memref<256x2048xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Too little work (16 x 16 x 1 < 32768): left to convert-linalg-to-loops.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @small(
// CHECK-NOT: scf.
// CHECK: linalg.generic
func.func @small(%x: memref<16x16xf32>, %y: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Row sums: the rows are distributed, the reduction is the inner loop.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sums(
// CHECK: scf.parallel (%{{.*}}) =
// CHECK-NEXT: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<512xf32>
// CANON-LABEL: func.func @row_sums(
// CANON: scf.parallel (%[[I:.*]]) =
// CANON-NEXT: scf.for
// CANON: memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<512xf32>
func.func @row_sums(%x: memref<512x1024xf32>, %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x1024xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Column sums: the outer dim is a reduction; not parallelized.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @column_sums(
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @column_sums(%x: memref<512x1024xf32>, %y: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#id, #col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<512x1024xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Leading unit dims stay one-trip loops; a lone non-unit dim is distributed
// although it is the innermost.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @unit_dims(
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.for
// CHECK: return
func.func @unit_dims(%x: memref<1x1x65536xf32>, %y: memref<1x1x65536xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1x1x65536xf32>) outs(%y : memref<1x1x65536xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Few outer iterations: the next parallel dim is distributed too (4 x 8),
// but never the innermost.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @short_outer(
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.for
// CHECK: return
func.func @short_outer(%x: memref<4x8x2048xf32>, %y: memref<4x8x2048xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x8x2048xf32>) outs(%y : memref<4x8x2048xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// An in-place transpose reads elements other iterations write: serial.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @in_place_transpose(
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @in_place_transpose(%x: memref<512x512xf32>) {
  linalg.generic {indexing_maps = [#t, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x512xf32>) outs(%x : memref<512x512xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Ops inside a parallel region are not parallelized again.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @nested(
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @nested(%x: memref<4x512x512xf32>, %y: memref<4x512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %xs = memref.subview %x[%i, 0, 0] [1, 512, 512] [1, 1, 1]
        : memref<4x512x512xf32> to memref<512x512xf32, strided<[512, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0, 0] [1, 512, 512] [1, 1, 1]
        : memref<4x512x512xf32> to memref<512x512xf32, strided<[512, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%xs : memref<512x512xf32, strided<[512, 1], offset: ?>>)
        outs(%ys : memref<512x512xf32, strided<[512, 1], offset: ?>>) {
    ^bb0(%a: f32, %out: f32):
      linalg.yield %a : f32
    }
    scf.reduce
  }
  return
}

// -----

// Copies and fills are linalg ops too: a large strided copy is distributed.
// CHECK-LABEL: func.func @copy(
// CHECK: scf.parallel
// CHECK-NEXT: scf.for
// CHECK: memref.load %{{.*}} : memref<256x256xf32, strided<[512, 1]>>
// CHECK: memref.store
func.func @copy(%x: memref<256x256xf32, strided<[512, 1]>>, %y: memref<256x256xf32>) {
  linalg.copy ins(%x : memref<256x256xf32, strided<[512, 1]>>)
              outs(%y : memref<256x256xf32>)
  return
}

// -----

// Tensors are left alone (the pass runs after bufferization).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @tensors(
// CHECK-NOT: scf.
// CHECK: linalg.generic
func.func @tensors(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %e = tensor.empty() : tensor<512x512xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
