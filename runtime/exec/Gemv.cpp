//===- Gemv.cpp - One-row products on the OpenMP threads ------------------===//
//
// gemvRow (Gemv.h): with B stored n x k (a weight in Meta's layout) each
// element of c is a dot product of a row of B, rows split over the
// threads by forBalancedRows (BalancedRows.h: a thread done with its share
// takes pieces of a slower one's); with B stored k x n, c is a sum of rows of
// B, columns split in chunks over the threads. The dot products use AVX-512 or
// AVX2 + F16C where the CPU has them (chosen once), a scalar loop elsewhere,
// unless the program brings its own (tra_exec_dots_f32_*, the rows of a
// thread's piece in one call, generated with the vector dialect for its
// target CPU: GeneratedKernels.h).
// Also the widening of 16-bit rows (Half.h).
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"

#include "BalancedRows.h"
#include "GeneratedKernels.h"
#include "Half.h"
#include "Parallel.h"

#include "tra/Exec/ABI.h"

#include <algorithm>

using namespace tra::exec;

namespace {

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
float dotGeneric(int64_t dtype, const float *a, const void *b, int64_t k) {
  float sum = 0.0f;
  for (int64_t i = 0; i < k; ++i)
    sum += a[i] * elementAsFloat(dtype, b, i);
  return sum;
}

template <int Dtype> constexpr int64_t bytesOf() {
  return Dtype == TRA_EXEC_F32 ? 4 : 2;
}

#if defined(__x86_64__)
template <int Dtype>
TRA_EXEC_AVX512 float dotAvx512(const float *a, const void *b, int64_t k) {
  const auto *bytes = static_cast<const uint8_t *>(b);
  constexpr int64_t size = bytesOf<Dtype>();
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 64 <= k; i += 64)
    for (int u = 0; u < 4; ++u)
      acc[u] = _mm512_fmadd_ps(
          _mm512_loadu_ps(a + i + 16 * u),
          load16AsFloat<Dtype>(bytes + (i + 16 * u) * size), acc[u]);
  for (; i + 16 <= k; i += 16)
    acc[0] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i),
                             load16AsFloat<Dtype>(bytes + i * size), acc[0]);
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(
      _mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  return sum + dotGeneric(Dtype, a + i, bytes + i * size, k - i);
}

__attribute__((target("avx2,fma"))) inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int Dtype>
__attribute__((target("avx2,fma,f16c"))) inline __m256
load8AsFloat(const uint8_t *p) {
  if constexpr (Dtype == TRA_EXEC_F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float *>(p));
  } else if constexpr (Dtype == TRA_EXEC_F16) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  } else {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

template <int Dtype>
__attribute__((target("avx2,fma,f16c"))) float
dotAvx2(const float *a, const void *b, int64_t k) {
  const auto *bytes = static_cast<const uint8_t *>(b);
  constexpr int64_t size = bytesOf<Dtype>();
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= k; i += 32)
    for (int u = 0; u < 4; ++u)
      acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * u),
                               load8AsFloat<Dtype>(bytes + (i + 8 * u) * size),
                               acc[u]);
  for (; i + 8 <= k; i += 8)
    acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i),
                             load8AsFloat<Dtype>(bytes + i * size), acc[0]);
  float sum = sum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
                                 _mm256_add_ps(acc[2], acc[3])));
  return sum + dotGeneric(Dtype, a + i, bytes + i * size, k - i);
}
#endif

using DotFn = float (*)(const float *, const void *, int64_t);

/// out[r] = dot(a, widen(row r of b)) for r < rows, rows `ldb` elements
/// apart.
using DotsFn = void (*)(int64_t rows, int64_t k, const float *a, const void *b,
                        int64_t ldb, float *out);

/// DotsFn through the program's compiled kernel for `Dtype`
/// (tra_exec_dots_f32_*).
template <int Dtype>
void generatedDots(int64_t rows, int64_t k, const float *a, const void *b,
                   int64_t ldb, float *out) {
  TraExecMemRefF32 av = memRefOf(a, k), outView = memRefOf(out, rows);
  const int64_t span = (rows - 1) * ldb + k;
  if constexpr (Dtype == TRA_EXEC_F32) {
    TraExecMemRefF32 bv = memRefOf(static_cast<const float *>(b), span);
    _mlir_ciface_tra_exec_dots_f32_f32(rows, k, &av, &bv, ldb, &outView);
  } else {
    TraExecMemRefU16 bv = memRefOf(static_cast<const uint16_t *>(b), span);
    if constexpr (Dtype == TRA_EXEC_F16)
      _mlir_ciface_tra_exec_dots_f32_f16(rows, k, &av, &bv, ldb, &outView);
    else
      _mlir_ciface_tra_exec_dots_f32_bf16(rows, k, &av, &bv, ldb, &outView);
  }
}

/// The program's dot products kernel for `dtype`, or null where it has
/// none (or the runtime's own are asked for).
DotsFn getGeneratedDots(int64_t dtype) {
  if (!generatedKernelsEnabled())
    return nullptr;
  switch (dtype) {
  case TRA_EXEC_F32:
    return _mlir_ciface_tra_exec_dots_f32_f32 ? generatedDots<TRA_EXEC_F32>
                                              : nullptr;
  case TRA_EXEC_F16:
    return _mlir_ciface_tra_exec_dots_f32_f16 ? generatedDots<TRA_EXEC_F16>
                                              : nullptr;
  case TRA_EXEC_BF16:
    return _mlir_ciface_tra_exec_dots_f32_bf16 ? generatedDots<TRA_EXEC_BF16>
                                               : nullptr;
  default:
    return nullptr;
  }
}

/// The runtime's own dot product kernel for `dtype` on this CPU, or null
/// for the generic one.
DotFn getBuiltinDot(int64_t dtype) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f") &&
                             __builtin_cpu_supports("f16c") &&
                             __builtin_cpu_supports("fma");
  static const bool avx2 = __builtin_cpu_supports("avx2") &&
                           __builtin_cpu_supports("fma") &&
                           __builtin_cpu_supports("f16c");
  switch (dtype) {
  case TRA_EXEC_F32:
    return avx512 ? dotAvx512<TRA_EXEC_F32>
           : avx2 ? dotAvx2<TRA_EXEC_F32>
                  : nullptr;
  case TRA_EXEC_F16:
    return avx512 ? dotAvx512<TRA_EXEC_F16>
           : avx2 ? dotAvx2<TRA_EXEC_F16>
                  : nullptr;
  case TRA_EXEC_BF16:
    return avx512 ? dotAvx512<TRA_EXEC_BF16>
           : avx2 ? dotAvx2<TRA_EXEC_BF16>
                  : nullptr;
  default:
    break;
  }
#endif
  return nullptr;
}

} // namespace

extern "C" const char *tra_exec_dot_kernels(void) {
  if (getGeneratedDots(TRA_EXEC_F32))
    return "generated";
  return getBuiltinDot(TRA_EXEC_F32) ? "builtin" : "none";
}

void tra::exec::widen(int64_t dtype, const uint16_t *src, float *dst,
                      int64_t count) {
  if (dtype == TRA_EXEC_BF16) {
    for (int64_t i = 0; i < count; ++i)
      dst[i] = bf16ToFloat(src[i]);
    return;
  }
#if defined(__x86_64__)
  static const bool f16c = __builtin_cpu_supports("f16c");
  if (f16c)
    return widenF16F16c(src, dst, count);
#endif
  widenF16Generic(src, dst, count);
}

void tra::exec::gemvRow(int64_t bType, bool transB, int64_t n, int64_t k,
                        float alpha, const float *a, const void *b, int64_t ldb,
                        float beta, float *c) {
  const int64_t size = bType == TRA_EXEC_F32 ? 4 : 2;
  bool parallel = n * k * size >= parallelMinBytes();
  (void)parallel;
  const auto *bytes = static_cast<const uint8_t *>(b);
  if (transB) {
    if (DotsFn dots = getGeneratedDots(bType)) {
      forBalancedRows(
          n, rowsPerPiece(k * size), parallel, [&](int64_t j0, int64_t j1) {
            storeDots(j0, j1, alpha, beta, c,
                      [&](int64_t r0, int64_t rows, float *d) {
                        dots(rows, k, a, bytes + r0 * ldb * size, ldb, d);
                      });
          });
      return;
    }
    DotFn dot = getBuiltinDot(bType);
    forBalancedRows(
        n, rowsPerPiece(k * size), parallel, [&](int64_t j0, int64_t j1) {
          for (int64_t j = j0; j < j1; ++j) {
            const uint8_t *row = bytes + j * ldb * size;
            float d = dot ? dot(a, row, k) : dotGeneric(bType, a, row, k);
            c[j] = alpha * d + (beta == 0.0f ? 0.0f : beta * c[j]);
          }
        });
    return;
  }
  constexpr int64_t kChunk = 512;
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    int64_t j0 = chunk * kChunk, width = std::min(kChunk, n - j0);
    float sum[kChunk] = {};
    float wide[kChunk];
    for (int64_t q = 0; q < k; ++q) {
      const uint8_t *src = bytes + (q * ldb + j0) * size;
      const float *row = reinterpret_cast<const float *>(src);
      if (bType != TRA_EXEC_F32) {
        widen(bType, reinterpret_cast<const uint16_t *>(src), wide, width);
        row = wide;
      }
      for (int64_t j = 0; j < width; ++j)
        sum[j] += a[q] * row[j];
    }
    for (int64_t j = 0; j < width; ++j)
      c[j0 + j] = alpha * sum[j] + (beta == 0.0f ? 0.0f : beta * c[j0 + j]);
  }
}
