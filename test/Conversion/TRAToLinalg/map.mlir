// RUN: tra-opt %s --tra-convert-to-linalg --split-input-file | FileCheck %s

// The body is cloned into a linalg.generic over the result; tra.index
// becomes linalg.index and a 0-d input is broadcast with an empty map.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME: (%[[S:.*]]: tensor<4x16xf32>, %[[P:.*]]: tensor<i64>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[S]], %[[P]] : tensor<4x16xf32>, tensor<i64>) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: ^bb0(%[[SV:.*]]: f32, %[[PV:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[Q:.*]] = linalg.index 0 : index
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[QI:.*]] = arith.index_cast %[[Q]] : index to i64
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK: %[[LAST:.*]] = arith.addi %[[PV]], %[[QI]] : i64
// CHECK: %[[KEEP:.*]] = arith.cmpi sle, %[[KI]], %[[LAST]] : i64
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[V:.*]] = arith.select %[[KEEP]], %[[SV]], %[[NINF]] : f32
// CHECK: linalg.yield %[[V]] : f32
// CHECK: return %[[R]]
func.func @causal_mask(%s: tensor<4x16xf32>, %p: tensor<i64>) -> tensor<4x16xf32> {
  %masked = tra.map "qk,->qk" (%s, %p) : (tensor<4x16xf32>, tensor<i64>) -> tensor<4x16xf32> {
  ^bb0(%sv: f32, %pv: i64):
    %q = tra.index 0
    %k = tra.index 1
    %qi = arith.index_cast %q : index to i64
    %ki = arith.index_cast %k : index to i64
    %last = arith.addi %pv, %qi : i64
    %keep = arith.cmpi sle, %ki, %last : i64
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %sv, %ninf : f32
    tra.yield %r : f32
  }
  return %masked : tensor<4x16xf32>
}

// -----

// Broadcasting by spec: each input's map lists the result dims of its
// indices, in the input's order.
// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rmsnorm_scale
// CHECK: linalg.generic {indexing_maps = [#[[$X]], #[[$ROW]], #[[$COL]], #[[$X]]]
// CHECK: math.rsqrt
func.func @rmsnorm_scale(%x: tensor<4x64xf32>, %ss: tensor<4xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  %y = tra.map "sd,s,d->sd" (%x, %ss, %w) : (tensor<4x64xf32>, tensor<4xf32>, tensor<64xf32>) -> tensor<4x64xf32> {
  ^bb0(%xv: f32, %s: f32, %wv: f32):
    %r = math.rsqrt %s : f32
    %xn = arith.mulf %xv, %r : f32
    %o = arith.mulf %xn, %wv : f32
    tra.yield %o : f32
  }
  return %y : tensor<4x64xf32>
}

// -----

// A transposing spec and a result of another element type.
// CHECK-DAG: #[[$T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @transpose_compare
// CHECK: linalg.generic {indexing_maps = [#[[$T]], #[[$ID]]]
// CHECK-SAME: outs(%{{.*}} : tensor<8x4xi1>)
// CHECK: arith.cmpf ogt
func.func @transpose_compare(%x: tensor<4x8xf32>) -> tensor<8x4xi1> {
  %y = tra.map "ij->ji" (%x) : (tensor<4x8xf32>) -> tensor<8x4xi1> {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %v, %zero : f32
    tra.yield %c : i1
  }
  return %y : tensor<8x4xi1>
}
