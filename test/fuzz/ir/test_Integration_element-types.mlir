// bf16, f16, i1 and i32 tensors through a compiled executable: conversions,
// a bf16 contraction (accumulated in f32), bf16 and f16 elementwise math, a
// bf16 argument read from an f32 .npy file, against the interpreter.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); \
// RUN:   np.save('%t/x.npy', r.standard_normal((4, 8)).astype(np.float32)); \
// RUN:   np.save('%t/w.npy', (0.3 * r.standard_normal((8, 8))).astype(np.float32)); \
// RUN:   np.save('%t/h.npy', r.standard_normal((4, 8)).astype(np.float16))"
// RUN: tra-compile %s --hw local --emit=exe -o %t/prog
// RUN: %t/prog --list | FileCheck %s
// CHECK: input  w: bf16[8, 8]
// CHECK: input  h: f16[4, 8]
// CHECK: output pos: bool[4]
// CHECK: output ints: i32[4]
// RUN: %t/prog --input x=%t/x.npy --input w=%t/w.npy --input h=%t/h.npy --output y=%t/y.npy \
// RUN:   --output z=%t/z.npy --output pos=%t/pos.npy --output ints=%t/ints.npy
// RUN: tra-interpret %s --input x=%t/x.npy --input w=%t/w.npy --input h=%t/h.npy \
// RUN:   --output y=%t/iy.npy --output z=%t/iz.npy --output pos=%t/ipos.npy --output ints=%t/iints.npy
// RUN: %python %S/Inputs/compare.py 0.05 %t/y.npy %t/iy.npy %t/z.npy %t/iz.npy \
// RUN:   %t/pos.npy %t/ipos.npy %t/ints.npy %t/iints.npy | FileCheck %s --check-prefix=SAME
// SAME: same

func.func @main(%x: tensor<4x8xf32> {tra.name = "x"}, %w: tensor<8x8xbf16> {tra.name = "w"}, %h: tensor<4x8xf16> {tra.name = "h"})
    -> (tensor<4x8xbf16> {tra.name = "y"}, tensor<4x8xf16> {tra.name = "z"}, tensor<4xi1> {tra.name = "pos"}, tensor<4xi32> {tra.name = "ints"}) {
  %xb = tra.convert %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %y = tra.einsum "ij,kj->ik" mul (%xb, %w) : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %y2 = tra.map (%y, %xb) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %s = arith.addf %a, %b : bf16
    %e = math.exp %s : bf16
    tra.yield %e : bf16
  }
  %z = tra.einsum "ij->ij" silu (%h) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %m = tra.einsum "ij->i" id (%x) reduce max : (tensor<4x8xf32>) -> tensor<4xf32>
  %p = tra.convert %m : tensor<4xf32> to tensor<4xi1>
  %mi = tra.einsum "i,i->i" add (%m, %m) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %i = tra.convert %mi : tensor<4xf32> to tensor<4xi32>
  return %y2, %z, %p, %i : tensor<4x8xbf16>, tensor<4x8xf16>, tensor<4xi1>, tensor<4xi32>
}
