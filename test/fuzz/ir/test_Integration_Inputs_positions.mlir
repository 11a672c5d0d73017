// A model whose positions and indices come from its inputs, for the
// run-time bounds checks of exec-errors.test.
func.func @main(%table: tensor<8x4xf32> {tra.name = "table"},
                %ids: tensor<3xi64> {tra.name = "ids"},
                %cache: tensor<8x4xf32> {tra.name = "cache"},
                %pos: tensor<i32> {tra.name = "pos"})
    -> (tensor<8x4xf32> {tra.name = "updated"}) {
  %rows = tra.gather %table[%ids] : tensor<8x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %updated = tra.update_slice %rows into %cache dim 0 at %pos
      : tensor<3x4xf32> into tensor<8x4xf32> at tensor<i32>
  return %updated : tensor<8x4xf32>
}
