// Errors of the AOT compiler library, through tra-compile.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not tra-compile %s --entry missing --hw local --emit=exe -o %t/exe 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tra-compile: error: {{.*}}errors.mlir: no function @missing
// RUN: not tra-compile %s --hw local --emit=exe -o %t/exe 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: error: several public functions (@twice, @scalar); choose the entry function
// RUN: not tra-compile %s --entry twice --hw local --emit=exe -o %t/exe 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: entry function @twice has two arguments named 'x'
// RUN: not tra-compile %s --entry scalar --hw local --emit=exe -o %t/exe 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: error: entry function @scalar argument 'arg0' has type 'f32'; executables read and write tensors of static shape with element type f32, f16, bf16, i64, i32 or i1
// No executable was left behind.
// RUN: not ls %t/exe

func.func @twice(%a: tensor<4xf32> {tra.name = "x"}, %b: tensor<4xf32> {tra.name = "x"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

func.func @scalar(%a: f32) -> f32 {
  return %a : f32
}
