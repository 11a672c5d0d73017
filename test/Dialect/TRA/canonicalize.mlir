// RUN: tra-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @identity_einsum
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_einsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tra.einsum "ij->ij" id (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_transpose_is_not_identity
// CHECK: tra.einsum "ij->ji" id
func.func @negative_transpose_is_not_identity(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = tra.einsum "ij->ji" id (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_exp_is_not_identity
// CHECK: tra.einsum "ij->ij" exp
func.func @negative_exp_is_not_identity(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = tra.einsum "ij->ij" exp (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_reshape_convert_slice_concat
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_reshape_convert_slice_concat(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tra.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = tra.convert %0 : tensor<4x8xf32> to tensor<4x8xf32>
  %2 = tra.slice %1 dim 1 offset 0 size 8 : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = tra.concat dim 0 (%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK-NEXT: %[[R:.*]] = tra.reshape %[[X]] : tensor<4x64xf32> -> tensor<256xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<4x64xf32>) -> tensor<256xf32> {
  %0 = tra.reshape %x : tensor<4x64xf32> -> tensor<4x8x8xf32>
  %1 = tra.reshape %0 : tensor<4x8x8xf32> -> tensor<256xf32>
  return %1 : tensor<256xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = tra.reshape %x : tensor<4x64xf32> -> tensor<4x8x8xf32>
  %1 = tra.reshape %0 : tensor<4x8x8xf32> -> tensor<4x64xf32>
  return %1 : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func.func @negative_reshape_pair_not_a_grouping
// CHECK: tra.reshape
// CHECK: tra.reshape
func.func @negative_reshape_pair_not_a_grouping(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = tra.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tra.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Fills fold through data movement and conversions.
// CHECK-LABEL: func.func @fill_through_movement
// CHECK-DAG: %[[A:.*]] = tra.fill 2.000000e+00 : tensor<2x8xf32>
// CHECK-DAG: %[[B:.*]] = tra.fill 2.000000e+00 : tensor<4x2xbf16>
// CHECK-DAG: %[[C:.*]] = tra.fill 2.000000e+00 : tensor<8x8xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @fill_through_movement() -> (tensor<2x8xf32>, tensor<4x2xbf16>, tensor<8x8xf32>) {
  %f = tra.fill 2.0 : tensor<4x8xf32>
  %0 = tra.slice %f dim 0 offset 1 size 2 : tensor<4x8xf32> -> tensor<2x8xf32>
  %r = tra.reshape %f : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %s = tra.slice %r dim 2 offset 0 size 1 : tensor<4x2x4xf32> -> tensor<4x2x1xf32>
  %t = tra.reshape %s : tensor<4x2x1xf32> -> tensor<4x2xf32>
  %1 = tra.convert %t : tensor<4x2xf32> to tensor<4x2xbf16>
  %2 = tra.concat dim 0 (%f, %f) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0, %1, %2 : tensor<2x8xf32>, tensor<4x2xbf16>, tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_concat_of_different_fills
// CHECK: tra.concat
func.func @negative_concat_of_different_fills() -> tensor<8xf32> {
  %a = tra.fill 1.0 : tensor<4xf32>
  %b = tra.fill 2.0 : tensor<4xf32>
  %0 = tra.concat dim 0 (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Einsums of fills: combine once, aggregate over the reduced extent.
// CHECK-LABEL: func.func @einsum_of_fills
// CHECK-DAG: %[[SUM:.*]] = tra.fill 7.200000e+01 : tensor<4xf32>
// CHECK-DAG: %[[MM:.*]] = tra.fill 4.800000e+01 : tensor<4x4xf32>
// CHECK-DAG: %[[MAX:.*]] = tra.fill 3.000000e+00 : tensor<4xf32>
// CHECK-DAG: %[[PROD:.*]] = tra.fill 8.100000e+01 : tensor<4xf32>
// CHECK: return %[[SUM]], %[[MM]], %[[MAX]], %[[PROD]]
func.func @einsum_of_fills() -> (tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %three = tra.fill 3.0 : tensor<4x8xf32>
  %two = tra.fill 2.0 : tensor<8x4xf32>
  %0 = tra.einsum "ij->i" square (%three) : (tensor<4x8xf32>) -> tensor<4xf32>
  %1 = tra.einsum "ij,jk->ik" mul (%three, %two) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %2 = tra.einsum "ij->i" id (%three) reduce max : (tensor<4x8xf32>) -> tensor<4xf32>
  %s = tra.slice %three dim 1 offset 0 size 4 : tensor<4x8xf32> -> tensor<4x4xf32>
  %3 = tra.einsum "ij->i" id (%s) reduce prod : (tensor<4x4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A map of fills that does not read the index is one value.
// CHECK-LABEL: func.func @map_of_fills
// CHECK-NEXT: %[[F:.*]] = tra.fill 4.000000e+00 : tensor<4x8xf32>
// CHECK-NEXT: return %[[F]]
func.func @map_of_fills() -> tensor<4x8xf32> {
  %a = tra.fill 3.0 : tensor<4x8xf32>
  %b = tra.fill 16.0 : tensor<8xf32>
  %0 = tra.map "ij,j->ij" (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %r = math.rsqrt %y : f32
    %one = arith.constant 1.0 : f32
    %s = arith.addf %x, %one : f32
    %t = arith.divf %s, %r : f32
    %q = arith.mulf %t, %r : f32
    tra.yield %q : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_map_reading_index
// CHECK: tra.map
func.func @negative_map_reading_index() -> tensor<4xf32> {
  %a = tra.fill 3.0 : tensor<4xf32>
  %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32):
    %i = tra.index 0
    %j = arith.index_cast %i : index to i64
    %f = arith.sitofp %j : i64 to f32
    %s = arith.addf %x, %f : f32
    tra.yield %s : f32
  }
  return %0 : tensor<4xf32>
}
