// Parses and plans, but cannot be lowered: a tra.map body calls a function.
func.func private @helper(f32) -> f32

func.func @main(%a: tensor<4xf32> {tra.name = "a"}) -> (tensor<4xf32> {tra.name = "y"}) {
  %y = tra.map (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: f32):
    %r = func.call @helper(%v) : (f32) -> f32
    tra.yield %r : f32
  }
  return %y : tensor<4xf32>
}
