// A model with a declared (bodiless) function: tra-interpret refuses to
// evaluate it instead of running an empty body.
func.func private @ext(tensor<2xf32>) -> tensor<2xf32>
