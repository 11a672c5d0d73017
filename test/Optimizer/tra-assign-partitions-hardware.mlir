// RUN: tra-opt %s --split-input-file --verify-diagnostics --tra-assign-partitions="hw=%tra_src/hw/gpu-4.json"
// RUN: not tra-opt %s --tra-assign-partitions="hw=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// MISSING: error: tra-assign-partitions: {{.*}}missing.json: cannot open

// An operation the optimizer does not look into runs whole on device 0: its
// 100 GB operand and 100 GB result fit in the four GPUs together but not on
// device 0.
// expected-error @+1 {{@negative_no_fit does not fit in the memory of gpu-4: the plan using the least memory needs 200000000000 bytes (186.26 GiB) on device 0, which has 85899345920 bytes (80.00 GiB) (the model needs at least 200000000000 bytes (186.26 GiB) in all; the hardware has 343597383680 bytes (320.00 GiB))}}
func.func @negative_no_fit(%x: tensor<25000000000xf32>) -> tensor<25000000000xf32> {
  %y = arith.negf %x : tensor<25000000000xf32>
  return %y : tensor<25000000000xf32>
}
