// RUN: tra-opt %s --tra-expand-arith | FileCheck %s

// Ceil/floor divisions and bf16 casts are expanded; max/min stay ops that
// become LLVM intrinsics (which LLVM vectorizes as reductions).
// CHECK-LABEL: func.func @expand
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.floordivsi
// CHECK-NOT: arith.extf
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.extf
// CHECK: return
func.func @expand(%a: i64, %b: i64, %x: f32, %y: f32, %h: bf16)
    -> (i64, i64, f32, f32, f32, f32) {
  %c = arith.ceildivsi %a, %b : i64
  %f = arith.floordivsi %a, %b : i64
  %e = arith.extf %h : bf16 to f32
  %m = arith.maximumf %x, %y : f32
  %n = arith.minimumf %x, %y : f32
  %k = arith.maxnumf %x, %e : f32
  return %c, %f, %e, %m, %n, %k : i64, i64, f32, f32, f32, f32
}
