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

#include <cstdint>

namespace tra {
namespace exec {

/// op(B) = B^T (B stored n x k) when transB, else B (stored k x n); `ldb`
/// is B's stored leading dimension; `bType` is TRA_EXEC_F32, F16 or BF16.
void gemvRow(int64_t bType, bool transB, int64_t n, int64_t k, float alpha,
             const float *a, const void *b, int64_t ldb, float beta, float *c);

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_GEMV_H
