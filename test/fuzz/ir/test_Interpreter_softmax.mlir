// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen softmax %t
// RUN: tra-interpret %s --input x=%t/x.npy --output y=%t/out_y.npy
// RUN: %python %S/Inputs/reference.py check softmax %t | FileCheck %s
// CHECK: softmax: OK

// Softmax over the last dim: a max aggregation, a map joined back onto the
// rows, a sum aggregation and a division joined back again.
func.func @main(%x: tensor<4x6x10xf32> {tra.name = "x"}) -> (tensor<4x6x10xf32> {tra.name = "y"}) {
  %m = tra.einsum "abk->ab" id (%x) reduce max : (tensor<4x6x10xf32>) -> tensor<4x6xf32>
  %e = tra.map "abk,ab->abk" (%x, %m) : (tensor<4x6x10xf32>, tensor<4x6xf32>) -> tensor<4x6x10xf32> {
  ^bb0(%v: f32, %mv: f32):
    %d = arith.subf %v, %mv : f32
    %r = math.exp %d : f32
    tra.yield %r : f32
  }
  %z = tra.einsum "abk->ab" id (%e) : (tensor<4x6x10xf32>) -> tensor<4x6xf32>
  %y = tra.einsum "abk,ab->abk" div (%e, %z) : (tensor<4x6x10xf32>, tensor<4x6xf32>) -> tensor<4x6x10xf32>
  return %y : tensor<4x6x10xf32>
}
