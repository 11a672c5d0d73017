// RUN: tra-opt %s --tra-prepare-entry --split-input-file --verify-diagnostics
// RUN: not tra-opt %s --tra-prepare-entry=entry=missing --split-input-file 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: no function @missing with a body

// expected-error @+1 {{entry function @main argument #0 has type 'tensor<?xf32>'; entry tensors must have static shapes}}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{entry function @main argument #0 has type 'f32'; entry arguments and results must be ranked tensors}}
func.func @main(%x: f32) -> f32 {
  return %x : f32
}

// -----

// expected-error @+1 {{entry function @main argument #0 has type 'tensor<4xf64>'; entry element types must be f32, f16, bf16, i64, i32 or i1}}
func.func @main(%x: tensor<4xf64>) -> tensor<4xf32> {
  %y = arith.truncf %x : tensor<4xf64> to tensor<4xf32>
  return %y : tensor<4xf32>
}
