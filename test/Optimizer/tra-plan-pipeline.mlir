// RUN: tra-opt %s --split-input-file --verify-diagnostics --tra-plan-pipeline="hw=%tra_src/hw/gpu-4.json" | FileCheck %s
// RUN: not tra-opt %s --tra-plan-pipeline="hw=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// The pipeline is the sequence tra-compile plans with (plan::planModule):
// the same options give the same planned IR.
// RUN: tra-opt %S/Inputs/mlp.mlir --tra-plan-pipeline="hw=%tra_src/hw/gpu-4.json beam=8 max-split-indices=1" -o %t.pipeline.mlir
// RUN: tra-compile %S/Inputs/mlp.mlir --hw %tra_src/hw/gpu-4.json --beam 8 --max-split-indices 1 --emit=plan | tra-opt -o %t.compile.mlir
// RUN: diff %t.pipeline.mlir %t.compile.mlir
// RUN: tra-opt %t.pipeline.mlir --tra-verify-plan -o /dev/null

// MISSING: error: tra-decompose: {{.*}}missing.json: cannot open

// Calls are inlined and the callee removed before planning; the plan is
// made and its moves inserted.
// CHECK-NOT: @layer
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<4096x256xf32> {tra_plan.dist = #tra_plan.dist<[4, 1] on [0, 1, 2, 3]>}
// CHECK-SAME: tra_plan.hardware = "gpu-4", tra_plan.num_devices = 4 : i64
// CHECK-NOT: func.call
// CHECK: tra.einsum "bd,de->be" {{.*}}tra_plan.split = #tra_plan.split<b = 4>
// CHECK: tra.einsum "bd,de->be" {{.*}}tra_plan.split = #tra_plan.split<b = 4>
// CHECK-NOT: @layer
func.func private @layer(%x: tensor<4096x256xf32>, %w: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %h = tra.einsum "bd,de->be" mul (%x, %w) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  return %h : tensor<4096x256xf32>
}

func.func @two_layers(%x: tensor<4096x256xf32>, %w1: tensor<256x256xf32>,
                      %w2: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %h = func.call @layer(%x, %w1) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  %y = func.call @layer(%h, %w2) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  return %y : tensor<4096x256xf32>
}

// -----

// A model that does not fit is an error at its function.
// expected-error @+1 {{@negative_no_fit does not fit in the memory of gpu-4}}
func.func @negative_no_fit(%x: tensor<25000000000xf32>) -> tensor<25000000000xf32> {
  %y = arith.negf %x : tensor<25000000000xf32>
  return %y : tensor<25000000000xf32>
}
