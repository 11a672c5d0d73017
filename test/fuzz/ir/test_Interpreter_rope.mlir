// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen rope %t
// RUN: tra-interpret %s --input x=%t/x.npy --input pos=%t/pos.npy --input freqs_cos=%t/freqs_cos.npy --input freqs_sin=%t/freqs_sin.npy --output y=%t/out_y.npy
// RUN: %python %S/Inputs/reference.py check rope %t | FileCheck %s
// CHECK: rope: OK

// Rotary embedding of adjacent pairs (x[2p], x[2p+1]) for 5 tokens at
// positions pos..pos+4, 4 heads of dim 8, written with slices and concat.
func.func @main(%x: tensor<5x4x8xf32> {tra.name = "x"}, %pos: tensor<i64> {tra.name = "pos"},
                %fc: tensor<16x4xf32> {tra.name = "freqs_cos"}, %fs: tensor<16x4xf32> {tra.name = "freqs_sin"})
    -> (tensor<5x4x8xf32> {tra.name = "y"}) {
  %positions = tra.map "->s" (%pos) : (tensor<i64>) -> tensor<5xi64> {
  ^bb0(%p: i64):
    %i = tra.index 0
    %ii = arith.index_cast %i : index to i64
    %r = arith.addi %p, %ii : i64
    tra.yield %r : i64
  }
  %cos = tra.gather %fc[%positions] : tensor<16x4xf32>, tensor<5xi64> -> tensor<5x4xf32>
  %sin = tra.gather %fs[%positions] : tensor<16x4xf32>, tensor<5xi64> -> tensor<5x4xf32>
  %x4 = tra.reshape %x : tensor<5x4x8xf32> -> tensor<5x4x4x2xf32>
  %a4 = tra.slice %x4 dim 3 offset 0 size 1 : tensor<5x4x4x2xf32> -> tensor<5x4x4x1xf32>
  %b4 = tra.slice %x4 dim 3 offset 1 size 1 : tensor<5x4x4x2xf32> -> tensor<5x4x4x1xf32>
  %a = tra.reshape %a4 : tensor<5x4x4x1xf32> -> tensor<5x4x4xf32>
  %b = tra.reshape %b4 : tensor<5x4x4x1xf32> -> tensor<5x4x4xf32>
  %ra = tra.map "shp,shp,sp,sp->shp" (%a, %b, %cos, %sin) : (tensor<5x4x4xf32>, tensor<5x4x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4x4xf32> {
  ^bb0(%av: f32, %bv: f32, %c: f32, %s: f32):
    %ac = arith.mulf %av, %c : f32
    %bs = arith.mulf %bv, %s : f32
    %r = arith.subf %ac, %bs : f32
    tra.yield %r : f32
  }
  %rb = tra.map "shp,shp,sp,sp->shp" (%a, %b, %cos, %sin) : (tensor<5x4x4xf32>, tensor<5x4x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4x4xf32> {
  ^bb0(%av: f32, %bv: f32, %c: f32, %s: f32):
    %as = arith.mulf %av, %s : f32
    %bc = arith.mulf %bv, %c : f32
    %r = arith.addf %as, %bc : f32
    tra.yield %r : f32
  }
  %ra4 = tra.reshape %ra : tensor<5x4x4xf32> -> tensor<5x4x4x1xf32>
  %rb4 = tra.reshape %rb : tensor<5x4x4xf32> -> tensor<5x4x4x1xf32>
  %r4 = tra.concat dim 3 (%ra4, %rb4) : (tensor<5x4x4x1xf32>, tensor<5x4x4x1xf32>) -> tensor<5x4x4x2xf32>
  %y = tra.reshape %r4 : tensor<5x4x4x2xf32> -> tensor<5x4x8xf32>
  return %y : tensor<5x4x8xf32>
}
