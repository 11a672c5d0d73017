// RUN: tra-opt %s --tra-linalg-to-blas --verify-diagnostics

// expected-error @+1 {{symbol 'tra_exec_sgemm' is reserved for the BLAS runtime function}}
func.func private @tra_exec_sgemm(f32) -> f32

func.func @matmul(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xf32>)
  return
}
