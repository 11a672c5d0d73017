// A function whose signature has a dynamic shape but no tra op to verify it:
// the planner refuses it (dynamic-signature.test).
func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
