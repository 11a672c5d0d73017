// RUN: not tra-opt %s --tra-map-to-gpu=block-size=0 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: tra-opt %s --tra-map-to-gpu -split-input-file -verify-diagnostics

// BLOCK: error: tra-map-to-gpu: block-size must be in [1, 1024]

#id = affine_map<(d0) -> (d0)>

// The pass runs after bufferization: linalg on tensors is refused.
func.func @negative_tensors(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{tra-map-to-gpu expects linalg ops on buffers (run it after bufferization)}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
