// RUN: tra-opt %s --split-input-file --tra-approximate-math | FileCheck %s
// RUN: tra-opt %s --split-input-file --tra-approximate-math="ops=tanh" | FileCheck %s --check-prefix=TANH

// f32 exp becomes arithmetic (range reduction, polynomial, exponent bits);
// other math ops are left to math-to-llvm / math-to-libm.
// CHECK-LABEL: func.func @exp(
// CHECK-NOT: math.exp
// CHECK: arith.fptosi
// CHECK: arith.shli
// CHECK: arith.bitcast
// CHECK: math.sqrt
// CHECK: math.tanh
// CHECK: return
// TANH-LABEL: func.func @exp(
// TANH: math.exp
// TANH: math.sqrt
// TANH-NOT: math.tanh
// TANH: return
func.func @exp(%x: f32) -> (f32, f32, f32) {
  %e = math.exp %x : f32
  %s = math.sqrt %x : f32
  %t = math.tanh %x : f32
  return %e, %s, %t : f32, f32, f32
}

// -----

// Inside a linalg body, where the pipeline finds it.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @in_generic(
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: linalg.yield
func.func @in_generic(%x: memref<64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}
