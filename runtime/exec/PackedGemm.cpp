//===- PackedGemm.cpp - The runtime's own packed f32 GEMM -----------------===//
//
// The BLIS scheme with an AVX-512 micro-kernel of kMR x kNR = 8 x 32
// (16 accumulators of 16 floats; per step of k two loads of B, eight
// broadcasts of A, sixteen FMAs). The product is cut into tasks of kMC
// rows x nc columns (nc a multiple of kNR chosen so that every thread gets
// work); a task walks k in blocks of kKC, packing
//   - A's kMC x kKC block into slivers of kMR rows, k-major (pa[p*8 + r]),
//   - B's kKC x nc block into slivers of kNR columns, k-major
//     (pb[p*32 + j]), converting 16-bit and Q8_0 elements (GemmQ8.h) to
//     f32 as it goes (a transposed B, stored n x k, through 16 x 16
//     register transposes),
// then runs the micro-kernel over every (row sliver, column sliver) pair,
// the B sliver (32 KiB) streamed from L2, the A sliver (8 KiB) in L1. Rows
// and columns past the edges are zero in the packed panels; the kernel
// stores only the valid rows and (masked) columns. The micro-kernel is the
// program's own where it has one (tra-emit-cpu-microkernels generates it
// with the vector dialect for the program's target CPU), else the one
// below (intrinsics); both compute the same sums in the same order.
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"
#include "GeneratedKernels.h"
#include "Parallel.h"

#include "GemmQ8.h"
#include "Half.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace tra::exec;

#if defined(__x86_64__)
namespace {

constexpr int64_t kMR = 8, kNR = 32, kKC = 256, kMC = 128, kMaxNC = 512;

#define TRA_AVX512 TRA_EXEC_AVX512

/// A 64-byte aligned scratch buffer of floats, grown on demand.
struct Scratch {
  struct Free {
    void operator()(float *p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data;
  size_t size = 0;
  float *get(size_t count) {
    if (count > size) {
      size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
      data.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
      if (!data)
        std::abort();
      size = count;
    }
    return data.get();
  }
};

/// The ABI element type of B's type.
template <GemmBType T> constexpr int abiType() {
  return T == GemmBType::F32   ? TRA_EXEC_F32
         : T == GemmBType::F16 ? TRA_EXEC_F16
                               : TRA_EXEC_BF16;
}

template <GemmBType T> constexpr int64_t elementBytes() {
  return T == GemmBType::F32 ? 4 : 2;
}

/// B as stored, a row-major matrix of f32, f16 or bf16 elements, read as
/// f32: what packB needs of each type of B.
template <GemmBType T> struct DenseB {
  const void *data;
  int64_t ld;

  const uint8_t *at(int64_t row, int64_t col) const {
    return static_cast<const uint8_t *>(data) +
           (row * ld + col) * elementBytes<T>();
  }
  /// Elements (row, col .. col + 16).
  TRA_AVX512 __m512 load16(int64_t row, int64_t col) const {
    return load16AsFloat<abiType<T>()>(at(row, col));
  }
  /// Element (row, col) (edges).
  float load1(int64_t row, int64_t col) const {
    return elementAsFloat(abiType<T>(), at(row, col), 0);
  }
};

/// B as stored in Q8_0 (GemmQ8.h), read as f32.
struct Q8B {
  Q8Matrix w;

  /// Elements (row, col .. col + 16) for a multiple of 16 `col` (one
  /// block's scale).
  TRA_AVX512 __m512 load16(int64_t row, int64_t col) const {
    return _mm512_mul_ps(load16Int8AsFloat(w.q + row * w.ldq + col),
                         _mm512_set1_ps(w.scale(row, col)));
  }
  float load1(int64_t row, int64_t col) const { return w.element(row, col); }
};

/// Transposes the 16 x 16 matrix whose rows are r[0..15] in place.
TRA_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + c], lane L: column 4L + c of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]),
            c = _mm512_castps_pd(t[4 * i + 2]),
            d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  __m512 out[16];
  for (int c = 0; c < 4; ++c) {
    __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
    __m512 u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    __m512 u2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
    __m512 u3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    out[c] = _mm512_shuffle_f32x4(u0, u2, 0x88);
    out[4 + c] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
    out[8 + c] = _mm512_shuffle_f32x4(u1, u3, 0x88);
    out[12 + c] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  }
  for (int i = 0; i < 16; ++i)
    r[i] = out[i];
}

/// Packs op(B)[p0 .. p0+kc, j0 .. j0+nc) into slivers of kNR columns (j0
/// and p0 multiples of 16). `b` is a copy: its fields stay in registers
/// across the stores to `pb`.
template <class B>
TRA_AVX512 void packB(bool transB, const B b, int64_t p0, int64_t kc,
                      int64_t j0, int64_t nc, float *pb) {
  for (int64_t js = 0; js < nc; js += kNR) {
    float *dst = pb + js * kc;
    const int64_t width = std::min(kNR, nc - js);
    if (!transB) {
      // B stored k x n: each k gives kNR consecutive columns.
      for (int64_t p = 0; p < kc; ++p) {
        if (width == kNR) {
          _mm512_store_ps(dst + p * kNR, b.load16(p0 + p, j0 + js));
          _mm512_store_ps(dst + p * kNR + 16, b.load16(p0 + p, j0 + js + 16));
        } else {
          for (int64_t j = 0; j < kNR; ++j)
            dst[p * kNR + j] = j < width ? b.load1(p0 + p, j0 + js + j) : 0.0f;
        }
      }
      continue;
    }
    // B stored n x k: rows j of B are columns of op(B); 16 x 16 blocks are
    // transposed in registers.
    int64_t p = 0;
    if (width == kNR) {
      for (; p + 16 <= kc; p += 16)
        for (int64_t half = 0; half < 2; ++half) {
          __m512 r[16];
          for (int64_t i = 0; i < 16; ++i)
            r[i] = b.load16(j0 + js + 16 * half + i, p0 + p);
          transpose16(r);
          for (int64_t i = 0; i < 16; ++i)
            _mm512_store_ps(dst + (p + i) * kNR + 16 * half, r[i]);
        }
    }
    for (int64_t j = 0; j < kNR; ++j)
      for (int64_t q = p; q < kc; ++q)
        dst[q * kNR + j] = j < width ? b.load1(j0 + js + j, p0 + q) : 0.0f;
  }
}

/// Packs op(A)[i0 .. i0+mc, p0 .. p0+kc) into slivers of kMR rows (full
/// slivers of a row-major A through 16 x 16 register transposes, 16
/// columns of k at a time).
TRA_AVX512 void packA(bool transA, const float *a, int64_t lda, int64_t i0,
                      int64_t mc, int64_t p0, int64_t kc, float *pa) {
  for (int64_t is = 0; is < mc; is += kMR) {
    float *dst = pa + is * kc;
    const int64_t rows = std::min(kMR, mc - is);
    if (transA) {
      // A stored k x m: kMR consecutive rows of op(A) per k.
      for (int64_t p = 0; p < kc; ++p) {
        const float *src = a + (p0 + p) * lda + i0 + is;
        for (int64_t r = 0; r < kMR; ++r)
          dst[p * kMR + r] = r < rows ? src[r] : 0.0f;
      }
      continue;
    }
    int64_t done = 0;
    if (rows == kMR) {
      static_assert(kMR == 8, "the transpose packs slivers of 8 rows");
      for (; done + 16 <= kc; done += 16) {
        __m512 r[16];
        for (int64_t i = 0; i < 8; ++i) {
          r[i] = _mm512_loadu_ps(a + (i0 + is + i) * lda + p0 + done);
          r[8 + i] = _mm512_setzero_ps();
        }
        transpose16(r);
        for (int64_t i = 0; i < 16; ++i)
          _mm256_storeu_ps(dst + (done + i) * kMR,
                           _mm512_castps512_ps256(r[i]));
      }
    }
    for (int64_t r = 0; r < kMR; ++r) {
      if (r >= rows) {
        for (int64_t p = 0; p < kc; ++p)
          dst[p * kMR + r] = 0.0f;
        continue;
      }
      const float *src = a + (i0 + is + r) * lda + p0;
      for (int64_t p = done; p < kc; ++p)
        dst[p * kMR + r] = src[p];
    }
  }
}

/// How the micro-kernel combines its sums with C.
struct Epilogue {
  float alpha, beta;
  /// C += alpha * sums (a later block of k), else
  /// C = alpha * sums + beta * C.
  bool accumulate;
};

/// C[0 .. rows, 0 .. cols) (ldc) with the kMR x kNR product of a packed A
/// sliver and a packed B sliver over kc: the runtime's own kernel, for
/// programs without a generated one.
TRA_AVX512 void builtinMicroKernel(int64_t kc, const float *pa, const float *pb,
                                   float *c, int64_t ldc, int64_t rows,
                                   int64_t cols, Epilogue e) {
  __m512 acc[kMR][2];
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b0 = _mm512_load_ps(pb + p * kNR);
    __m512 b1 = _mm512_load_ps(pb + p * kNR + 16);
    for (int r = 0; r < kMR; ++r) {
      __m512 av = _mm512_set1_ps(pa[p * kMR + r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  const __mmask16 m0 =
      cols >= 16 ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32   ? __mmask16(0xffff)
                       : cols <= 16 ? __mmask16(0)
                                    : __mmask16((1u << (cols - 16)) - 1);
  for (int r = 0; r < kMR; ++r) {
    if (r >= rows)
      break;
    float *row = c + r * ldc;
    for (int h = 0; h < 2; ++h) {
      __mmask16 mask = h == 0 ? m0 : m1;
      __m512 v = _mm512_mul_ps(alpha, acc[r][h]);
      if (e.accumulate)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, row + 16 * h));
      else if (e.beta != 0.0f)
        v = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, row + 16 * h), v);
      _mm512_mask_storeu_ps(row + 16 * h, mask, v);
    }
  }
}

/// builtinMicroKernel's product through the program's compiled kernel
/// (tra_exec_microkernel_f32_8x32), which computes the same sums in the
/// same order.
void generatedMicroKernel(int64_t kc, const float *pa, const float *pb,
                          float *c, int64_t ldc, int64_t rows, int64_t cols,
                          Epilogue e) {
  TraExecMemRefF32 a = memRefOf(pa, kc * kMR), b = memRefOf(pb, kc * kNR),
                   cView = memRefOf(c, (rows - 1) * ldc + cols);
  _mlir_ciface_tra_exec_microkernel_f32_8x32(kc, &a, &b, &cView, ldc, rows,
                                             cols, e.alpha,
                                             e.accumulate ? 1.0f : e.beta);
}

/// The micro-kernel the packed GEMM runs now.
using MicroKernelFn = void (*)(int64_t, const float *, const float *, float *,
                               int64_t, int64_t, int64_t, Epilogue);
MicroKernelFn getMicroKernel() {
  return generatedKernelsEnabled() && _mlir_ciface_tra_exec_microkernel_f32_8x32
             ? generatedMicroKernel
             : builtinMicroKernel;
}

/// The work of one task: rows [i0, i0 + mc) x columns [j0, j0 + nc) of C.
template <class B>
TRA_AVX512 void runTask(bool transA, bool transB, int64_t i0, int64_t mc,
                        int64_t j0, int64_t nc, int64_t k, float alpha,
                        const float *a, int64_t lda, const B &b, float beta,
                        float *c, int64_t ldc) {
  static thread_local Scratch scratchA, scratchB;
  const int64_t mcPadded = (mc + kMR - 1) / kMR * kMR;
  const int64_t ncPadded = (nc + kNR - 1) / kNR * kNR;
  float *pa = scratchA.get(size_t(mcPadded * kKC));
  float *pb = scratchB.get(size_t(ncPadded * kKC));
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    packB(transB, b, p0, kc, j0, nc, pb);
    packA(transA, a, lda, i0, mc, p0, kc, pa);
    Epilogue e{alpha, beta, p0 > 0};
    const MicroKernelFn microKernel = getMicroKernel();
    for (int64_t is = 0; is < mc; is += kMR)
      for (int64_t js = 0; js < nc; js += kNR)
        microKernel(kc, pa + is * kc, pb + js * kc,
                    c + (i0 + is) * ldc + j0 + js, ldc, std::min(kMR, mc - is),
                    std::min(kNR, nc - js), e);
  }
}

/// packedGemm for B read through `b` (DenseB or Q8B), m, n, k > 0.
template <class B>
void gemmTyped(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               float alpha, const float *a, int64_t lda, const B &b, float beta,
               float *c, int64_t ldc) {
  int threads = 1;
#if defined(_OPENMP)
  if (m * n * k >= parallelMinMacs())
    threads = omp_get_max_threads();
#endif
  // Columns per task: a multiple of kNR, at most kMaxNC, so that every
  // thread gets at least one task where n allows.
  const int64_t rowTasks = (m + kMC - 1) / kMC;
  int64_t perThread = (n + threads - 1) / threads;
  int64_t nc = std::min<int64_t>(kMaxNC, (perThread + kNR - 1) / kNR * kNR);
  if (rowTasks >= threads)
    nc = std::min<int64_t>(kMaxNC, (n + kNR - 1) / kNR * kNR);
  const int64_t columnTasks = (n + nc - 1) / nc;
  const int64_t tasks = rowTasks * columnTasks;
  auto task = [&](int64_t t) {
    int64_t i0 = (t % rowTasks) * kMC, j0 = (t / rowTasks) * nc;
    runTask(transA, transB, i0, std::min(kMC, m - i0), j0, std::min(nc, n - j0),
            k, alpha, a, lda, b, beta, c, ldc);
  };
  (void)threads;
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t)
    task(t);
}

/// C = beta * C (a product with k == 0).
void scaleC(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

} // namespace
#endif

extern "C" const char *tra_exec_microkernel(void) {
#if defined(__x86_64__)
  if (tra::exec::packedGemmAvailable())
    return getMicroKernel() == generatedMicroKernel ? "generated" : "builtin";
#endif
  return "none";
}

bool tra::exec::packedGemmAvailable() {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("f16c") &&
                                __builtin_cpu_supports("fma");
  return available;
#else
  return false;
#endif
}

void tra::exec::packedGemm(GemmBType bType, bool transA, bool transB, int64_t m,
                           int64_t n, int64_t k, float alpha, const float *a,
                           int64_t lda, const void *b, int64_t ldb, float beta,
                           float *c, int64_t ldc) {
#if defined(__x86_64__)
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0)
    return scaleC(m, n, beta, c, ldc);
  switch (bType) {
  case GemmBType::F32:
    return gemmTyped(transA, transB, m, n, k, alpha, a, lda,
                     DenseB<GemmBType::F32>{b, ldb}, beta, c, ldc);
  case GemmBType::F16:
    return gemmTyped(transA, transB, m, n, k, alpha, a, lda,
                     DenseB<GemmBType::F16>{b, ldb}, beta, c, ldc);
  case GemmBType::BF16:
    return gemmTyped(transA, transB, m, n, k, alpha, a, lda,
                     DenseB<GemmBType::BF16>{b, ldb}, beta, c, ldc);
  }
#endif
  std::abort();
}

void tra::exec::packedGemmQ8(int64_t m, int64_t n, int64_t blocks,
                             const float *a, int64_t lda, const Q8Matrix &w,
                             float beta, float *c, int64_t ldc) {
#if defined(__x86_64__)
  if (m <= 0 || n <= 0)
    return;
  if (blocks <= 0)
    return scaleC(m, n, beta, c, ldc);
  // kKC is a multiple of kQ8Block: the 16 elements packB reads at a time
  // share a scale.
  static_assert(kKC % kQ8Block == 0, "a block of k holds whole Q8_0 blocks");
  return gemmTyped(false, true, m, n, kQ8Block * blocks, 1.0f, a, lda, Q8B{w},
                   beta, c, ldc);
#endif
  std::abort();
}
