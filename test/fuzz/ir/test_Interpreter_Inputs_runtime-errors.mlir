// Models that verify but fail at run time (used by errors.test).
func.func @gather(%t: tensor<5x2xf32> {tra.name = "table"}, %i: tensor<3xi64> {tra.name = "ids"}) -> (tensor<3x2xf32> {tra.name = "r"}) {
  %0 = tra.gather %t[%i] : tensor<5x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

func.func @update(%c: tensor<16x2xf32> {tra.name = "cache"}, %u: tensor<4x2xf32> {tra.name = "upd"}, %p: tensor<i64> {tra.name = "pos"}) -> tensor<16x2xf32> {
  %0 = tra.update_slice %u into %c dim 0 at %p : tensor<4x2xf32> into tensor<16x2xf32> at tensor<i64>
  return %0 : tensor<16x2xf32>
}

func.func @unsupported(%u: tensor<4x2xf32> {tra.name = "upd"}) -> tensor<4x2xi32> {
  %0 = tra.map (%u) : (tensor<4x2xf32>) -> tensor<4x2xi32> {
  ^bb0(%x: f32):
    %b = arith.bitcast %x : f32 to i32
    tra.yield %b : i32
  }
  return %0 : tensor<4x2xi32>
}
