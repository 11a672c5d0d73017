// RUN: tra-opt %s --tra-convert-to-linalg | FileCheck %s

// Small fills are constants; large ones a linalg.fill, so that no large
// constant ends up in the object file.
// CHECK-LABEL: func.func @fills
// CHECK: %[[EPS:.*]] = arith.constant dense<9.99999974E-6> : tensor<f32>
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : bf16
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<64x64xbf16>
// CHECK: %[[BIG:.*]] = linalg.fill ins(%[[HALF]] : bf16) outs(%[[EMPTY]] : tensor<64x64xbf16>)
// CHECK: %[[POS:.*]] = arith.constant dense<3> : tensor<4xi64>
// CHECK: return %[[EPS]], %[[BIG]], %[[POS]]
func.func @fills() -> (tensor<f32>, tensor<64x64xbf16>, tensor<4xi64>) {
  %0 = tra.fill 1.0e-05 : tensor<f32>
  %1 = tra.fill 0.5 : tensor<64x64xbf16>
  %2 = tra.fill 3 : tensor<4xi64>
  return %0, %1, %2 : tensor<f32>, tensor<64x64xbf16>, tensor<4xi64>
}
