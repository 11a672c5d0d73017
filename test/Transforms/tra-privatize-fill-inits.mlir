// RUN: tra-opt %s --tra-privatize-fill-inits --split-input-file | FileCheck %s
// RUN: tra-opt %s --tra-privatize-fill-inits --one-shot-bufferize --split-input-file | FileCheck %s --check-prefix=BUF

// Two matmuls that start from the same zero fill (as CSE leaves them) get a
// fill each, right before them; after bufferization each fills and writes
// its own buffer, without copies.
// CHECK-LABEL: func.func @two_matmuls
// CHECK-NOT: linalg.fill
// CHECK: %[[Z0:.*]] = linalg.fill
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[Z0]] :
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%[[A]], %{{.*}} : {{.*}}) outs(%[[Z1]] :
// CHECK-NOT: linalg.fill
// BUF-LABEL: func.func @two_matmuls
// BUF-NOT: memref.copy
// BUF: linalg.fill
// BUF-NEXT: linalg.matmul
// BUF-NOT: memref.copy
// BUF: linalg.fill
// BUF-NEXT: linalg.matmul
// BUF-NOT: memref.copy
func.func @two_matmuls(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = linalg.matmul ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = linalg.matmul ins(%a, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

// A fill that is also read as an input keeps that use; only the init use
// gets a clone.
// CHECK-LABEL: func.func @fill_also_read
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[Z1:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%[[Z]], %{{.*}} : {{.*}}) outs(%[[Z1]] :
func.func @fill_also_read(%y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c1 = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%c1 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = linalg.matmul ins(%z, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}

// -----

// A fill with one user is left alone.
// CHECK-LABEL: func.func @single_use
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single_use(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = linalg.matmul ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}
