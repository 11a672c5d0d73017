// RUN: tra-opt %s --split-input-file --tra-localize -verify-diagnostics

// expected-error @+1 {{value has no distribution; run tra-decompose before tra-localize}}
func.func @no_dist(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tra_plan.num_devices = 2 : i64} {
  return %x : tensor<4xf32>
}

// -----

func.func @unplanned(%x: tensor<4xf32> {tra_plan.dist = #tra_plan.dist<[1] on [[0, 1]]>}) -> tensor<4xf32> attributes {tra_plan.num_devices = 2 : i64} {
  // expected-error @+1 {{operation is not planned; run tra-decompose before tra-localize}}
  %y = tra.einsum "i,i->i" add (%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @two_tiles(%x: tensor<4xf32> {tra_plan.dist = #tra_plan.dist<[2] on [0, 0]>}) -> tensor<4xf32> attributes {tra_plan.num_devices = 2 : i64} {
  // expected-error @-1 {{device 0 holds tiles 0 and 1 of [2] on 0; one tile per device is supported}}
  return %x : tensor<4xf32>
}

// -----

func.func @update_split(%u: tensor<1x4xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1]]>},
                        %c: tensor<8x4xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                        %p: tensor<i64> {tra_plan.dist = #tra_plan.dist<[] on [[0, 1]]>})
    -> tensor<8x4xf32> attributes {tra_plan.num_devices = 2 : i64} {
  // expected-error @+1 {{cannot localize an update_slice whose destination is split along the updated dimension}}
  %r = tra.update_slice %u into %c dim 0 at %p {tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1]]>, #tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[] on [[0, 1]]>], tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.split = #tra_plan.split<a = 2>} : tensor<1x4xf32> into tensor<8x4xf32> at tensor<i64>
  return %r : tensor<8x4xf32>
}
