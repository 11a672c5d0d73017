// Products that run through the kernels compiled into the program. c and
// d: large enough for the runtime's packed GEMM (more than 2^20
// multiply-adds, more than one row), with edges in every blocking
// dimension: 45 rows (not a multiple of the 8-row sliver), 99 columns (not
// a multiple of the 32-column sliver), k = 300 (a second block of k after
// the first 256); B as stored (c) and transposed (d, a weight in Meta's
// layout). e: one row (a decoding step's projection, one dot product per
// output, 300 = 9 x 32 + 12 elements: a masked tail).
func.func @main(%a: tensor<45x300xf32> {tra.name = "a"},
                %b: tensor<300x99xf32> {tra.name = "b"},
                %w: tensor<99x300xf32> {tra.name = "w"},
                %x: tensor<300xf32> {tra.name = "x"},
                %v: tensor<256x300xf32> {tra.name = "v"})
    -> (tensor<45x99xf32> {tra.name = "c"},
        tensor<45x99xf32> {tra.name = "d"},
        tensor<256xf32> {tra.name = "e"}) {
  %c = tra.einsum "ik,kj->ij" mul (%a, %b)
      : (tensor<45x300xf32>, tensor<300x99xf32>) -> tensor<45x99xf32>
  %d = tra.einsum "ik,jk->ij" mul (%a, %w)
      : (tensor<45x300xf32>, tensor<99x300xf32>) -> tensor<45x99xf32>
  %e = tra.einsum "k,jk->j" mul (%x, %v)
      : (tensor<300xf32>, tensor<256x300xf32>) -> tensor<256xf32>
  return %c, %d, %e : tensor<45x99xf32>, tensor<45x99xf32>, tensor<256xf32>
}
