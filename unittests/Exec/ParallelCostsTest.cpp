//===- ParallelCostsTest.cpp - When the runtime's products use threads ----===//
//
// The cost rule of tra/Exec/ParallelCosts.h, which the compiler (loop nests)
// and the runtime (products) share, and the runtime's thresholds
// (Parallel.h) after tra_exec_set_parallel_costs and
// tra_exec_set_num_threads: the formula's values, one thread never splits,
// invalid figures fall back to the defaults, huge figures saturate.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

#include "tra/Exec/ABI.h"
#include "tra/Exec/ParallelCosts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace tra::exec;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(ParallelCostsTest, TheRule) {
  // 2 us per region, 20 GB/s and 50 G multiply-adds/s per core.
  ParallelCosts costs{2e-6, 20e9, 50e9};
  ASSERT_TRUE(costs.valid());
  // kSplitMargin (4) x 2 us x T / (T - 1).
  EXPECT_DOUBLE_EQ(minParallelSeconds(costs, 2), 16e-6);
  EXPECT_DOUBLE_EQ(minParallelSeconds(costs, 5), 10e-6);
  EXPECT_EQ(minParallelBytes(costs, 2), 320000);
  EXPECT_EQ(minParallelMacs(costs, 2), 800000);
  EXPECT_EQ(minParallelMacs(costs, 5), 500000);
  // More threads never raise the bar.
  for (int64_t t = 2; t < 64; ++t)
    EXPECT_LE(minParallelMacs(costs, t + 1), minParallelMacs(costs, t));
  // One thread (or none) never splits.
  EXPECT_TRUE(std::isinf(minParallelSeconds(costs, 1)));
  EXPECT_EQ(minParallelBytes(costs, 1), kMax);
  EXPECT_EQ(minParallelMacs(costs, 0), kMax);
  // Saturates instead of overflowing; never below one unit.
  EXPECT_EQ(minParallelBytes(ParallelCosts{0.5, 1e30, 1}, 2), kMax);
  EXPECT_EQ(minParallelBytes(ParallelCosts{1e-300, 1, 1}, 2), 1);
}

TEST(ParallelCostsTest, FromDeviceFigures) {
  // 40 GB/s and 268.8 Gflop/s over 2 cores, 1.5 us per region.
  ParallelCosts costs = parallelCostsOf(40e9, 268.8e9, 2, 1.5e-6);
  ASSERT_TRUE(costs.valid());
  EXPECT_DOUBLE_EQ(costs.coreBytesPerSecond, 20e9);
  EXPECT_DOUBLE_EQ(costs.coreMacsPerSecond, 67.2e9);
  EXPECT_DOUBLE_EQ(costs.syncSeconds, 1.5e-6);
  // Any figure missing or not positive: no costs.
  EXPECT_FALSE(parallelCostsOf(0, 1e9, 2, 1e-6).valid());
  EXPECT_FALSE(parallelCostsOf(1e9, -1, 2, 1e-6).valid());
  EXPECT_FALSE(parallelCostsOf(1e9, 1e9, 0, 1e-6).valid());
  EXPECT_FALSE(parallelCostsOf(1e9, 1e9, 2, 0).valid());
  EXPECT_FALSE(parallelCostsOf(1e9, NAN, 2, 1e-6).valid());
  EXPECT_FALSE(parallelCostsOf(INFINITY, 1e9, 2, 1e-6).valid());
  EXPECT_FALSE(ParallelCosts{}.valid());
  EXPECT_TRUE(kDefaultParallelCosts.valid());
}

TEST(ParallelCostsTest, RuntimeThresholds) {
  tra_exec_set_parallel_costs(2e-6, 20e9, 50e9);
  tra_exec_set_num_threads(2);
  EXPECT_EQ(parallelMinBytes(), 320000);
  EXPECT_EQ(parallelMinMacs(), 800000);
  tra_exec_set_num_threads(5);
  EXPECT_EQ(parallelMinMacs(), 500000);
  tra_exec_set_num_threads(1);
  EXPECT_EQ(parallelMinBytes(), kMax);
  EXPECT_EQ(parallelMinMacs(), kMax);
  // Invalid figures (a program compiled without CPU figures: zeros):
  // the defaults.
  tra_exec_set_num_threads(2);
  tra_exec_set_parallel_costs(0, 0, 0);
  EXPECT_EQ(parallelMinBytes(), minParallelBytes(kDefaultParallelCosts, 2));
  EXPECT_EQ(parallelMinMacs(), minParallelMacs(kDefaultParallelCosts, 2));
  tra_exec_set_parallel_costs(NAN, 1e9, 1e9);
  EXPECT_EQ(parallelMinMacs(), minParallelMacs(kDefaultParallelCosts, 2));
  tra_exec_set_num_threads(1);
}

} // namespace
