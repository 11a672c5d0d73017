// Products by weights quantised as llama.cpp's Q8_0 (i8 blocks of 32 values
// and one f16 scale per row and block): the einsum "sbj,ebj,eb->se" in a
// compiled executable and the interpreter, against float64 NumPy.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/q8_reference.py write %t
// RUN: tra-compile %s --hw local --emit=exe -o %t/prog
// RUN: %t/prog --list | FileCheck %s
// CHECK: input  q: i8[48, 96]
// CHECK: input  s: f16[48, 3]
// RUN: %t/prog --input x=%t/x.npy --input q=%t/q.npy --input s=%t/s.npy \
// RUN:   --input xl=%t/xl.npy --input ql=%t/ql.npy --input sl=%t/sl.npy \
// RUN:   --output y=%t/y.npy --output y1=%t/y1.npy --output yl=%t/yl.npy --output yl1=%t/yl1.npy
// RUN: %python %S/Inputs/q8_reference.py check %t y=%t/y.npy y1=%t/y1.npy \
// RUN:   yl=%t/yl.npy yl1=%t/yl1.npy | FileCheck %s --check-prefix=MATCH
// RUN: tra-interpret %s --input x=%t/x.npy --input q=%t/q.npy --input s=%t/s.npy \
// RUN:   --input xl=%t/xl.npy --input ql=%t/ql.npy --input sl=%t/sl.npy \
// RUN:   --output y=%t/iy.npy --output y1=%t/iy1.npy --output yl=%t/iyl.npy --output yl1=%t/iyl1.npy
// RUN: %python %S/Inputs/q8_reference.py check %t y=%t/iy.npy y1=%t/iy1.npy \
// RUN:   yl=%t/iyl.npy yl1=%t/iyl1.npy | FileCheck %s --check-prefix=MATCH
// MATCH: match

func.func @main(%x: tensor<5x96xf32> {tra.name = "x"},
                %q: tensor<48x96xi8> {tra.name = "q"},
                %s: tensor<48x3xf16> {tra.name = "s"},
                %xl: tensor<3x768xf32> {tra.name = "xl"},
                %ql: tensor<320x768xi8> {tra.name = "ql"},
                %sl: tensor<320x24xf16> {tra.name = "sl"})
    -> (tensor<5x48xf32> {tra.name = "y"}, tensor<1x48xf32> {tra.name = "y1"},
        tensor<3x320xf32> {tra.name = "yl"}, tensor<1x320xf32> {tra.name = "yl1"}) {
  %x3 = tra.reshape %x : tensor<5x96xf32> -> tensor<5x3x32xf32>
  %q3 = tra.reshape %q : tensor<48x96xi8> -> tensor<48x3x32xi8>
  %y = tra.einsum "sbj,ebj,eb->se" mul (%x3, %q3, %s)
      : (tensor<5x3x32xf32>, tensor<48x3x32xi8>, tensor<48x3xf16>) -> tensor<5x48xf32>
  %x1 = tra.slice %x3 dim 0 offset 0 size 1 : tensor<5x3x32xf32> -> tensor<1x3x32xf32>
  %y1 = tra.einsum "sbj,ebj,eb->se" mul (%x1, %q3, %s)
      : (tensor<1x3x32xf32>, tensor<48x3x32xi8>, tensor<48x3xf16>) -> tensor<1x48xf32>
  %xl3 = tra.reshape %xl : tensor<3x768xf32> -> tensor<3x24x32xf32>
  %ql3 = tra.reshape %ql : tensor<320x768xi8> -> tensor<320x24x32xi8>
  %yl = tra.einsum "sbj,ebj,eb->se" mul (%xl3, %ql3, %sl)
      : (tensor<3x24x32xf32>, tensor<320x24x32xi8>, tensor<320x24xf16>) -> tensor<3x320xf32>
  %xl1 = tra.slice %xl3 dim 0 offset 2 size 1 : tensor<3x24x32xf32> -> tensor<1x24x32xf32>
  %yl1 = tra.einsum "sbj,ebj,eb->se" mul (%xl1, %ql3, %sl)
      : (tensor<1x24x32xf32>, tensor<320x24x32xi8>, tensor<320x24xf16>) -> tensor<1x320xf32>
  return %y, %y1, %yl, %yl1 : tensor<5x48xf32>, tensor<1x48xf32>, tensor<3x320xf32>, tensor<1x320xf32>
}
