//===- BalancedRows.h - Rows over the threads, idle ones steal -*- C++ -*-===//
//
// Internal to runtime/exec: forBalancedRows runs body(begin, end) over the
// rows [0, n) on the OpenMP threads of the generated loops. Each thread
// owns one contiguous share, as `schedule(static)` would give it, and
// works through it front to back in pieces of `grain` rows: one stream of
// memory per thread, which the hardware prefetchers follow. A thread that
// finishes its share takes pieces from the back of the others' shares, so
// that a thread that runs slower (a virtual CPU that its host shares, a
// core that also serves interrupts) no longer holds every other thread at
// the end of the region. Each row is still computed whole by one thread,
// so results do not depend on who computes which row.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_BALANCEDROWS_H
#define TRA_EXEC_BALANCEDROWS_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tra {
namespace exec {

namespace detail {
/// The rows not yet taken of one thread's share, [low, high), in one word
/// that owner and thieves update with compare-and-swap.
struct alignas(64) RowShare {
  std::atomic<uint64_t> bounds;

  static uint64_t pack(uint32_t low, uint32_t high) {
    return uint64_t(low) | (uint64_t(high) << 32);
  }
  /// Takes up to `count` rows from the front (owner) or the back (thief);
  /// false when none are left.
  bool take(bool front, int64_t count, int64_t &begin, int64_t &end) {
    uint64_t cur = bounds.load(std::memory_order_relaxed);
    for (;;) {
      uint32_t low = uint32_t(cur), high = uint32_t(cur >> 32);
      if (low >= high)
        return false;
      uint32_t n = uint32_t(std::min<int64_t>(count, high - low));
      uint64_t next = front ? pack(low + n, high) : pack(low, high - n);
      if (bounds.compare_exchange_weak(cur, next, std::memory_order_relaxed)) {
        begin = front ? low : high - n;
        end = front ? low + n : high;
        return true;
      }
    }
  }
};
} // namespace detail

/// Bytes of a matrix a thread takes at a time: a few hundred cache lines,
/// long enough for the prefetchers, short enough to even out the threads.
constexpr int64_t kPieceBytes = 32 << 10;

/// Rows of `rowBytes` bytes each per piece of about kPieceBytes.
inline int64_t rowsPerPiece(int64_t rowBytes) {
  return std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(1, rowBytes));
}

/// Runs body(begin, end) over [0, n) on the OpenMP threads when `parallel`
/// (and there are threads), else once on the calling thread.
template <class Body>
void forBalancedRows(int64_t n, int64_t grain, bool parallel, Body &&body) {
  if (n <= 0)
    return;
#if defined(_OPENMP)
  const int threads = parallel ? omp_get_max_threads() : 1;
  // Shares are 32-bit bounds; larger n (never a matrix row count here)
  // splits statically.
  if (threads > 1 && n < (int64_t(1) << 31)) {
    grain = std::max<int64_t>(1, grain);
    std::unique_ptr<detail::RowShare[]> shares(
        new detail::RowShare[size_t(threads)]);
    for (int t = 0; t < threads; ++t)
      shares[t].bounds.store(
          detail::RowShare::pack(uint32_t(n * t / threads),
                                 uint32_t(n * (t + 1) / threads)),
          std::memory_order_relaxed);
#pragma omp parallel num_threads(threads)
    {
      const int self = omp_get_thread_num();
      int64_t begin, end;
      while (shares[self].take(/*front=*/true, grain, begin, end))
        body(begin, end);
      // Smaller pieces from the back of the others' shares.
      const int64_t steal = std::max<int64_t>(1, grain / 2);
      for (int d = 1; d < threads; ++d) {
        detail::RowShare &other = shares[(self + d) % threads];
        while (other.take(/*front=*/false, steal, begin, end))
          body(begin, end);
      }
    }
    return;
  }
#else
  (void)parallel;
#endif
  (void)grain;
  body(0, n);
}

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_BALANCEDROWS_H
