func.func @chain(%x: tensor<16x128xf32> {tra.name = "x"}, %w0: tensor<128x128xf32> {tra.name = "w0"},
                 %w1: tensor<128x128xf32> {tra.name = "w1"}, %w2: tensor<128x128xf32> {tra.name = "w2"},
                 %w3: tensor<128x128xf32> {tra.name = "w3"}) -> (tensor<16x128xf32> {tra.name = "y"}) {
  %h0 = tra.einsum "bd,de->be" mul (%x, %w0) : (tensor<16x128xf32>, tensor<128x128xf32>) -> tensor<16x128xf32>
  %h1 = tra.einsum "bd,de->be" mul (%h0, %w1) : (tensor<16x128xf32>, tensor<128x128xf32>) -> tensor<16x128xf32>
  %h2 = tra.einsum "bd,de->be" mul (%h1, %w2) : (tensor<16x128xf32>, tensor<128x128xf32>) -> tensor<16x128xf32>
  %y = tra.einsum "bd,de->be" mul (%h2, %w3) : (tensor<16x128xf32>, tensor<128x128xf32>) -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}
