//===- GemmQ8.cpp - Products by Q8_0-quantised weights --------------------===//
//
// `tra_exec_gemm_q8` (declared in tra/Exec/ABI.h): C = A * W^T (+ C) with
// W in llama.cpp's Q8_0 (GemmQ8.h), a quantised model's projections.
//
// A few rows of C (a decoding step: one) are passes over W, each reading
// W once, 34 bytes per 32 weights, for up to kMaxRowsPerPass rows of A,
// the rows of W split over the OpenMP threads of the generated loops as
// gemvRow's are (Gemv.h, BalancedRows.h). Where the CPU has AVX-512, the kernel
// takes a row of W, per block of 32 widens the quants to f32 in registers,
// multiplies them by the block's activations of each row of A in 16 lanes
// and adds that block dot, times the block's scale, to the row's
// accumulator; the scales are widened kScaleChunk blocks at a time into a
// small array first. Each thread reads its rows of W one after the other,
// front to back, one stream, which it also prefetches (interleaving four
// rows of W, to load each activation once for all four, ran at half the
// memory bandwidth on Zen 4: the hardware prefetchers lost track); the
// activations stay in L1.
//
// A program that carries the generated Q8_0 dot products
// (tra_exec_dots_f32_q8, tra-emit-cpu-microkernels, compiled for its target
// CPU) runs one row of C through them instead, on any CPU, the rows of W
// split the same way.
//
// More rows of C (a prefill chunk) go to the packed GEMM (packedGemmQ8,
// PackedGemm.h), which converts W to f32 while it packs it, on the same
// threads. Without AVX-512, one row is a loop of dot products and several
// multiply panels of W, converted to f32 in panels that stay in the cache,
// with tra_exec_sgemm, as GemmMixed.cpp does.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include "BalancedRows.h"
#include "GemmQ8.h"
#include "Gemv.h"
#include "GeneratedKernels.h"
#include "Half.h"
#include "PackedGemm.h"
#include "Parallel.h"

#include <algorithm>
#include <cstdint>
#include <vector>

using namespace tra::exec;

namespace {

/// Blocks whose scales the AVX-512 kernel widens at a time.
constexpr int64_t kScaleChunk = 64;

/// How far ahead of its loads the AVX-512 kernel prefetches the quants
/// (once per two blocks, past the end of a row into the next): on Zen 4,
/// products by 0.6 to 1.6 MB of W read from memory took 0.65 to 0.9 of
/// their time without, the hardware prefetchers needing a while to pick
/// up each thread's stream.
constexpr int64_t kPrefetchBytes = 512;

/// Rows of A (and C) one pass over W takes at most.
constexpr int64_t kMaxRowsPerPass = 4;

/// Rows of C at most that the AVX-512 path computes with passes over W
/// (kMaxRowsPerPass rows of C each) rather than with the packed GEMM, whose
/// packing of W costs several passes: on Zen 4 (two threads, W of 768 x
/// 768 to 32000 x 768) three passes, 9 to 12 rows, took 0.65 to 0.9 of its
/// time; a fourth would cost about as much as it.
constexpr int64_t kMaxGemvRows = 12;

/// Elements of W converted to f32 at a time for several rows of C without
/// AVX-512: 1 MiB of f32.
constexpr int64_t kPanelElements = int64_t(1) << 18;

/// The dot products of rows 0 .. rows - 1 (at most kMaxRowsPerPass) of A
/// (kQ8Block * blocks elements, row i at a + i * lda) with row `row` of
/// `w`, into sums[0 .. rows).
using DotFn = void (*)(int64_t rows, int64_t blocks, const float *a,
                       int64_t lda, const Q8Matrix &w, int64_t row,
                       float *sums);

/// Row `row` of `w` onwards.
Q8Matrix rowsFrom(const Q8Matrix &w, int64_t row) {
  return {w.q + row * w.ldq, w.ldq, w.scales + row * w.lds, w.lds};
}

/// The dot product of kQ8Block quants and activations, in eight lanes of
/// partial sums: a loop compilers vectorise, but (clang 22) only where it is
/// not inlined into dotGeneric's loops.
__attribute__((noinline)) float blockDot(const int8_t *q, const float *a) {
  float lanes[8] = {};
  for (int64_t t = 0; t < kQ8Block; t += 8)
    for (int64_t l = 0; l < 8; ++l)
      lanes[l] += float(q[t + l]) * a[t + l];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

void dotGeneric(int64_t rows, int64_t blocks, const float *a, int64_t lda,
                const Q8Matrix &w, int64_t row, float *sums) {
  const int8_t *q = w.q + row * w.ldq;
  for (int64_t i = 0; i < rows; ++i) {
    const float *ai = a + i * lda;
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b)
      sum += blockDot(q + b * kQ8Block, ai + b * kQ8Block) *
             w.scale(row, b * kQ8Block);
    sums[i] = sum;
  }
}

#if defined(__x86_64__)
/// acc[i] += (block of quants `q` . block of row i of A) * scale.
template <int Rows>
TRA_EXEC_AVX512 inline void accumulateBlock(const int8_t *q, const float *a,
                                            int64_t lda, float scale,
                                            __m512 *acc) {
  const __m512 w0 = load16Int8AsFloat(q), w1 = load16Int8AsFloat(q + 16);
  const __m512 s = _mm512_set1_ps(scale);
  for (int i = 0; i < Rows; ++i) {
    __m512 dot = _mm512_mul_ps(w0, _mm512_loadu_ps(a + i * lda));
    dot = _mm512_fmadd_ps(w1, _mm512_loadu_ps(a + i * lda + 16), dot);
    acc[i] = _mm512_fmadd_ps(dot, s, acc[i]);
  }
}

template <int Rows>
TRA_EXEC_AVX512 void dotRowsAvx512(int64_t blocks, const float *a, int64_t lda,
                                   const Q8Matrix &w, int64_t row,
                                   float *sums) {
  const int8_t *q = w.q + row * w.ldq;
  // Even and odd blocks: two chains of additions.
  __m512 even[Rows], odd[Rows];
  for (int i = 0; i < Rows; ++i)
    even[i] = odd[i] = _mm512_setzero_ps();
  alignas(64) float scales[kScaleChunk];
  for (int64_t b0 = 0; b0 < blocks; b0 += kScaleChunk) {
    const int64_t chunk = std::min(kScaleChunk, blocks - b0);
    const uint16_t *halves = w.scales + row * w.lds + b0;
    int64_t s = 0;
    for (; s + 16 <= chunk; s += 16)
      _mm512_store_ps(scales + s, load16AsFloat<TRA_EXEC_F16>(halves + s));
    for (; s < chunk; ++s)
      scales[s] = _cvtsh_ss(halves[s]);
    int64_t b = 0;
    for (; b + 2 <= chunk; b += 2) {
      // Two blocks: one 64-byte line of quants.
      const int8_t *qb = q + (b0 + b) * kQ8Block;
      const float *ab = a + (b0 + b) * kQ8Block;
      _mm_prefetch(reinterpret_cast<const char *>(qb) + kPrefetchBytes,
                   _MM_HINT_T0);
      accumulateBlock<Rows>(qb, ab, lda, scales[b], even);
      accumulateBlock<Rows>(qb + kQ8Block, ab + kQ8Block, lda, scales[b + 1],
                            odd);
    }
    if (b < chunk)
      accumulateBlock<Rows>(q + (b0 + b) * kQ8Block, a + (b0 + b) * kQ8Block,
                            lda, scales[b], even);
  }
  for (int i = 0; i < Rows; ++i)
    sums[i] = _mm512_reduce_add_ps(_mm512_add_ps(even[i], odd[i]));
}

void dotAvx512(int64_t rows, int64_t blocks, const float *a, int64_t lda,
               const Q8Matrix &w, int64_t row, float *sums) {
  static_assert(kMaxRowsPerPass == 4, "a kernel for each count of rows");
  switch (rows) {
  case 1:
    return dotRowsAvx512<1>(blocks, a, lda, w, row, sums);
  case 2:
    return dotRowsAvx512<2>(blocks, a, lda, w, row, sums);
  case 3:
    return dotRowsAvx512<3>(blocks, a, lda, w, row, sums);
  default:
    return dotRowsAvx512<4>(blocks, a, lda, w, row, sums);
  }
}
#endif

/// C = A * W^T + beta * C for m rows of A, W read once per
/// kMaxRowsPerPass of them, the rows of W split over the OpenMP threads
/// when W is large enough.
void gemvQ8(DotFn dot, int64_t m, int64_t n, int64_t blocks, const float *a,
            int64_t lda, const Q8Matrix &w, float beta, float *c, int64_t ldc) {
  // Each row of W: kQ8Block bytes of quants and one 2-byte scale per block.
  bool parallel = n * blocks * (kQ8Block + 2) >= parallelMinBytes();
  (void)parallel;
  for (int64_t i0 = 0; i0 < m; i0 += kMaxRowsPerPass) {
    const int64_t rows = std::min(kMaxRowsPerPass, m - i0);
    const float *ai = a + i0 * lda;
    float *ci = c + i0 * ldc;
    forBalancedRows(n, rowsPerPiece(w.ldq + 2 * w.lds), parallel,
                    [&](int64_t j0, int64_t j1) {
                      for (int64_t j = j0; j < j1; ++j) {
                        float sums[kMaxRowsPerPass];
                        dot(rows, blocks, ai, lda, w, j, sums);
                        for (int64_t i = 0; i < rows; ++i) {
                          float &out = ci[i * ldc + j];
                          out = sums[i] + (beta == 0.0f ? 0.0f : beta * out);
                        }
                      }
                    });
  }
}

/// Whether the program brings a Q8_0 dot products kernel that the runtime
/// may call (tra_exec_dots_f32_q8, GeneratedKernels.h).
bool generatedQ8Dots() {
  return generatedKernelsEnabled() && _mlir_ciface_tra_exec_dots_f32_q8;
}

/// c = A * W^T + beta * c for one row of A, through the program's kernel:
/// the rows of W split over the threads as gemvQ8 splits them.
void gemvQ8Generated(int64_t n, int64_t blocks, const float *a,
                     const Q8Matrix &w, float beta, float *c) {
  const bool parallel = n * blocks * (kQ8Block + 2) >= parallelMinBytes();
  const int64_t k = kQ8Block * blocks;
  forBalancedRows(
      n, rowsPerPiece(w.ldq + 2 * w.lds), parallel,
      [&](int64_t j0, int64_t j1) {
        storeDots(
            j0, j1, 1.0f, beta, c, [&](int64_t r0, int64_t rows, float *d) {
              TraExecMemRefF32 av = memRefOf(a, k), out = memRefOf(d, rows);
              TraExecMemRefI8 qv =
                  memRefOf(w.q + r0 * w.ldq, (rows - 1) * w.ldq + k);
              TraExecMemRefU16 sv =
                  memRefOf(w.scales + r0 * w.lds, (rows - 1) * w.lds + blocks);
              _mlir_ciface_tra_exec_dots_f32_q8(rows, blocks, &av, &qv, w.ldq,
                                                &sv, w.lds, &out);
            });
      });
}

/// Rows 0 .. rows - 1 of `w` (k = kQ8Block * blocks columns) as a dense
/// rows x k f32 matrix.
void dequantizeRows(const Q8Matrix &w, int64_t rows, int64_t blocks,
                    float *dst) {
  const int64_t k = kQ8Block * blocks;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const float scale = w.scale(r, b * kQ8Block);
      const int8_t *q = w.q + r * w.ldq + b * kQ8Block;
      float *out = dst + r * k + b * kQ8Block;
      for (int64_t t = 0; t < kQ8Block; ++t)
        out[t] = float(q[t]) * scale;
    }
}

} // namespace

void tra::exec::gemmQ8Generic(int64_t m, int64_t n, int64_t blocks,
                              const float *a, int64_t lda, const Q8Matrix &w,
                              float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (m == 1)
    return gemvQ8(dotGeneric, 1, n, blocks, a, lda, w, beta, c, ldc);
  if (blocks <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  const int64_t k = kQ8Block * blocks;
  const int64_t rows = std::min(n, std::max<int64_t>(1, kPanelElements / k));
  static thread_local std::vector<float> panel;
  panel.resize(size_t(rows * k));
  for (int64_t j = 0; j < n; j += rows) {
    const int64_t width = std::min(rows, n - j);
    dequantizeRows(rowsFrom(w, j), width, blocks, panel.data());
    tra_exec_sgemm(1, 0, 1, m, width, k, 1.0f, a, lda, 0, panel.data(), k, 0,
                   beta, c + j, ldc, 0);
  }
}

extern "C" void tra_exec_gemm_q8(int64_t m, int64_t n, int64_t blocks,
                                 const float *a, int64_t lda, const int8_t *q,
                                 int64_t ldq, const uint16_t *scales,
                                 int64_t lds, float beta, float *c,
                                 int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  const Q8Matrix w{q, ldq, scales, lds};
  if (m == 1 && blocks > 0 && generatedQ8Dots())
    return gemvQ8Generated(n, blocks, a, w, beta, c);
#if defined(__x86_64__)
  // The CPUs the packed GEMM runs on (AVX-512F, F16C, FMA) run the passes'
  // kernel too.
  if (packedGemmAvailable()) {
    if (m <= kMaxGemvRows)
      return gemvQ8(dotAvx512, m, n, blocks, a, lda, w, beta, c, ldc);
    return packedGemmQ8(m, n, blocks, a, lda, w, beta, c, ldc);
  }
#endif
  gemmQ8Generic(m, n, blocks, a, lda, w, beta, c, ldc);
}
