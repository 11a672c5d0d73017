//===- ParallelCosts.h - When splitting work over threads pays -*- C++ -*-===//
//
// When the runtime's products (one-row products, the packed GEMM) run on
// the thread pool: work runs on T threads when the time it takes on one
// core is at least
//
//   minParallelSeconds = kSplitMargin * syncSeconds * T / (T - 1),
//
// where syncSeconds is what one parallel region costs beyond its work (a
// CPU device's `thread_sync_seconds` in the hardware description). A split
// saves t * (1 - 1/T) of a one-core time t and costs syncSeconds; the margin
// covers what the mean leaves out: the threads finishing unevenly and the
// occasional wake of a pool that fell asleep between steps. One-core times
// come from the description too: bytes streamed at the device's memory
// bandwidth over its cores (one-row products), multiply-adds at its f32
// peak over its cores (products). The compiler derives the figures from
// the description (hw::Device::getParallelCosts) and puts them in the
// program's descriptor; the runtime applies the rule for its thread count.
//
// Generated loop nests still use tra-parallelize-loops' parallel-min-work
// (4194304), not this rule, which would split smaller ones: on the
// development VM the two measurements of test/Integration/threads.test's
// 256 x 2048 ops disagreed (two threads 2x slower than one in a first run,
// 20-35% faster in a later idle one); the rule is for them to adopt once
// measured steadily.
//
// Header-only and free of LLVM so that the hardware library and
// runtime/exec share it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_PARALLELCOSTS_H
#define TRA_EXEC_PARALLELCOSTS_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace tra {
namespace exec {

/// What splitting work over a CPU's threads costs, and how fast one core
/// works.
struct ParallelCosts {
  /// Seconds one parallel region costs beyond its work.
  double syncSeconds = 0;
  /// Bytes per second one core streams from memory.
  double coreBytesPerSecond = 0;
  /// f32 multiply-adds per second of one core at peak.
  double coreMacsPerSecond = 0;

  /// All three figures finite and positive.
  bool valid() const {
    auto positive = [](double v) { return std::isfinite(v) && v > 0; };
    return positive(syncSeconds) && positive(coreBytesPerSecond) &&
           positive(coreMacsPerSecond);
  }
};

/// A split must save kSplitMargin times the region's mean cost.
constexpr double kSplitMargin = 4;

/// The costs the runtime assumes for a program that carries none: 2 us per
/// region, 10 GB/s and 32 G multiply-adds/s per core (a modest AVX2 core).
constexpr ParallelCosts kDefaultParallelCosts{2e-6, 10e9, 32e9};

/// The costs of a CPU device described by its figures: the whole device's
/// memory bandwidth (bytes/s) and f32 peak (flop/s), its cores and its
/// seconds per parallel region. Invalid (all zero) when a figure is not
/// positive.
inline ParallelCosts parallelCostsOf(double memoryBandwidth, double peakF32,
                                     int64_t cores, double syncSeconds) {
  if (cores <= 0 || !(memoryBandwidth > 0) || !(peakF32 > 0) ||
      !(syncSeconds > 0))
    return {};
  ParallelCosts costs{syncSeconds, memoryBandwidth / double(cores),
                      peakF32 / 2 / double(cores)};
  return costs.valid() ? costs : ParallelCosts{};
}

/// The least one-core time worth splitting over `threads` threads;
/// infinity for one thread.
inline double minParallelSeconds(const ParallelCosts &costs, int64_t threads) {
  if (threads < 2)
    return std::numeric_limits<double>::infinity();
  return kSplitMargin * costs.syncSeconds * double(threads) /
         double(threads - 1);
}

namespace detail {
/// ceil(seconds * rate) as a count, saturated at INT64_MAX.
inline int64_t countFor(double seconds, double rate) {
  double count = std::ceil(seconds * rate);
  if (!(count < 9.2e18))
    return std::numeric_limits<int64_t>::max();
  return count < 1 ? 1 : int64_t(count);
}
} // namespace detail

/// Bytes a one-row product must stream for `threads` threads to pay.
inline int64_t minParallelBytes(const ParallelCosts &costs, int64_t threads) {
  return detail::countFor(minParallelSeconds(costs, threads),
                          costs.coreBytesPerSecond);
}

/// Multiply-adds a product must take for `threads` threads to pay.
inline int64_t minParallelMacs(const ParallelCosts &costs, int64_t threads) {
  return detail::countFor(minParallelSeconds(costs, threads),
                          costs.coreMacsPerSecond);
}

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_PARALLELCOSTS_H
