//===- BalancedRowsTest.cpp - Rows split over threads, the idle stealing --===//
//
// forBalancedRows (runtime/exec/BalancedRows.h), which the one-row
// products (gemvRow, the Q8_0 passes) split their rows with: every row
// exactly once for every count of rows, piece size and thread count; one
// call on the calling thread when not parallel; and a thread held up in
// its own share has the rest of it taken by another.
//
//===----------------------------------------------------------------------===//

#include "BalancedRows.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace tra::exec;

namespace {

/// Runs forBalancedRows over n rows and counts how often each row came.
std::vector<int> coverage(int64_t n, int64_t grain, bool parallel) {
  std::vector<std::atomic<int>> seen(size_t(n < 0 ? 0 : n));
  for (auto &s : seen) // (not zero-initialised before C++20)
    s.store(0);
  std::atomic<bool> outOfRange{false};
  forBalancedRows(n, grain, parallel, [&](int64_t begin, int64_t end) {
    if (begin < 0 || end > n || begin >= end) {
      outOfRange = true;
      return;
    }
    for (int64_t j = begin; j < end; ++j)
      seen[size_t(j)].fetch_add(1);
  });
  EXPECT_FALSE(outOfRange) << "n " << n << " grain " << grain;
  std::vector<int> counts;
  for (auto &s : seen)
    counts.push_back(s.load());
  return counts;
}

TEST(BalancedRowsTest, EveryRowOnce) {
#if defined(_OPENMP)
  const int saved = omp_get_max_threads();
  // (More than three threads leave libomp blocks behind at exit that
  // LeakSanitizer reports in the ASan build.)
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
#else
  {
    const int threads = 1;
#endif
    for (int64_t n : {1, 2, 3, 7, 31, 32, 33, 1000, 100003})
      for (int64_t grain : {1, 2, 7, 32, 1000})
        for (bool parallel : {false, true}) {
          std::vector<int> counts = coverage(n, grain, parallel);
          for (int64_t j = 0; j < n; ++j)
            ASSERT_EQ(counts[size_t(j)], 1)
                << "row " << j << " of " << n << ", grain " << grain << ", "
                << threads << " threads, parallel " << parallel;
        }
  }
#if defined(_OPENMP)
  omp_set_num_threads(saved);
#endif
}

TEST(BalancedRowsTest, NoRowsNoCalls) {
  int calls = 0;
  forBalancedRows(0, 4, true, [&](int64_t, int64_t) { ++calls; });
  forBalancedRows(-5, 4, true, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(BalancedRowsTest, NotParallelIsOneCallOnTheCaller) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::thread::id caller = std::this_thread::get_id(), ran;
  forBalancedRows(1000, 16, false, [&](int64_t begin, int64_t end) {
    calls.push_back({begin, end});
    ran = std::this_thread::get_id();
  });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(int64_t(0), int64_t(1000)));
  EXPECT_EQ(ran, caller);
}

#if defined(_OPENMP)
// Thread 0 stops after its first piece until another thread has computed
// a row of thread 0's share (or 20 s pass): only stealing lets it go on.
TEST(BalancedRowsTest, AnIdleThreadTakesTheRestOfASlowOnesShare) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  const int64_t n = 1000, grain = 10;
  std::vector<int> owner(size_t(n), -1);
  std::mutex lock;
  std::atomic<bool> stolen{false};
  forBalancedRows(n, grain, true, [&](int64_t begin, int64_t end) {
    const int self = omp_get_thread_num();
    {
      std::lock_guard<std::mutex> guard(lock);
      for (int64_t j = begin; j < end; ++j)
        owner[size_t(j)] = self;
    }
    // Thread 0's share is the first half.
    if (self != 0 && begin < n / 2)
      stolen = true;
    if (self == 0 && begin == 0) {
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!stolen && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    }
  });
  omp_set_num_threads(saved);
  EXPECT_TRUE(stolen) << "no other thread took rows of thread 0's share";
  // How many more it takes once thread 0 goes on depends on timing (under
  // ASan thread 0 took back most of its share); every row is computed.
  for (int64_t j = 0; j < n; ++j)
    ASSERT_NE(owner[size_t(j)], -1) << "row " << j << " never computed";
}
#endif

} // namespace
