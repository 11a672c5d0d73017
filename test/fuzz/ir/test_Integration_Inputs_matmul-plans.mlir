// Plans for y = x w (x: 6x10, w: 10x7) written by hand, one per way of
// cutting the contraction, for tests of distributed code generation
// (distributed-matmul.test). Each function is a complete plan
// (tra-verify-plan accepts it); tra-compile keeps a given plan.

// Rows (i) split: x by rows, w replicated, y by rows.
func.func @rows(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1]]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 2 : i64} {
  %y = tra.einsum "ik,kj->ij" mul (%x, %w) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[1, 1] on [[0, 1]]>], tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.split = #tra_plan.split<i = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  return %y : tensor<6x7xf32>
}

// Columns (j) split, unevenly (4 + 3), and the result gathered onto both
// devices (an all-gather of point-to-point moves).
func.func @cols(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1]]>},
                %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 2 : i64} {
  %y = tra.einsum "ik,kj->ij" mul (%x, %w) {tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1]]>, #tra_plan.dist<[1, 2] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[1, 2] on [0, 1]>], tra_plan.split = #tra_plan.split<j = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %g = tra_plan.repartition %y from <[1, 2] on [0, 1]> to <[1, 1] on [[0, 1]]> : tensor<6x7xf32>
  return %g : tensor<6x7xf32>
}

// The aggregated index (k) split: x re-tiled from rows to columns, partial
// sums combined by an all-reduce.
func.func @k_allreduce(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                       %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 2 : i64} {
  %xk = tra_plan.repartition %x from <[2, 1] on [0, 1]> to <[1, 2] on [0, 1]> : tensor<6x10xf32>
  %p = tra.einsum "ik,kj->ij" mul (%xk, %w) {tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], tra_plan.split = #tra_plan.split<k = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %y = tra_plan.all_reduce %p from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<6x7xf32>
  return %y : tensor<6x7xf32>
}

// k split, partial sums combined by a reduce-scatter along the columns (not
// contiguous: the slices are packed).
func.func @k_reducescatter(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[1, 2] on [0, 1]>},
                           %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 2 : i64} {
  %p = tra.einsum "ik,kj->ij" mul (%x, %w) {tra_plan.operands = [#tra_plan.dist<[1, 2] on [0, 1]>, #tra_plan.dist<[2, 1] on [0, 1]>], tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], tra_plan.split = #tra_plan.split<k = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %y = tra_plan.reduce_scatter %p dim 1 from <[1, 1] partial sum on [[0, 1]]> to <[1, 2] on [0, 1]> : tensor<6x7xf32>
  return %y : tensor<6x7xf32>
}

// Four devices: i and j split 2 x 2 (x by rows on device pairs, w by columns),
// and the result re-tiled by rows over all four devices.
func.func @grid(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[2, 1] on [[0, 1], [2, 3]]>},
                %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[1, 2] on [[0, 2], [1, 3]]>})
    -> (tensor<6x7xf32> {tra.name = "y"}) attributes {tra_plan.num_devices = 4 : i64} {
  %y = tra.einsum "ik,kj->ij" mul (%x, %w) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [[0, 1], [2, 3]]>, #tra_plan.dist<[1, 2] on [[0, 2], [1, 3]]>], tra_plan.results = [#tra_plan.dist<[2, 2] on [0, 1, 2, 3]>], tra_plan.split = #tra_plan.split<i = 2, j = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %r = tra_plan.repartition %y from <[2, 2] on [0, 1, 2, 3]> to <[4, 1] on [0, 1, 2, 3]> : tensor<6x7xf32>
  return %r : tensor<6x7xf32>
}

// 2 x 2 tiles of y on 4 ranks, and a copy of it gathered onto every rank
// (for --output-per-rank: four tile files of y, one of z).
func.func @tiles(%x: tensor<6x10xf32> {tra.name = "x", tra_plan.dist = #tra_plan.dist<[2, 1] on [[0, 1], [2, 3]]>},
                 %w: tensor<10x7xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[1, 2] on [[0, 2], [1, 3]]>})
    -> (tensor<6x7xf32> {tra.name = "y"}, tensor<6x7xf32> {tra.name = "z"}) attributes {tra_plan.num_devices = 4 : i64} {
  %y = tra.einsum "ik,kj->ij" mul (%x, %w) {tra_plan.operands = [#tra_plan.dist<[2, 1] on [[0, 1], [2, 3]]>, #tra_plan.dist<[1, 2] on [[0, 2], [1, 3]]>], tra_plan.results = [#tra_plan.dist<[2, 2] on [0, 1, 2, 3]>], tra_plan.split = #tra_plan.split<i = 2, j = 2>} : (tensor<6x10xf32>, tensor<10x7xf32>) -> tensor<6x7xf32>
  %z = tra_plan.repartition %y from <[2, 2] on [0, 1, 2, 3]> to <[1, 1] on [[0, 1, 2, 3]]> : tensor<6x7xf32>
  return %y, %z : tensor<6x7xf32>, tensor<6x7xf32>
}
