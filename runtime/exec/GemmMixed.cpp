//===- GemmMixed.cpp - Products of 16-bit matrices into f32 ---------------===//
//
// `tra_exec_gemm_mixed` (declared in tra/Exec/ABI.h): C (f32) += A * B with
// A and B in f16 or bf16, the contraction of a projection by 16-bit weights
// (the activations rounded to the weights' type, the products and sums in
// f32). A is widened once per product. One row of C (a decoding step) is
// gemvRow (Gemv.h): each element of B is widened in registers as it is
// read, the rows of C split over the OpenMP threads of the generated
// loops. Several rows (a prefill chunk) go to the
// runtime's packed GEMM (PackedGemm.h), which widens B while packing it,
// where the CPU has AVX-512; elsewhere B is widened in panels of at most
// kPanelElements elements (columns of C), each multiplied by tra_exec_sgemm
// right after it is widened, while it is still in the cache. Either way B
// is read from memory once, 2 bytes per element: a decoding step reads half
// the bytes of the f32 weights, and no f32 copy of them exists.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include "Gemv.h"
#include "Half.h"
#include "PackedGemm.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace tra::exec;

namespace {

/// Elements of B widened at a time for several rows of C: 1 MiB of f32.
constexpr int64_t kPanelElements = int64_t(1) << 18;

/// Widens the `rows` x `cols` block of a row-major matrix (leading dimension
/// `ld`) starting at `src` into a dense `rows` x `cols` f32 matrix.
void widenBlock(int64_t dtype, const uint16_t *src, int64_t ld, int64_t rows,
                int64_t cols, float *dst) {
  for (int64_t r = 0; r < rows; ++r)
    widen(dtype, src + r * ld, dst + r * cols, cols);
}

/// One C = alpha * op(A) * op(B) + beta * C, A already widened (dense, as
/// stored), B widened panel by panel.
void gemmPanels(int64_t dtype, bool transA, bool transB, int64_t m, int64_t n,
                int64_t k, float alpha, const float *a, int64_t lda,
                const uint16_t *b, int64_t ldb, float beta, float *c,
                int64_t ldc, std::vector<float> &panel) {
  int64_t columns =
      std::max<int64_t>(1, kPanelElements / std::max<int64_t>(k, 1));
  columns = std::min(columns, n);
  panel.resize(size_t(columns * k));
  for (int64_t j = 0; j < n; j += columns) {
    int64_t width = std::min(columns, n - j);
    if (transB) {
      // B stored n x k: rows j .. j + width.
      widenBlock(dtype, b + j * ldb, ldb, width, k, panel.data());
      tra_exec_sgemm(1, transA, 1, m, width, k, alpha, a, lda, 0, panel.data(),
                     k, 0, beta, c + j, ldc, 0);
    } else {
      // B stored k x n: columns j .. j + width of every row.
      widenBlock(dtype, b + j, ldb, k, width, panel.data());
      tra_exec_sgemm(1, transA, 0, m, width, k, alpha, a, lda, 0, panel.data(),
                     width, 0, beta, c + j, ldc, 0);
    }
  }
}

} // namespace

extern "C" void tra_exec_gemm_mixed(int64_t inputType, int64_t outputType,
                                    int64_t batch, int64_t transA,
                                    int64_t transB, int64_t m, int64_t n,
                                    int64_t k, float alpha, const void *a,
                                    int64_t lda, int64_t strideA, const void *b,
                                    int64_t ldb, int64_t strideB, float beta,
                                    void *c, int64_t ldc, int64_t strideC) {
  // The compiler emits only these; anything else is a broken program.
  if ((inputType != TRA_EXEC_F16 && inputType != TRA_EXEC_BF16) ||
      outputType != TRA_EXEC_F32)
    std::abort();
  if (m <= 0 || n <= 0)
    return;
  const auto *a16 = static_cast<const uint16_t *>(a);
  const auto *b16 = static_cast<const uint16_t *>(b);
  auto *c32 = static_cast<float *>(c);
  // A as stored: m x k, or k x m when transposed.
  int64_t aRows = transA ? k : m, aCols = transA ? m : k;
  static thread_local std::vector<float> aWide, panel;
  aWide.resize(size_t(aRows * aCols));
  for (int64_t i = 0; i < batch; ++i) {
    widenBlock(inputType, a16 + i * strideA, lda, aRows, aCols, aWide.data());
    if (m == 1) {
      // One row of A (k elements) is dense whichever way it is stored.
      gemvRow(inputType, transB != 0, n, k, alpha, aWide.data(),
              b16 + i * strideB, ldb, beta, c32 + i * strideC);
      continue;
    }
    if (tra::exec::packedGemmAvailable()) {
      tra::exec::packedGemm(
          inputType == TRA_EXEC_BF16 ? tra::exec::GemmBType::BF16
                                     : tra::exec::GemmBType::F16,
          transA != 0, transB != 0, m, n, k, alpha, aWide.data(), aCols,
          b16 + i * strideB, ldb, beta, c32 + i * strideC, ldc);
      continue;
    }
    gemmPanels(inputType, transA != 0, transB != 0, m, n, k, alpha,
               aWide.data(), aCols, b16 + i * strideB, ldb, beta,
               c32 + i * strideC, ldc, panel);
  }
}
