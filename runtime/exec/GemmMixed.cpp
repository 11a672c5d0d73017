//===- GemmMixed.cpp - Products of 16-bit matrices into f32 ---------------===//
//
// `tra_exec_gemm_mixed` (declared in tra/Exec/ABI.h): C (f32) += A * B with
// A and B in f16 or bf16, the contraction of a projection by 16-bit weights
// (the activations rounded to the weights' type, the products and sums in
// f32). A is widened once per product. One row of C (a decoding step) is a
// fused kernel: each element of B is widened in registers as it is read
// (F16C / AVX2 where the CPU has them), the rows of C split over the OpenMP
// threads of the generated loops. Several rows (a prefill chunk) go to the
// runtime's packed GEMM (PackedGemm.h), which widens B while packing it,
// where the CPU has AVX-512; elsewhere B is widened in panels of at most
// kPanelElements elements (columns of C), each multiplied by tra_exec_sgemm
// right after it is widened, while it is still in the cache. Either way B
// is read from memory once, 2 bytes per element: a decoding step reads half
// the bytes of the f32 weights, and no f32 copy of them exists.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include "PackedGemm.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

/// Elements of B widened at a time for several rows of C: 1 MiB of f32.
constexpr int64_t kPanelElements = int64_t(1) << 18;

/// One-row products with fewer elements of B run on the calling thread:
/// waking the OpenMP threads costs about as much as 2^18 elements take.
constexpr int64_t kMinParallelElements = int64_t(1) << 18;

/// An IEEE half to float, exactly (subnormals, infinities and NaN included).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalise.
    int shift = 0;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void widenBf16(const uint16_t *src, float *dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits = uint32_t(src[i]) << 16;
    std::memcpy(&dst[i], &bits, sizeof(float));
  }
}

void widenF16Generic(const uint16_t *src, float *dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    dst[i] = halfToFloat(src[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void
widenF16F16c(const uint16_t *src, float *dst, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < count; ++i)
    dst[i] = halfToFloat(src[i]);
}
#endif

/// dot(a, widen(b)) over `k` elements.
float dotGeneric(int64_t dtype, const float *a, const uint16_t *b, int64_t k) {
  float sum = 0.0f;
  if (dtype == TRA_EXEC_BF16) {
    for (int64_t i = 0; i < k; ++i) {
      uint32_t bits = uint32_t(b[i]) << 16;
      float w;
      std::memcpy(&w, &bits, sizeof w);
      sum += a[i] * w;
    }
  } else {
    for (int64_t i = 0; i < k; ++i)
      sum += a[i] * halfToFloat(b[i]);
  }
  return sum;
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) inline __m256 loadBf16(const uint16_t *p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

__attribute__((target("avx2,fma,f16c"))) inline __m256
loadF16(const uint16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

template <bool Bf16>
__attribute__((target("avx2,fma,f16c"))) float
dotAvx2(const float *a, const uint16_t *b, int64_t k) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= k; i += 32)
    for (int u = 0; u < 4; ++u) {
      __m256 w = Bf16 ? loadBf16(b + i + 8 * u) : loadF16(b + i + 8 * u);
      acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * u), w, acc[u]);
    }
  for (; i + 8 <= k; i += 8) {
    __m256 w = Bf16 ? loadBf16(b + i) : loadF16(b + i);
    acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), w, acc[0]);
  }
  float sum = sum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
                                 _mm256_add_ps(acc[2], acc[3])));
  return sum +
         dotGeneric(Bf16 ? TRA_EXEC_BF16 : TRA_EXEC_F16, a + i, b + i, k - i);
}
#endif

using DotFn = float (*)(const float *, const uint16_t *, int64_t);

/// The dot product kernel for `dtype` on this CPU, or null for the generic
/// one.
DotFn getDot(int64_t dtype) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2") &&
                           __builtin_cpu_supports("fma") &&
                           __builtin_cpu_supports("f16c");
  if (avx2)
    return dtype == TRA_EXEC_BF16 ? dotAvx2<true> : dotAvx2<false>;
#endif
  return nullptr;
}

/// Widens `count` consecutive elements of type `dtype`.
void widen(int64_t dtype, const uint16_t *src, float *dst, int64_t count) {
  if (dtype == TRA_EXEC_BF16)
    return widenBf16(src, dst, count);
#if defined(__x86_64__)
  static const bool f16c = __builtin_cpu_supports("f16c");
  if (f16c)
    return widenF16F16c(src, dst, count);
#endif
  widenF16Generic(src, dst, count);
}

/// Widens the `rows` x `cols` block of a row-major matrix (leading dimension
/// `ld`) starting at `src` into a dense `rows` x `cols` f32 matrix.
void widenBlock(int64_t dtype, const uint16_t *src, int64_t ld, int64_t rows,
                int64_t cols, float *dst) {
  for (int64_t r = 0; r < rows; ++r)
    widen(dtype, src + r * ld, dst + r * cols, cols);
}

/// One row c = alpha * a * op(B) + beta * c, `a` widened (k elements).
/// op(B) = B^T (B stored n x k): each element of c is a dot product of a
/// row of B, rows split over the threads. Otherwise (B stored k x n) c is a
/// sum of rows of B, columns split over the threads.
void gemvRow(int64_t dtype, bool transB, int64_t n, int64_t k, float alpha,
             const float *a, const uint16_t *b, int64_t ldb, float beta,
             float *c) {
  bool parallel = n * k >= kMinParallelElements;
  (void)parallel;
  if (transB) {
    DotFn dot = getDot(dtype);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t j = 0; j < n; ++j) {
      const uint16_t *row = b + j * ldb;
      float d = dot ? dot(a, row, k) : dotGeneric(dtype, a, row, k);
      c[j] = alpha * d + (beta == 0.0f ? 0.0f : beta * c[j]);
    }
    return;
  }
  constexpr int64_t kChunk = 512;
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    int64_t j0 = chunk * kChunk, width = std::min(kChunk, n - j0);
    float sum[kChunk] = {};
    float row[kChunk];
    for (int64_t q = 0; q < k; ++q) {
      widen(dtype, b + q * ldb + j0, row, width);
      for (int64_t j = 0; j < width; ++j)
        sum[j] += a[q] * row[j];
    }
    for (int64_t j = 0; j < width; ++j)
      c[j0 + j] = alpha * sum[j] + (beta == 0.0f ? 0.0f : beta * c[j0 + j]);
  }
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
