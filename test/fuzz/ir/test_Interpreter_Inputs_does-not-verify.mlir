// A model that parses but does not verify (used by errors.test).
func.func @main(%a: tensor<4x8xf32>, %b: tensor<9x16xf32>) -> tensor<4x16xf32> {
  // The join index j has two different extents.
  %0 = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<4x8xf32>, tensor<9x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
