//===- Blas.cpp - BLAS entry points of compiled code ----------------------===//
//
// `tra_exec_sgemm` (declared in tra/Exec/ABI.h) loops over a batch of
// matrix products. Where the CPU has AVX-512 and the program has OpenMP
// threads, the products big enough for threads run on those threads, the
// one pool of the program (the generated loops use it too): one row of C
// (a decoding step's matrix-vector products) through gemvRow (Gemv.h), more
// rows through the runtime's packed GEMM (PackedGemm.h); the small ones go
// to OpenBLAS with one thread, whose own threads then never run, the
// products of a batch (attention's heads) spread over the pool
// (BalancedRows.h: a thread done with its heads takes a slower one's).
// "Big enough" is the program's cost rule (Parallel.h, ParallelCosts.h):
// the one-core time of the product pays for a parallel region on the
// pool's threads, from the hardware description's figures that the
// program carries (tra_exec_set_parallel_costs); below that, which kernel
// runs on one thread is a measured choice (kMinOwnGemvElements,
// kMinPackedMacs).
// Elsewhere OpenBLAS takes every product (sgemv for one row), on its
// threads for products of at least kMinOpenBlasThreadedFlops multiply-adds
// (OpenBLAS's own threads sleep between calls: a 128 x 64 x 64 product split
// over two costs more to wake the second thread than it saves). Without
// OpenBLAS a plain loop nest runs them.
//
// `tra_exec_set_num_threads` sets the threads of the pool (and OpenBLAS's
// where it has them). With OpenBLAS threads beside the pool, the pool's
// threads sleep as soon as a parallel region ends (block time 0), so that
// they never spin while OpenBLAS works; with one pool they spin briefly
// (kPoolBlockTimeMs) between the regions of a step instead of going
// through the kernel's scheduler each time. KMP_BLOCKTIME overrides both.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include "BalancedRows.h"
#include "Gemv.h"
#include "PackedGemm.h"
#include "Parallel.h"

#include "tra/Exec/ParallelCosts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

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

/// The costs of the last tra_exec_set_parallel_costs, and the thresholds
/// they give for gThreads threads.
tra::exec::ParallelCosts gCosts = tra::exec::kDefaultParallelCosts;
int64_t gMinParallelBytes = INT64_MAX, gMinParallelMacs = INT64_MAX;

void updateThresholds() {
  gMinParallelBytes = tra::exec::minParallelBytes(gCosts, gThreads);
  gMinParallelMacs = tra::exec::minParallelMacs(gCosts, gThreads);
}

#if defined(TRA_EXEC_HAVE_OPENBLAS)
/// Smaller products (m * n * k) run on one of OpenBLAS's own threads.
constexpr int64_t kMinOpenBlasThreadedFlops = int64_t(1) << 22;
#endif

#if defined(TRA_EXEC_HAVE_OPENMP)
/// One-row products with fewer elements of B stay on OpenBLAS (on the
/// calling thread) in the one-pool mode: attention's small products, where
/// OpenBLAS's sgemv is faster than gemvRow on one thread (1 x 192 x 64: 0.5
/// vs 1.1 to 1.9 us on Zen 5). A choice of kernel, not of threads.
constexpr int64_t kMinOwnGemvElements = int64_t(1) << 16;

/// Products of several rows with fewer multiply-adds stay on OpenBLAS on
/// one thread unless the pool's threads pay for them (parallelMinMacs):
/// the packed GEMM's fixed cost (about 2 us) makes it 2.5 to 4.4 times
/// slower at 32 x 32 x 32 on one Zen 5 core, as fast at 128 x 128 x 64, and
/// 10 to 20% faster at 8 x 768 x 768. Also a choice of kernel.
constexpr int64_t kMinPackedMacs = int64_t(1) << 20;
#endif

/// How long (ms) the pool's threads spin after a parallel region when it
/// is the only pool.
constexpr int kPoolBlockTimeMs = 1;

/// Whether the large products run on the OpenMP pool (AVX-512 kernels and
/// OpenMP present), OpenBLAS keeping one thread.
bool onePool() {
#if defined(TRA_EXEC_HAVE_OPENMP)
  return tra::exec::packedGemmAvailable();
#else
  return false;
#endif
}

#ifndef TRA_EXEC_HAVE_OPENBLAS
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
#if defined(TRA_EXEC_HAVE_OPENMP)
  // (GPU programs' host code links this file without the kernels.)
  if (onePool() && m == 1 && n * k >= kMinOwnGemvElements) {
    // One row of A is k elements, strided by lda when A is transposed.
    static thread_local std::vector<float> row;
    if (transA && lda != 1) {
      row.resize(size_t(k));
      for (int64_t p = 0; p < k; ++p)
        row[size_t(p)] = a[p * lda];
      a = row.data();
    }
    tra::exec::gemvRow(TRA_EXEC_F32, transB, n, k, alpha, a, b, ldb, beta, c);
    return;
  }
  if (onePool() && m > 1 &&
      (m * n * k >= kMinPackedMacs || m * n * k >= gMinParallelMacs)) {
    tra::exec::packedGemm(tra::exec::GemmBType::F32, transA, transB, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
#endif
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
  // threads the next call uses (always one beside the pool).
  bool serial =
      gThreads > 1 && !onePool() && m * n * k < kMinOpenBlasThreadedFlops;
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
  // Small products of a batch (attention, per head) spread over the pool,
  // each on one thread; a large one uses the threads itself.
  bool spread = false;
#if defined(TRA_EXEC_HAVE_OPENMP)
  spread =
      onePool() && gThreads > 1 && batch > 1 && m * n * k < gMinParallelMacs;
#endif
  tra::exec::forBalancedRows(batch, 1, spread, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      gemm(transA != 0, transB != 0, m, n, k, alpha, a + i * strideA, lda,
           b + i * strideB, ldb, beta, c + i * strideC, ldc);
  });
}

int64_t tra::exec::parallelMinBytes() { return gMinParallelBytes; }

int64_t tra::exec::parallelMinMacs() { return gMinParallelMacs; }

extern "C" void tra_exec_set_parallel_costs(double threadSyncSeconds,
                                            double coreBytesPerSecond,
                                            double coreMacsPerSecond) {
  tra::exec::ParallelCosts costs{threadSyncSeconds, coreBytesPerSecond,
                                 coreMacsPerSecond};
  gCosts = costs.valid() ? costs : tra::exec::kDefaultParallelCosts;
  updateThresholds();
}

extern "C" void tra_exec_set_num_threads(int64_t threads) {
  int count = static_cast<int>(std::max<int64_t>(1, threads));
  gThreads = count;
  updateThresholds();
#ifdef TRA_EXEC_HAVE_OPENBLAS
  openblas_set_num_threads(onePool() ? 1 : count);
#endif
  if (omp_set_num_threads)
    omp_set_num_threads(count);
  if (kmp_set_blocktime && !std::getenv("KMP_BLOCKTIME"))
    kmp_set_blocktime(onePool() ? kPoolBlockTimeMs : 0);
}
