// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen bmm %t
// RUN: tra-interpret %s --input a=%t/a.npy --input b=%t/b.npy --output c=%t/out_c.npy
// RUN: %python %S/Inputs/reference.py check bmm %t | FileCheck %s
// CHECK: bmm: OK

func.func @main(%a: tensor<3x8x16xf32> {tra.name = "a"}, %b: tensor<3x16x8xf32> {tra.name = "b"})
    -> (tensor<3x8x8xf32> {tra.name = "c"}) {
  %c = tra.einsum "bij,bjk->bik" mul (%a, %b) : (tensor<3x8x16xf32>, tensor<3x16x8xf32>) -> tensor<3x8x8xf32>
  return %c : tensor<3x8x8xf32>
}
