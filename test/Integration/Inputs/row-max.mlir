// The row maximum and row sum of a softmax over blocks of 64 keys (the
// reductions of an attention block), for the loop annotations of
// tra-attach-loop-annotations.mlir.
func.func @main(%scores: tensor<128x64xf32> {tra.name = "scores"})
    -> (tensor<128xf32> {tra.name = "max"}, tensor<128xf32> {tra.name = "sum"}) {
  %max = tra.einsum "st->s" id (%scores) reduce max : (tensor<128x64xf32>) -> tensor<128xf32>
  %sum = tra.einsum "st->s" id (%scores) : (tensor<128x64xf32>) -> tensor<128xf32>
  return %max, %sum : tensor<128xf32>, tensor<128xf32>
}
