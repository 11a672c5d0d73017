// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen rmsnorm %t
// RUN: tra-interpret %s --input x=%t/x.npy --input w=%t/w.npy --output y=%t/out_y.npy
// RUN: %python %S/Inputs/reference.py check rmsnorm %t | FileCheck %s
// CHECK: rmsnorm: OK

// RMSNorm with named combiners only: sum of squares, then
// x * rsqrt(ss / 64 + eps) * w as einsums.
func.func @main(%x: tensor<6x64xf32> {tra.name = "x"}, %w: tensor<64xf32> {tra.name = "w"})
    -> (tensor<6x64xf32> {tra.name = "y"}) {
  %ss = tra.einsum "sd->s" square (%x) : (tensor<6x64xf32>) -> tensor<6xf32>
  %inv_n = tra.fill 0.015625 : tensor<f32>
  %eps = tra.fill 1.0e-05 : tensor<f32>
  %mean = tra.einsum "s,->s" mul (%ss, %inv_n) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
  %t = tra.einsum "s,->s" add (%mean, %eps) : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
  %r = tra.einsum "s->s" rsqrt (%t) : (tensor<6xf32>) -> tensor<6xf32>
  %y = tra.einsum "sd,s,d->sd" mul (%x, %r, %w) : (tensor<6x64xf32>, tensor<6xf32>, tensor<64xf32>) -> tensor<6x64xf32>
  return %y : tensor<6x64xf32>
}
