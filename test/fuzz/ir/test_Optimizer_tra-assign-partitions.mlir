// RUN: tra-opt %s --tra-assign-partitions="hw=%tra_src/hw/dgx-8.json" | FileCheck %s --check-prefix=DGX
// RUN: tra-opt %s --tra-assign-partitions="hw=%tra_src/hw/gpu-1.json" | FileCheck %s --check-prefix=ONE
// RUN: tra-opt %s --tra-assign-partitions="hw=%tra_src/hw/gpu-6x4.json" | FileCheck %s --check-prefix=SIX

// A batch-heavy MLP with small weights: data parallel wherever there is
// more than one device (the batch is cut, the weights are replicated, no
// tile moves); nothing split on one device.

// DGX-LABEL: func.func @mlp
// DGX-SAME: tensor<65536x1024xf32> {tra_plan.dist = #tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>}
// DGX-SAME: tensor<1024x1024xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]>}
// DGX-SAME: tensor<1024x1024xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on {{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]>}
// DGX-SAME: attributes {tra_plan.hardware = "dgx-8", tra_plan.num_devices = 8 : i64}
// DGX: tra.einsum "bd,de->be" {{.*}}tra_plan.results = [#tra_plan.dist<[8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>], tra_plan.split = #tra_plan.split<b = 8>
// DGX: tra.einsum "be->be" {{.*}}tra_plan.split = #tra_plan.split<b = 8>
// DGX: tra.einsum "be,ef->bf" {{.*}}tra_plan.split = #tra_plan.split<b = 8>

// ONE-LABEL: func.func @mlp
// ONE-SAME: {tra_plan.dist = #tra_plan.dist<[1, 1] on [0]>}
// ONE-SAME: attributes {tra_plan.hardware = "gpu-1", tra_plan.num_devices = 1 : i64}
// ONE-COUNT-3: tra_plan.split = #tra_plan.split<>
// ONE-NOT: tra_plan.split<{{[a-z]}}

// SIX-LABEL: func.func @mlp
// SIX-COUNT-3: tra_plan.split = #tra_plan.split<b = 24>
func.func @mlp(%x: tensor<65536x1024xf32>, %w1: tensor<1024x1024xf32>,
               %w2: tensor<1024x1024xf32>) -> tensor<65536x1024xf32> {
  %h = tra.einsum "bd,de->be" mul (%x, %w1) : (tensor<65536x1024xf32>, tensor<1024x1024xf32>) -> tensor<65536x1024xf32>
  %r = tra.einsum "be->be" relu (%h) : (tensor<65536x1024xf32>) -> tensor<65536x1024xf32>
  %y = tra.einsum "be,ef->bf" mul (%r, %w2) : (tensor<65536x1024xf32>, tensor<1024x1024xf32>) -> tensor<65536x1024xf32>
  return %y : tensor<65536x1024xf32>
}

// 52 heads of 128 on 8 devices: the projection is cut in whole heads (tiles
// of 7, 7, 7, 7, 6, 6, 6, 6 heads) so that its tiles are the heads the
// reshape and the per-head reduction read.

// DGX-LABEL: func.func @uneven_heads
// DGX: tra.einsum "sd,ed->se" {{.*}}tra_plan.results = [#tra_plan.dist<[1, 8] unit [1, 128] on [0, 1, 2, 3, 4, 5, 6, 7]>], tra_plan.split = #tra_plan.split<e = 8>
// DGX: tra.reshape {{.*}}tra_plan.results = [#tra_plan.dist<[1, 8, 1] on [0, 1, 2, 3, 4, 5, 6, 7]>]
// DGX: tra.einsum "shd->sh" {{.*}}tra_plan.split = #tra_plan.split<h = 8>
func.func @uneven_heads(%x: tensor<16x8192xf32>, %w: tensor<6656x8192xf32>) -> tensor<16x52xf32> {
  %q = tra.einsum "sd,ed->se" mul (%x, %w) : (tensor<16x8192xf32>, tensor<6656x8192xf32>) -> tensor<16x6656xf32>
  %h = tra.reshape %q : tensor<16x6656xf32> -> tensor<16x52x128xf32>
  %n = tra.einsum "shd->sh" square (%h) : (tensor<16x52x128xf32>) -> tensor<16x52xf32>
  return %n : tensor<16x52xf32>
}

// An argument no operation reads, returned or not, stays whole on device 0.
// DGX-LABEL: func.func @passthrough
// DGX-SAME: %{{[a-z0-9]+}}: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [0]>}
// DGX-SAME: %{{[a-z0-9]+}}: tensor<16xf32> {tra_plan.dist = #tra_plan.dist<[1] on [0]>}
func.func @passthrough(%x: tensor<4x8xf32>, %unused: tensor<16xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
