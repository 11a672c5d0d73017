// RUN: tra-opt %s --tra-convert-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 2] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
// CHECK: return %[[S]]
func.func @slice(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %s = tra.slice %x dim 1 offset 2 size 4 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x11xf32>
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [4, 8] [1, 1]
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[B]] into %[[R0]][0, 8] [4, 3] [1, 1]
// CHECK: return %[[R1]]
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>) -> tensor<4x11xf32> {
  %c = tra.concat dim 1 (%a, %b) : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x11xf32>
  return %c : tensor<4x11xf32>
}

// -----

// The position is read from the 0-d tensor and checked at run time: the
// update of 4 rows fits at positions 0 to 12 of 16.
// CHECK-LABEL: func.func @update_slice
// CHECK-SAME: (%[[U:.*]]: tensor<4x4x8xf32>, %[[C:.*]]: tensor<16x4x8xf32>, %[[P:.*]]: tensor<i64>)
// CHECK: %[[RAW:.*]] = tensor.extract %[[P]][] : tensor<i64>
// CHECK: %[[POS:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK-DAG: %[[LO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[HI:.*]] = arith.constant 12 : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[POS]], %[[LO]] : index
// CHECK: %[[LE:.*]] = arith.cmpi sle, %[[POS]], %[[HI]] : index
// CHECK: %[[OK:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: cf.assert %[[OK]], "tra.update_slice at {{.*}}slice.mlir:{{[0-9]+}}:{{[0-9]+}}: position out of range [0, 12] along dim 0"
// CHECK: %[[LOW:.*]] = arith.maxsi %[[POS]], %[[LO]] : index
// CHECK: %[[SAFE:.*]] = arith.minsi %[[LOW]], %[[HI]] : index
// CHECK: %[[R:.*]] = tensor.insert_slice %[[U]] into %[[C]][%[[SAFE]], 0, 0] [4, 4, 8] [1, 1, 1]
// CHECK: return %[[R]]
func.func @update_slice(%u: tensor<4x4x8xf32>, %c: tensor<16x4x8xf32>, %p: tensor<i64>) -> tensor<16x4x8xf32> {
  %r = tra.update_slice %u into %c dim 0 at %p : tensor<4x4x8xf32> into tensor<16x4x8xf32> at tensor<i64>
  return %r : tensor<16x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @update_slice_i32_inner_dim
// CHECK: arith.index_cast %{{.*}} : i32 to index
// CHECK: arith.constant 5 : index
// CHECK: cf.assert
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [4, 3] [1, 1]
func.func @update_slice_i32_inner_dim(%u: tensor<4x3xf32>, %c: tensor<4x8xf32>, %p: tensor<i32>) -> tensor<4x8xf32> {
  %r = tra.update_slice %u into %c dim 1 at %p : tensor<4x3xf32> into tensor<4x8xf32> at tensor<i32>
  return %r : tensor<4x8xf32>
}

// -----

// Without bounds checks, no assertion.
// RUN: tra-opt %s --tra-convert-to-linalg="bounds-checks=false" --split-input-file | FileCheck %s --check-prefix=NOCHECK
// NOCHECK-LABEL: func.func @unchecked
// NOCHECK-NOT: cf.assert
// NOCHECK: tensor.insert_slice
func.func @unchecked(%u: tensor<1x8xf32>, %c: tensor<4x8xf32>, %p: tensor<i64>) -> tensor<4x8xf32> {
  %r = tra.update_slice %u into %c dim 0 at %p : tensor<1x8xf32> into tensor<4x8xf32> at tensor<i64>
  return %r : tensor<4x8xf32>
}
