// RUN: tra-opt %s --tra-linalg-to-blas --verify-diagnostics

// A module that uses the runtime's Q8_0 product's name for something else
// cannot call it: one error, no crash.

#a = affine_map<(s, e, b, j) -> (s, b, j)>
#q = affine_map<(s, e, b, j) -> (e, b, j)>
#sc = affine_map<(s, e, b, j) -> (e, b)>
#c = affine_map<(s, e, b, j) -> (s, e)>

// expected-error @+1 {{symbol 'tra_exec_gemm_q8' is reserved for the BLAS runtime function}}
func.func private @tra_exec_gemm_q8(f32) -> f32

func.func @prefill(%x: memref<4x3x32xf32>, %w: memref<64x3x32xi8>, %s: memref<64x3xf16>, %y: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#a, #q, #sc, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %s : memref<4x3x32xf32>, memref<64x3x32xi8>, memref<64x3xf16>) outs(%y : memref<4x64xf32>) {
  ^bb0(%in: f32, %v: i8, %scale: f16, %out: f32):
    %0 = arith.sitofp %v : i8 to f32
    %1 = arith.extf %scale : f16 to f32
    %2 = arith.mulf %in, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  }
  return
}
