// RUN: tra-opt %s -split-input-file -verify-diagnostics

func.func @negative_grid_rank(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'from' distribution of rank 1 does not match 'tensor<16x64xf32>'}}
  %r = tra_plan.repartition %x from <[2] on [0, 1]> to <[1, 1] on [0]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_too_many_tiles(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'to' dimension 0 of 'tensor<16x64xf32>' has 2 units of 8 elements; cannot cut it into 4 tiles}}
  %r = tra_plan.repartition %x from <[1, 1] on [0]> to <[4, 1] unit [8, 1] on [0, 1, 2, 3]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_move_partial(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{cannot move partial aggregates; combine them with tra_plan.all_reduce or tra_plan.reduce_scatter first}}
  %r = tra_plan.repartition %x from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [0]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_to_partial(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'to' must not be partial}}
  %r = tra_plan.repartition %x from <[1, 1] on [0]> to <[1, 1] partial sum on [[0, 1]]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_all_reduce_not_partial(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'from' must be partial}}
  %r = tra_plan.all_reduce %x from <[1, 1] on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_all_reduce_moves(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'to' must be 'from' without 'partial'}}
  %r = tra_plan.all_reduce %x from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 2]]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_reduce_scatter_grid(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'to' must have 4 tiles along dimension 0, got 2}}
  %r = tra_plan.reduce_scatter %x dim 0 from <[1, 1] partial sum on [[0, 1, 2, 3]]> to <[2, 1] on [0, 1]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_reduce_scatter_devices(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{tile 1 of 'to' must be on device 1, the holder of its slice}}
  %r = tra_plan.reduce_scatter %x dim 0 from <[1, 1] partial sum on [[0, 1]]> to <[2, 1] on [0, 3]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_reduce_scatter_dim(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %r = tra_plan.reduce_scatter %x dim 2 from <[1, 1] partial sum on [[0, 1]]> to <[2, 1] on [0, 1]> : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @negative_reduce_scatter_slices(%x: tensor<10x4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{tiles 0..1 of 'to' along dimension 0 must cover exactly tile 0 of 'from'}}
  %r = tra_plan.reduce_scatter %x dim 0 from <[2, 1] partial sum on [[0, 1], [2, 3]]> to <[4, 1] on [0, 1, 2, 3]> : tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// -----

// expected-error @+1 {{expected 2 devices (2 tiles x 1 copies), got 3}}
func.func private @negative_device_count() -> () attributes {d = #tra_plan.dist<[2] on [0, 1, 2]>}

// -----

// expected-error @+1 {{tile 0 lists device 1 twice}}
func.func private @negative_duplicate_device() -> () attributes {d = #tra_plan.dist<[1] on [[1, 1]]>}

// -----

// expected-error @+1 {{a partial distribution needs at least 2 copies of each tile}}
func.func private @negative_partial_single() -> () attributes {d = #tra_plan.dist<[2] partial sum on [0, 1]>}

// -----

// expected-error @+1 {{grid dimension 0 must be positive, got 0}}
func.func private @negative_zero_grid() -> () attributes {d = #tra_plan.dist<[0] on [0]>}

// -----

// expected-error @+1 {{grid has 1 dimensions but unit has 2}}
func.func private @negative_unit_rank() -> () attributes {d = #tra_plan.dist<[2] unit [1, 1] on [0, 1]>}

// -----

// expected-error @+1 {{every tile must have the same number of copies}}
func.func private @negative_ragged() -> () attributes {d = #tra_plan.dist<[2] on [[0, 1], [2]]>}

// -----

// expected-error @+1 {{device list mixes devices and lists of devices}}
func.func private @negative_mixed() -> () attributes {d = #tra_plan.dist<[2] on [[0, 1], 2]>}

// -----

// expected-error @+1 {{unknown aggregation 'mean'}}
func.func private @negative_aggregation() -> () attributes {d = #tra_plan.dist<[1] partial mean on [[0, 1]]>}

// -----

// expected-error @+1 {{index 's' must be split into at least 2 parts, got 1}}
func.func private @negative_split_one() -> () attributes {s = #tra_plan.split<s = 1>}

// -----

// expected-error @+1 {{index 's' is split twice}}
func.func private @negative_split_twice() -> () attributes {s = #tra_plan.split<s = 2, s = 4>}

// -----

// expected-error @+1 {{expected an index letter, 'replicas', 'first_device' or 'weights', got 'rows'}}
func.func private @negative_split_name() -> () attributes {s = #tra_plan.split<rows = 2>}

// -----

// expected-error @+1 {{first_device must be a device number, got -1}}
func.func private @negative_split_first_device() -> () attributes {s = #tra_plan.split<s = 2, first_device = -1>}

// -----

func.func @negative_operands_count(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'tra_plan.operands' has 1 distributions for 2 operands}}
  %y = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.operands = [#tra_plan.dist<[1, 1] on [0]>]} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @negative_results_rank(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'tra_plan.results' entry 0: distribution of rank 1 does not match 'tensor<8x4xf32>'}}
  %y = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.results = [#tra_plan.dist<[1] on [0]>]} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @negative_results_type(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'tra_plan.results' must be an array of #tra_plan.dist}}
  %y = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.results = 3 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @negative_split_type(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'tra_plan.split' must be a #tra_plan.split}}
  %y = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = "s"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// expected-error @+1 {{unknown attribute 'tra_plan.bogus' of the tra_plan dialect}}
func.func @negative_unknown_attr() attributes {tra_plan.bogus = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{'tra_plan.num_devices' must be a positive integer}}
func.func @negative_num_devices() attributes {tra_plan.num_devices = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'tra_plan.dist' of argument 0: dimension 0 of 'tensor<4x8xf32>' has 4 units of 1 elements; cannot cut it into 8 tiles}}
func.func @negative_arg_dist(%x: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>}) {
  return
}

// -----

// expected-error @+1 {{'tra_plan.dist' of argument 0 must be a #tra_plan.dist}}
func.func @negative_arg_dist_type(%x: tensor<4x8xf32> {tra_plan.dist = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{unknown argument attribute 'tra_plan.other' of the tra_plan dialect}}
func.func @negative_arg_attr(%x: tensor<4x8xf32> {tra_plan.other = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'tra_plan.tier' of argument 0 must be "host" or "disk"}}
func.func @bad_tier(%x: tensor<4x8xf32> {tra_plan.tier = "ssd"}) {
  return
}

// -----

// expected-error @+1 {{'tra_plan.tier' of argument 0 must be "host" or "disk"}}
func.func @bad_tier_type(%x: tensor<4x8xf32> {tra_plan.tier = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{expected 3 weights (one per tile coordinate of every dimension), got 2}}
func.func private @negative_dist_weights_count() -> () attributes {d = #tra_plan.dist<[2, 1] weights [3, 1] on [0, 1]>}

// -----

// expected-error @+1 {{tile weights must be in [1, 1024], got 0}}
func.func private @negative_dist_weights_zero() -> () attributes {d = #tra_plan.dist<[2, 1] weights [0, 1, 1] on [0, 1]>}

// -----

// Weights so uneven that a tile of 4 rows gets none.
// expected-error @+1 {{the weights of dimension 0 leave tile 0 of 'tensor<4x2xf32>' empty}}
func.func @negative_dist_weights_empty_tile(%x: tensor<4x2xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] weights [1, 1000, 1] on [0, 1]>}) {
  return
}

// -----

// expected-error @+1 {{weights need exactly one split index and no replicas}}
func.func private @negative_split_weights_replicas() -> () attributes {s = #tra_plan.split<s = 2, replicas = 2, weights = [3, 1]>}

// -----

// expected-error @+1 {{expected 2 weights, got 3}}
func.func private @negative_split_weights_count() -> () attributes {s = #tra_plan.split<s = 2, weights = [3, 1, 1]>}
