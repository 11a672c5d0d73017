// RUN: tra-opt %s --tra-expand-strided-copies | FileCheck %s

// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[S:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[T:.*]]: memref<4x8xf32, strided<[32, 8], offset: ?>>)
// Contiguous copies stay memref.copy (they become memcpy).
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: linalg.copy ins(%[[S]] : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%[[A]] : memref<4x8xf32>)
// CHECK: linalg.copy ins(%[[B]] : memref<4x8xf32>) outs(%[[T]] : memref<4x8xf32, strided<[32, 8], offset: ?>>)
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                  %s: memref<4x8xf32, strided<[16, 1], offset: ?>>,
                  %t: memref<4x8xf32, strided<[32, 8], offset: ?>>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %s, %a : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32>
  memref.copy %b, %t : memref<4x8xf32> to memref<4x8xf32, strided<[32, 8], offset: ?>>
  return
}
