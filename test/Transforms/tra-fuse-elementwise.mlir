// RUN: tra-opt %s --tra-convert-to-linalg --tra-fuse-elementwise --split-input-file | FileCheck %s

// exp(x - max) is also a result: with two users it is not fused (fusing
// would compute it twice).
// CHECK-LABEL: func.func @softmax_sum
// CHECK: %[[E:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[E]]
// exp feeding only the sum becomes one reduction loop nest, which reads
// each exp once.
// CHECK-LABEL: func.func @sum_of_exp
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @softmax_sum(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tra.map "sd,s->sd" (%x, %m) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    tra.yield %r : f32
  }
  %z = tra.einsum "sd->s" id (%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %e, %z : tensor<4x8xf32>, tensor<4xf32>
}
func.func @sum_of_exp(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tra.einsum "sd->sd" exp (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = tra.einsum "sd->s" id (%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// An elementwise producer of a contraction operand is not fused: the
// contraction would read (and recompute) it N times, and BLAS could no
// longer run it.
// CHECK-LABEL: func.func @negative_into_contraction
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: linalg.contract
// CHECK-SAME: ins(%[[G]]
func.func @negative_into_contraction(%a: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %g = tra.einsum "sd->sd" silu (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tra.einsum "sd,ed->se" mul (%g, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// A broadcast consumer would recompute the producer for every column.
// CHECK-LABEL: func.func @negative_broadcast_consumer
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: math.rsqrt
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %[[R]]
func.func @negative_broadcast_consumer(%x: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  %r = tra.einsum "s->s" rsqrt (%s) : (tensor<4xf32>) -> tensor<4xf32>
  %y = tra.einsum "sd,s->sd" mul (%x, %r) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
