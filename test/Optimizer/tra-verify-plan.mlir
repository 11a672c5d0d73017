// RUN: tra-opt %s --split-input-file --verify-diagnostics --tra-verify-plan | FileCheck %s

// A consistent plan passes unchanged.
// CHECK-LABEL: func.func @consistent
// CHECK: tra_plan.all_reduce
func.func @consistent(%g: tensor<64x256xf32> {tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>},
                      %w: tensor<64x256xf32> {tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>})
    -> tensor<64x64xf32> attributes {tra_plan.num_devices = 2 : i64} {
  %p = tra.einsum "sf,df->sd" mul (%g, %w) {
      tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[1, 2] on [0, 1]>],
      tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>],
      tra_plan.split = #tra_plan.split<f = 2>}
      : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x64xf32>
  %r = tra_plan.all_reduce %p from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

func.func @negative_mismatch(%a: tensor<64x64xf32> {tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>}) -> tensor<64xf32> {
  // expected-error @+1 {{operand 0 is written as #tra_plan.dist<[1, 2] on [0, 1]> but read as #tra_plan.dist<[2, 1] on [0, 1]>; run tra-insert-repartitions}}
  %s = tra.einsum "sd->s" square (%a) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

func.func @negative_unplanned(%a: tensor<64x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{operand 0 has no distribution: its producer is not planned}}
  %s = tra.einsum "sd->s" square (%a) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

func.func @negative_partial_result(%g: tensor<64x256xf32> {tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>}) -> tensor<64xf32> {
  %p = tra.einsum "sf->s" id (%g) {
      tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>],
      tra_plan.results = [#tra_plan.dist<[1] partial sum on [[0, 1]]>]}
      : (tensor<64x256xf32>) -> tensor<64xf32>
  // expected-error @+1 {{result 0 is returned as partial aggregates #tra_plan.dist<[1] partial sum on [[0, 1]]>; run tra-insert-repartitions}}
  return %p : tensor<64xf32>
}

// -----

// expected-error @+1 {{plan places a tile on device 2 but the hardware has 2 devices}}
func.func @negative_device(%a: tensor<64x64xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 2]>}) -> tensor<64x64xf32>
    attributes {tra_plan.num_devices = 2 : i64} {
  return %a : tensor<64x64xf32>
}
