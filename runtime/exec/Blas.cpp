//===- Blas.cpp - BLAS entry points of compiled code ----------------------===//
//
// `tra_exec_sgemm` (declared in tra/Exec/ABI.h) loops over a batch of
// matrix products and calls cblas_sgemm for each. Without OpenBLAS it falls
// back to a plain loop nest, so that programs still run (slowly).
//
// Products of fewer than kMinThreadedFlops multiply-adds run on one thread:
// OpenBLAS would split a 128 x 64 x 64 product over two, and waking the
// second thread costs more than it saves (the stories260K prefill step: 2.33
// ms on two threads with OpenBLAS choosing, 2.02 ms with these products on
// one, 2.07 ms on one thread altogether).
//
// `tra_exec_set_num_threads` sets the threads of both BLAS and the OpenMP
// loops of generated code. The two never run at the same time (BLAS calls
// are outside parallel regions), so each may use all of them, provided the
// OpenMP threads do not keep spinning after a parallel region while BLAS
// runs: their block time is set to 0 (they sleep as soon as a region ends)
// unless KMP_BLOCKTIME says otherwise.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#ifdef TRA_EXEC_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

// The OpenMP runtime (libomp) is linked only into programs whose generated
// loops use threads; the weak reference is null in the others.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" void kmp_set_blocktime(int) __attribute__((weak));

namespace {
/// The thread count of the last tra_exec_set_num_threads.
int gThreads = 1;

#ifdef TRA_EXEC_HAVE_OPENBLAS
/// Smaller products (m * n * k) run on one BLAS thread.
constexpr int64_t kMinThreadedFlops = int64_t(1) << 22;
#else
/// Returns element (i, j) of a row-major matrix read as stored or transposed.
inline float element(const float *m, int64_t ld, bool trans, int64_t i,
                     int64_t j) {
  return trans ? m[j * ld + i] : m[i * ld + j];
}
#endif

/// One C = alpha * op(A) * op(B) + beta * C.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
          float beta, float *c, int64_t ldc) {
#ifdef TRA_EXEC_HAVE_OPENBLAS
  // One row of C (a decoding step's matrix-vector products): cblas_sgemm
  // would pack all of B for one row; sgemv reads B once, as stored.
  if (m == 1) {
    if (beta == 0.0f)
      std::fill(c, c + n, 0.0f);
    int incx = static_cast<int>(transA ? lda : 1);
    if (transB)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(k), alpha, b, static_cast<int>(ldb), a, incx,
                  beta, c, 1);
    else
      cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(k),
                  static_cast<int>(n), alpha, b, static_cast<int>(ldb), a, incx,
                  beta, c, 1);
    return;
  }
  // Setting the thread count only changes how many of OpenBLAS's existing
  // threads the next call uses.
  bool serial = gThreads > 1 && m * n * k < kMinThreadedFlops;
  if (serial)
    openblas_set_num_threads(1);
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
  if (serial)
    openblas_set_num_threads(gThreads);
#else
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += element(a, lda, transA, i, p) * element(b, ldb, transB, p, j);
      float &out = c[i * ldc + j];
      out = alpha * sum + (beta == 0.0f ? 0.0f : beta * out);
    }
  }
#endif
}
} // namespace

extern "C" void tra_exec_sgemm(int64_t batch, int64_t transA, int64_t transB,
                               int64_t m, int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, int64_t strideA,
                               const float *b, int64_t ldb, int64_t strideB,
                               float beta, float *c, int64_t ldc,
                               int64_t strideC) {
  for (int64_t i = 0; i < batch; ++i)
    gemm(transA != 0, transB != 0, m, n, k, alpha, a + i * strideA, lda,
         b + i * strideB, ldb, beta, c + i * strideC, ldc);
}

extern "C" void tra_exec_set_num_threads(int64_t threads) {
  int count = static_cast<int>(std::max<int64_t>(1, threads));
  gThreads = count;
#ifdef TRA_EXEC_HAVE_OPENBLAS
  openblas_set_num_threads(count);
#endif
  if (omp_set_num_threads)
    omp_set_num_threads(count);
  if (kmp_set_blocktime && !std::getenv("KMP_BLOCKTIME"))
    kmp_set_blocktime(0);
}
