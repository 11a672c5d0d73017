// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen matmul %t
// RUN: tra-interpret %s --input a=%t/a.npy --input b=%t/b.npy --output c=%t/out_c.npy
// RUN: %python %S/Inputs/reference.py check matmul %t | FileCheck %s
// CHECK: matmul: OK

func.func @main(%a: tensor<16x32xf32> {tra.name = "a"}, %b: tensor<32x24xf32> {tra.name = "b"})
    -> (tensor<16x24xf32> {tra.name = "c"}) {
  %c = tra.einsum "ij,jk->ik" mul (%a, %b) : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
  return %c : tensor<16x24xf32>
}
