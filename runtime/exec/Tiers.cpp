//===- Tiers.cpp - Tiles fetched from the memory tiers of a node ----------===//
//
// A plan may keep read-only weights in a memory tier of the node (host memory
// or the disk holding the checkpoint) instead of device memory; compiled code
// then copies each such tile into a buffer of the device right before the
// operation that reads it (tra_comm.fetch) and reports the copy here. The
// bytes are counted per tier, so that a run can say how many bytes its tiers
// gave (the profile of a generated executable, the LLaMA engine's report)
// and tests can compare that with the plan's estimate.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <atomic>

namespace {
/// Tiers fetched from: host memory and disk (indices TraExecTier).
constexpr int kNumTiers = TRA_EXEC_TIER_DISK + 1;
/// Bytes and fetches per tier since the last reset. Fetches come from the
/// thread that runs the program; atomics keep a reader on another thread
/// (an engine's report) well-defined.
std::atomic<int64_t> fetchedBytes[kNumTiers];
std::atomic<int64_t> fetchCounts[kNumTiers];

bool isTier(int32_t tier) {
  return tier == TRA_EXEC_TIER_HOST || tier == TRA_EXEC_TIER_DISK;
}
} // namespace

extern "C" void tra_exec_tier_fetched(int64_t bytes, int32_t tier) {
  if (!isTier(tier) || bytes < 0)
    return;
  fetchedBytes[tier].fetch_add(bytes, std::memory_order_relaxed);
  fetchCounts[tier].fetch_add(1, std::memory_order_relaxed);
}

extern "C" int64_t tra_exec_tier_bytes(int32_t tier) {
  return isTier(tier) ? fetchedBytes[tier].load(std::memory_order_relaxed) : 0;
}

extern "C" int64_t tra_exec_tier_fetches(int32_t tier) {
  return isTier(tier) ? fetchCounts[tier].load(std::memory_order_relaxed) : 0;
}

extern "C" void tra_exec_tier_reset(void) {
  for (int t = 0; t < kNumTiers; ++t) {
    fetchedBytes[t].store(0, std::memory_order_relaxed);
    fetchCounts[t].store(0, std::memory_order_relaxed);
  }
}
