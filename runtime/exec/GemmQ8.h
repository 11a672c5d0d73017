//===- GemmQ8.h - Products by Q8_0-quantised weights ------------*- C++ -*-===//
//
// Internal to runtime/exec: the Q8_0 matrices of tra_exec_gemm_q8 (ABI.h),
// llama.cpp's Q8_0 split into two arrays (blocks of 32 int8 quants along a
// row, each block with one IEEE-half scale); the conversion of quants to
// f32 that GemmQ8.cpp's one-row kernel and PackedGemm.cpp's packing share;
// and the product without AVX-512, which the tests also call directly.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_GEMMQ8_H
#define TRA_EXEC_GEMMQ8_H

#include "Half.h"

#include <cstdint>

namespace tra {
namespace exec {

/// Elements of a row that share one scale.
constexpr int64_t kQ8Block = 32;

/// A row-major matrix in Q8_0: element (row, col) is
/// q[row * ldq + col] * half(scales[row * lds + col / kQ8Block]), exact in
/// f32.
struct Q8Matrix {
  const int8_t *q;
  int64_t ldq;
  const uint16_t *scales;
  int64_t lds;

  float scale(int64_t row, int64_t col) const {
    return halfToFloat(scales[row * lds + col / kQ8Block]);
  }
  float element(int64_t row, int64_t col) const {
    return float(q[row * ldq + col]) * scale(row, col);
  }
};

#if defined(__x86_64__)
/// Sixteen consecutive int8 as f32 (exact), with AVX-512.
TRA_EXEC_AVX512 inline __m512 load16Int8AsFloat(const int8_t *p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(p))));
}
#endif

/// tra_exec_gemm_q8 without AVX-512: C = A * W^T (+ beta * C), C m x n,
/// A m x (kQ8Block * blocks) f32, W n x (kQ8Block * blocks). One row of C
/// is a loop of dot products (the rows of W split over the OpenMP threads
/// like gemvRow's), several go through tra_exec_sgemm on panels of W
/// converted to f32.
void gemmQ8Generic(int64_t m, int64_t n, int64_t blocks, const float *a,
                   int64_t lda, const Q8Matrix &w, float beta, float *c,
                   int64_t ldc);

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_GEMMQ8_H
