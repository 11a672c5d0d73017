// RUN: tra-opt %s --tra-convert-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @ungroup
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 8, 8] : tensor<4x64xf32> into tensor<4x8x8xf32>
func.func @ungroup(%a: tensor<4x64xf32>) -> tensor<4x8x8xf32> {
  %r = tra.reshape %a : tensor<4x64xf32> -> tensor<4x8x8xf32>
  return %r : tensor<4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @group
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<4x8x8xf32> into tensor<4x64xf32>
func.func @group(%a: tensor<4x8x8xf32>) -> tensor<4x64xf32> {
  %r = tra.reshape %a : tensor<4x8x8xf32> -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// Grouping one pair of dims and ungrouping another: collapse, then expand.
// CHECK-LABEL: func.func @group_and_ungroup
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x8x8xf32> into tensor<32x8xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [32, 2, 4] : tensor<32x8xf32> into tensor<32x2x4xf32>
func.func @group_and_ungroup(%a: tensor<4x8x8xf32>) -> tensor<32x2x4xf32> {
  %r = tra.reshape %a : tensor<4x8x8xf32> -> tensor<32x2x4xf32>
  return %r : tensor<32x2x4xf32>
}

// -----

// Unit dims at the end join the last group.
// CHECK-LABEL: func.func @trailing_unit
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
func.func @trailing_unit(%a: tensor<2x1x3xf32>) -> tensor<2x3xf32> {
  %r = tra.reshape %a : tensor<2x1x3xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @from_scalar
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @from_scalar(%a: tensor<f32>) -> tensor<1x1xf32> {
  %r = tra.reshape %a : tensor<f32> -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @to_scalar
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @to_scalar(%a: tensor<1x1xf32>) -> tensor<f32> {
  %r = tra.reshape %a : tensor<1x1xf32> -> tensor<f32>
  return %r : tensor<f32>
}
