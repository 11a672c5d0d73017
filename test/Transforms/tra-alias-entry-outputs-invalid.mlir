// RUN: tra-opt %s --pass-pipeline='builtin.module(func.func(tra-alias-entry-outputs))' --split-input-file --verify-diagnostics

// expected-error @+1 {{'tra.entry_inputs' must be an integer between 0 and 2 (the number of arguments)}}
func.func @main(%in: memref<4xf32>, %out: memref<4xf32>)
    attributes {tra.entry_inputs = 3 : i64} {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// expected-error @+1 {{'tra.entry_inputs' must be an integer between 0 and 1 (the number of arguments)}}
func.func @main(%in: memref<4xf32>) attributes {tra.entry_inputs = "x"} {
  return
}
