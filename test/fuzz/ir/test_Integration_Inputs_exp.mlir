// exp over the whole f32 range (test/Integration/exp.test).
func.func @main(%x: tensor<65536xf32> {tra.name = "x"}) -> (tensor<65536xf32> {tra.name = "y"}) {
  %y = tra.map "i->i" (%x) : (tensor<65536xf32>) -> tensor<65536xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    tra.yield %r : f32
  }
  return %y : tensor<65536xf32>
}
