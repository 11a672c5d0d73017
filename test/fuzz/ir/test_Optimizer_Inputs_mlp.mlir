// A two-layer MLP over a large batch, with the layers as calls.
func.func private @layer(%x: tensor<4096x256xf32>, %w: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %h = tra.einsum "bd,de->be" mul (%x, %w) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  %r = tra.einsum "be->be" relu (%h) : (tensor<4096x256xf32>) -> tensor<4096x256xf32>
  return %r : tensor<4096x256xf32>
}

func.func @mlp(%x: tensor<4096x256xf32> {tra.name = "x"}, %w1: tensor<256x256xf32> {tra.name = "w1"},
               %w2: tensor<256x256xf32> {tra.name = "w2"}) -> tensor<4096x256xf32> {
  %h = func.call @layer(%x, %w1) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  %y = func.call @layer(%h, %w2) : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  return %y : tensor<4096x256xf32>
}
