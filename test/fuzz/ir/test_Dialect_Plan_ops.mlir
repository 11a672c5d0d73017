// RUN: tra-opt %s | FileCheck %s
// RUN: tra-opt %s --mlir-print-op-generic | tra-opt | FileCheck %s

// CHECK-LABEL: func.func @moves
func.func @moves(%x: tensor<16x64xf32>, %p: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  // CHECK: tra_plan.repartition %{{.*}} from <[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]> to <[1, 1] on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<16x64xf32>
  %r = tra_plan.repartition %x
      from <[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>
      to <[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<16x64xf32>
  // CHECK: tra_plan.all_reduce %{{.*}} from <[1, 1] partial sum on {{\[\[}}0, 1, 2, 3]]> to <[1, 1] on {{\[\[}}0, 1, 2, 3]]>
  %a = tra_plan.all_reduce %p
      from <[1, 1] partial sum on [[0, 1, 2, 3]]>
      to <[1, 1] on [[0, 1, 2, 3]]> : tensor<16x64xf32>
  // CHECK: tra_plan.reduce_scatter %{{.*}} dim 0 from <[1, 1] partial max on {{\[\[}}0, 1, 2, 3]]> to <[4, 1] on [0, 1, 2, 3]>
  %s = tra_plan.reduce_scatter %p dim 0
      from <[1, 1] partial max on [[0, 1, 2, 3]]>
      to <[4, 1] on [0, 1, 2, 3]> : tensor<16x64xf32>
  return %r, %a, %s : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

// Units: 52 heads of 128 elements in 8 tiles of 7, 7, 7, 7, 6, 6, 6, 6 heads.
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: tra_plan.dist = #tra_plan.dist<[1, 8] unit [1, 128] on [0, 1, 2, 3, 4, 5, 6, 7]>
func.func @uneven(%q: tensor<4x6656xf32> {tra_plan.dist = #tra_plan.dist<[1, 8] unit [1, 128] on [0, 1, 2, 3, 4, 5, 6, 7]>}) -> tensor<4x6656xf32> {
  return %q : tensor<4x6656xf32>
}

// Plan attributes on a model-level operation and its function.
// CHECK-LABEL: func.func @annotated
// CHECK-SAME: tra_plan.hardware = "two-gpus", tra_plan.num_devices = 2 : i64
// CHECK: tra.einsum
// CHECK-SAME: tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[1, 1] on {{\[\[}}0, 1]]>]
// CHECK-SAME: tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>]
// CHECK-SAME: tra_plan.split = #tra_plan.split<b = 2>
func.func @annotated(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32>
    attributes {tra_plan.hardware = "two-gpus", tra_plan.num_devices = 2 : i64} {
  %y = tra.einsum "bd,de->be" mul (%x, %w) {
      tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[1, 1] on [[0, 1]]>],
      tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>],
      tra_plan.split = #tra_plan.split<b = 2>}
      : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// Split attributes: replicas anywhere among the axes; nothing split; a
// later block of devices (a pipeline stage; 0 is not printed).
// CHECK-LABEL: func.func @splits
// CHECK: tra_plan.split = #tra_plan.split<s = 2, replicas = 4>
// CHECK: tra_plan.split = #tra_plan.split<replicas = 4, s = 2>
// CHECK: tra_plan.split = #tra_plan.split<>
// CHECK: tra_plan.split = #tra_plan.split<s = 2, first_device = 6>
// CHECK: tra_plan.split = #tra_plan.split<first_device = 3>
// CHECK: tra_plan.split = #tra_plan.split<d = 2>
// CHECK: tra_plan.split = #tra_plan.split<s = 2, weights = [3, 1]>
func.func @splits(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %a = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<s = 2, replicas = 4>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %b = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<replicas = 4, s = 2>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %d = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<first_device = 6, s = 2>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %e = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<first_device = 3>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %f = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<d = 2, first_device = 0>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = tra.einsum "sd,sd->sd" add (%x, %x) {tra_plan.split = #tra_plan.split<s = 2, weights = [3, 1]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %a, %b, %c, %d, %e, %f, %g : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// Uneven tiles: 6 rows cut 2:1 (4 and 2), equal weights on the columns.
// CHECK-LABEL: func.func @weighted_tiles
// CHECK-SAME: #tra_plan.dist<[2, 1] weights [2, 1, 1] on [0, 1]>
func.func @weighted_tiles(%x: tensor<6x4xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] weights [2, 1, 1] on [0, 1]>}) -> tensor<6x4xf32> {
  return %x : tensor<6x4xf32>
}

// A 0-d tensor is one tile.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: #tra_plan.dist<[] on {{\[\[}}0, 1, 2]]>
func.func @scalar(%p: tensor<i64> {tra_plan.dist = #tra_plan.dist<[] on [[0, 1, 2]]>}) -> tensor<i64> {
  return %p : tensor<i64>
}

// An argument streamed from host memory keeps its tier through printing.
// CHECK-LABEL: func.func @tiered
// CHECK-SAME: tra_plan.tier = "host"
// CHECK-SAME: tra_plan.tier = "disk"
func.func @tiered(%w: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [0]>, tra_plan.tier = "host"},
                  %v: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [0]>, tra_plan.tier = "disk"}) {
  return
}
