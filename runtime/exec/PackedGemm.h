//===- PackedGemm.h - The runtime's own packed f32 GEMM ---------*- C++ -*-===//
//
// C = alpha * op(A) * op(B) + beta * C with A in f32 and B in f32, f16 or
// bf16 (or Q8_0, packedGemmQ8), all row-major, computed in f32 by a
// register-blocked AVX-512 micro-kernel over packed panels (the BLIS
// scheme). B is converted to f32 while it is packed, once per panel, so a
// 16-bit matrix is read at 2 bytes per element (a Q8_0 one at 34 bytes per
// 32) and never exists as an f32 copy. Only where the CPU has
// AVX-512F (packedGemmAvailable); the caller keeps another path for the
// others.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_PACKEDGEMM_H
#define TRA_EXEC_PACKEDGEMM_H

#include "GemmQ8.h"

#include <cstdint>

namespace tra {
namespace exec {

/// The element type of B.
enum class GemmBType { F32, F16, BF16 };

/// Whether this CPU runs packedGemm (AVX-512F, F16C).
bool packedGemmAvailable();

/// One product on the OpenMP threads of the generated loops (all of them
/// when its multiply-adds pay for them, Parallel.h, else the calling
/// thread). op(A) is
/// m x k (A stored k x m when transA), op(B) k x n (B stored n x k when
/// transB); lda, ldb, ldc are the stored leading dimensions in elements.
/// Requires packedGemmAvailable().
void packedGemm(GemmBType bType, bool transA, bool transB, int64_t m, int64_t n,
                int64_t k, float alpha, const float *a, int64_t lda,
                const void *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// C = A * W^T + beta * C (C not read when beta is 0) with
/// A m x (kQ8Block * blocks), lda its leading dimension, and W n x
/// (kQ8Block * blocks) in Q8_0, on the OpenMP threads as packedGemm.
/// Requires packedGemmAvailable().
void packedGemmQ8(int64_t m, int64_t n, int64_t blocks, const float *a,
                  int64_t lda, const Q8Matrix &w, float beta, float *c,
                  int64_t ldc);

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_PACKEDGEMM_H
