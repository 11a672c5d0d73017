// RUN: tra-opt %s --split-input-file --verify-diagnostics --tra-insert-repartitions="hw=%tra_src/hw/dgx-8.json" | FileCheck %s

// Partial sums read whole on every device: an all-reduce.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %[[P:.*]] = tra.einsum "sf,df->sd"
// CHECK: %[[R:.*]] = tra_plan.all_reduce %[[P]] from <[1, 1] partial sum on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> to <[1, 1] on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]>
// CHECK: tra.einsum "sd,sd->sd" add (%{{.*}}, %[[R]])
func.func @all_reduce(%g: tensor<64x256xf32>, %w: tensor<64x256xf32>, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %p = tra.einsum "sf,df->sd" mul (%g, %w) {
      tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1, 2, 3, 4, 5, 6, 7]]>]}
      : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x64xf32>
  %o = tra.einsum "sd,sd->sd" add (%x, %p) {
      tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]>, #tra_plan.dist<[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]>]}
      : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}

// -----

// Partial sums read as row tiles, one per device: a reduce-scatter.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: %[[P:.*]] = tra.einsum "sf,df->sd"
// CHECK-NEXT: %[[R:.*]] = tra_plan.reduce_scatter %[[P]] dim 0 from <[1, 1] partial sum on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> to <[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>
// CHECK-NEXT: tra.einsum "sd->s" square (%[[R]])
func.func @reduce_scatter(%g: tensor<64x256xf32>, %w: tensor<64x256xf32>) -> tensor<64xf32> {
  %p = tra.einsum "sf,df->sd" mul (%g, %w) {
      tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1, 2, 3, 4, 5, 6, 7]]>]}
      : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x64xf32>
  %s = tra.einsum "sd->s" square (%p) {
      tra_plan.operands = [#tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>],
      tra_plan.results = [#tra_plan.dist<[8] on [0, 1, 2, 3, 4, 5, 6, 7]>]}
      : (tensor<64x64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// Column tiles read as row tiles: a repartition, shared by both readers;
// a reader of the producer's own distribution reads it directly.
// CHECK-LABEL: func.func @repartition
// CHECK: %[[X:.*]] = tra.map
// CHECK: %[[R:.*]] = tra_plan.repartition %[[X]] from <[1, 4] on [0, 1, 2, 3]> to <[4, 1] on [0, 1, 2, 3]>
// CHECK-NOT: tra_plan.repartition
// CHECK: tra.einsum "sd->s" square (%[[R]])
// CHECK: tra.einsum "sd->s" id (%[[R]])
// CHECK: tra.einsum "sd->d" id (%[[X]])
func.func @repartition(%a: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %x = tra.map (%a) {tra_plan.results = [#tra_plan.dist<[1, 4] on [0, 1, 2, 3]>]} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%v: f32):
    tra.yield %v : f32
  }
  %s = tra.einsum "sd->s" square (%x) {tra_plan.operands = [#tra_plan.dist<[4, 1] on [0, 1, 2, 3]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  %t = tra.einsum "sd->s" id (%x) {tra_plan.operands = [#tra_plan.dist<[4, 1] on [0, 1, 2, 3]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  %u = tra.einsum "sd->d" id (%x) {tra_plan.operands = [#tra_plan.dist<[1, 4] on [0, 1, 2, 3]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  return %s, %t, %u : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// An argument the loader placed elsewhere than its reader wants; partial
// sums returned from the function are combined first.
// CHECK-LABEL: func.func @argument_and_result
// CHECK: %[[A:.*]] = tra_plan.repartition %arg0 from <[1, 1] on [0]> to <[1, 2] on [0, 1]>
// CHECK: %[[P:.*]] = tra.einsum "sd,de->se" mul (%[[A]], %arg1)
// CHECK: %[[R:.*]] = tra_plan.{{all_reduce|reduce_scatter}} %[[P]]
// CHECK: return %[[R]]
func.func @argument_and_result(
    %x: tensor<64x64xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [0]>},
    %w: tensor<64x64xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>}) -> tensor<64x64xf32> {
  %p = tra.einsum "sd,de->se" mul (%x, %w) {
      tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[2, 1] on [0, 1]>],
      tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>],
      tra_plan.split = #tra_plan.split<d = 2>}
      : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %p : tensor<64x64xf32>
}

// -----

func.func @negative_device(%a: tensor<64x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{plan places a tile on device 9 but the hardware has 8 devices}}
  %s = tra.einsum "sd->s" square (%a) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 9]>]} : (tensor<64x64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}
