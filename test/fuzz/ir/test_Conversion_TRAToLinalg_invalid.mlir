// RUN: tra-opt %s --tra-convert-to-linalg --split-input-file --verify-diagnostics

func.func private @helper(f32) -> f32

func.func @negative_map_body_call(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tra.map' op body operation 'func.call' cannot be lowered: a tra.map body may use arith and math only}}
  %y = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-note @+1 {{see the operation here}}
    %r = func.call @helper(%v) : (f32) -> f32
    tra.yield %r : f32
  }
  return %y : tensor<4xf32>
}
