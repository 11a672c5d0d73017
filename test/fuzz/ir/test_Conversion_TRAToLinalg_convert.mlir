// RUN: tra-opt %s --tra-convert-to-linalg | FileCheck %s

// Each conversion is one elementwise generic with the arith cast that has
// tra.convert's semantics.
// CHECK-LABEL: func.func @conversions
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.cmpf une
// f16 to bf16 widens exactly, then rounds once.
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %[[W]] : f32 to bf16
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.extui %{{.*}} : i1 to i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
func.func @conversions(%a: tensor<4xf32>, %b: tensor<4xi64>, %c: tensor<4xf16>, %d: tensor<4xi1>)
    -> (tensor<4xbf16>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xbf16>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>) {
  %0 = tra.convert %a : tensor<4xf32> to tensor<4xbf16>
  %1 = tra.convert %a : tensor<4xf32> to tensor<4xi32>
  %2 = tra.convert %b : tensor<4xi64> to tensor<4xf32>
  %3 = tra.convert %a : tensor<4xf32> to tensor<4xi1>
  %4 = tra.convert %c : tensor<4xf16> to tensor<4xbf16>
  %5 = tra.convert %d : tensor<4xi1> to tensor<4xf32>
  %6 = tra.convert %d : tensor<4xi1> to tensor<4xi64>
  %7 = tra.convert %b : tensor<4xi64> to tensor<4xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7
      : tensor<4xbf16>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xbf16>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>
}
