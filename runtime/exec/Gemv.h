//===- Gemv.h - One-row products on the OpenMP threads ----------*- C++ -*-===//
//
// Internal to runtime/exec: c = alpha * a * op(B) + beta * c for one row a
// (k elements, f32) and B in f32, f16 or bf16 (a decoding step's
// projections), each element of B read once and widened in registers, the
// columns of c split over the OpenMP threads of the generated loops (the
// one thread pool of a compiled program) when B's bytes pay for it
// (Parallel.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_GEMV_H
#define TRA_EXEC_GEMV_H

#include <algorithm>
#include <cstdint>

namespace tra {
namespace exec {

/// op(B) = B^T (B stored n x k) when transB, else B (stored k x n); `ldb`
/// is B's stored leading dimension; `bType` is TRA_EXEC_F32, F16 or BF16.
void gemvRow(int64_t bType, bool transB, int64_t n, int64_t k, float alpha,
             const float *a, const void *b, int64_t ldb, float beta, float *c);

/// c[j] = alpha * d[j] + beta * c[j] for j in [j0, j1) (c not read when
/// beta is 0), where dots(r0, rows, d) writes the dot products of rows
/// r0 .. r0 + rows of a kernel's matrix to d: one call straight into c
/// when alpha is 1 and beta 0, else calls of at most 64 rows into a buffer.
template <class Dots>
void storeDots(int64_t j0, int64_t j1, float alpha, float beta, float *c,
               Dots &&dots) {
  if (alpha == 1.0f && beta == 0.0f)
    return dots(j0, j1 - j0, c + j0);
  constexpr int64_t kRows = 64;
  float d[kRows];
  for (int64_t r0 = j0; r0 < j1; r0 += kRows) {
    const int64_t rows = std::min(kRows, j1 - r0);
    dots(r0, rows, d);
    for (int64_t r = 0; r < rows; ++r)
      c[r0 + r] = alpha * d[r] + (beta == 0.0f ? 0.0f : beta * c[r0 + r]);
  }
}

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_GEMV_H
