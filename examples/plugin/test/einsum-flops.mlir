// The plugin's pass, loaded into the installed tra-opt: once with a flag of
// its own, once in a textual pipeline. Every remark is checked.
// RUN: %tra_opt %s --load-pass-plugin=%plugin --tra-example-einsum-flops \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=remark
// RUN: %tra_opt %s --load-pass-plugin=%plugin \
// RUN:   --pass-pipeline='builtin.module(tra-example-einsum-flops)' \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=remark

// 2*4*8*16 = 1024.
func.func @matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>)
    -> tensor<2x4x16xf32> {
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "bij,bjk->bik" mul: 1024 multiply-adds (b=2 i=4 j=8 k=16)
  %c = tra.einsum "bij,bjk->bik" mul (%a, %b)
      : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return %c : tensor<2x4x16xf32>
}
// CHECK: remark: @matmul: 1 einsums, 1024 multiply-adds, 0 other points

// Two contractions of 4*64*128 = 32768, an activation on 4*128 = 512
// points, a sum of squares over 4*64 = 256.
func.func @ffn(%h: tensor<4x64xf32>, %w1: tensor<64x128xf32>,
               %w2: tensor<128x64xf32>) -> tensor<4xf32> {
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "sd,df->sf" mul: 32768 multiply-adds (s=4 d=64 f=128)
  %u = tra.einsum "sd,df->sf" mul (%h, %w1)
      : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "sf->sf" silu: 512 points (s=4 f=128)
  %a = tra.einsum "sf->sf" silu (%u) : (tensor<4x128xf32>) -> tensor<4x128xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "sf,fd->sd" mul: 32768 multiply-adds (s=4 f=128 d=64)
  %o = tra.einsum "sf,fd->sd" mul (%a, %w2)
      : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "sd->s" square: 256 points (s=4 d=64)
  %ss = tra.einsum "sd->s" square (%o) : (tensor<4x64xf32>) -> tensor<4xf32>
  return %ss : tensor<4xf32>
}
// CHECK: remark: @ffn: 4 einsums, 65536 multiply-adds, 768 other points

// A broadcast product (nothing summed) and a max over a row are points, not
// multiply-adds: 4*64 = 256 and 4*16 = 64.
func.func @negative_not_contractions(%x: tensor<4x64xf32>, %g: tensor<64xf32>,
                                     %s: tensor<4x16xf32>)
    -> (tensor<4x64xf32>, tensor<4xf32>) {
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "sd,d->sd" mul: 256 points (s=4 d=64)
  %y = tra.einsum "sd,d->sd" mul (%x, %g)
      : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: remark: einsum "qk->q" id: 64 points (q=4 k=16)
  %m = tra.einsum "qk->q" id (%s) reduce max
      : (tensor<4x16xf32>) -> tensor<4xf32>
  return %y, %m : tensor<4x64xf32>, tensor<4xf32>
}
// CHECK: remark: @negative_not_contractions: 2 einsums, 0 multiply-adds, 320 other points

// No einsum, no remark.
func.func @negative_no_einsum(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
