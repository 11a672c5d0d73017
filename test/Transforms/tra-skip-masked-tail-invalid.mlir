// RUN: not tra-opt %s --tra-skip-masked-tail=block-size=-4 2>&1 | FileCheck %s
// RUN: tra-opt %s --tra-skip-masked-tail=block-size=0 | FileCheck %s --check-prefix=OFF

// CHECK: error: tra-skip-masked-tail: block-size -4 must be a number of positions (0: off)
// OFF-LABEL: func.func @f
// OFF-NOT: scf.for
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
