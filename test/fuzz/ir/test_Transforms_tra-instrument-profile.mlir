// RUN: tra-opt %s --tra-instrument-profile | FileCheck %s

// Every model-level op outside map bodies (and except constant fills) is
// bracketed by the profiling calls and named in tra.profile_ops.
// CHECK: module attributes {tra.profile_ops = ["tra.einsum \22ij,jk->ik\22 at tra-instrument-profile.mlir:{{[0-9]+}}:{{[0-9]+}}", "tra.map \22ij,->ij\22 at tra-instrument-profile.mlir:{{[0-9]+}}:{{[0-9]+}}"]}
// CHECK-DAG: func.func private @tra_exec_profile_begin(i64)
// CHECK-DAG: func.func private @tra_exec_profile_end(i64)
// CHECK-LABEL: func.func @main
// CHECK: %[[ZERO:.*]] = tra.fill
// CHECK: %[[ID0:.*]] = arith.constant 0 : i64
// CHECK: call @tra_exec_profile_begin(%[[ID0]]) : (i64) -> ()
// CHECK: tra.einsum
// CHECK: call @tra_exec_profile_end(%[[ID0]]) : (i64) -> ()
// CHECK: %[[ID1:.*]] = arith.constant 1 : i64
// CHECK: call @tra_exec_profile_begin(%[[ID1]])
// CHECK: tra.map
// CHECK: arith.maximumf
// CHECK-NOT: call
// CHECK: tra.yield
// CHECK: call @tra_exec_profile_end(%[[ID1]])
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %zero = tra.fill 0.0 : tensor<f32>
  %c = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %r = tra.map "ij,->ij" (%c, %zero) : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32> {
  ^bb0(%x: f32, %z: f32):
    %m = arith.maximumf %x, %z : f32
    tra.yield %m : f32
  }
  return %r : tensor<4x2xf32>
}
