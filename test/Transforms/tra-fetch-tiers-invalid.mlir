// RUN: tra-opt %s --tra-fetch-tiers -verify-diagnostics

// A tile of unknown size cannot be given a device buffer ahead of time.
// expected-error @+1 {{argument 0 with 'tra_plan.tier' must be a tensor of static shape}}
func.func @dynamic(%w: tensor<?x8xf32> {tra_plan.tier = "host"}) -> tensor<?x8xf32> {
  return %w : tensor<?x8xf32>
}
