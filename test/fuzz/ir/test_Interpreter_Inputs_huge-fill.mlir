// A fill of 2^42 elements, then slices down to two: valid IR whose first
// tensor the reference interpreter cannot hold (errors.test).
func.func @main() -> (tensor<2xf32> {tra.name = "y"}) {
  %f = tra.fill 1.0 : tensor<1099511627776x4xf32>
  %s = tra.slice %f dim 0 offset 0 size 1 : tensor<1099511627776x4xf32> -> tensor<1x4xf32>
  %r = tra.reshape %s : tensor<1x4xf32> -> tensor<4xf32>
  %y = tra.slice %r dim 0 offset 0 size 2 : tensor<4xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
