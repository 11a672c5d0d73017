// RUN: tra-opt %s --split-input-file --verify-diagnostics --tra-assign-partitions="hw=%tra_src/hw/gpu-1.json"

func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32>

// expected-error @+1 {{@negative_call calls @callee; inline the model first (--inline)}}
func.func @negative_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// 160 GB of weights on one 80 GiB GPU; at least the largest activation must
// fit too.
// expected-error @+1 {{@negative_too_large needs at least 160001600128 bytes (149.01 GiB) of memory (149.01 GiB of arguments and weights, 781.38 KiB of activations) but gpu-1 has 85899345920 bytes (80.00 GiB) in 1 device}}
func.func @negative_too_large(%w: tensor<200000x200000xf32>, %x: tensor<200000xf32>) -> tensor<32xf32> {
  %y = tra.einsum "ij,j->i" mul (%w, %x) : (tensor<200000x200000xf32>, tensor<200000xf32>) -> tensor<200000xf32>
  %s = tra.slice %y dim 0 offset 0 size 32 : tensor<200000xf32> -> tensor<32xf32>
  return %s : tensor<32xf32>
}
