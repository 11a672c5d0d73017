// y = x w, planned by the optimizer (distributed-matmul.test).
func.func @mm(%x: tensor<96x160xf32> {tra.name = "x"}, %w: tensor<160x112xf32> {tra.name = "w"})
    -> (tensor<96x112xf32> {tra.name = "y"}) {
  %y = tra.einsum "ik,kj->ij" mul (%x, %w) : (tensor<96x160xf32>, tensor<160x112xf32>) -> tensor<96x112xf32>
  return %y : tensor<96x112xf32>
}
