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
// A non-blocking fetch (tra_comm.ifetch) is started while the program still
// computes with the previous tile and waited for right before its reader:
// one copy thread per process copies the started tiles in order, so a
// transfer overlaps the compute (and, for tiles streamed from a checkpoint
// file, the disk reads behind its page faults overlap it too). The thread
// starts with the first fetch and is joined when the runtime is unloaded
// (process exit, or dlclose of a compiled library).
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

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

/// Time the copy thread copied and compiled code waited, since the reset.
std::atomic<int64_t> copyNanoseconds, waitNanoseconds;

int64_t nanosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

constexpr int kMaxFetchRank = 4;

/// One started fetch: a strided region of up to kMaxFetchRank dimensions,
/// in bytes.
struct FetchCopy {
  char *dst;
  const char *src;
  int64_t width; // Bytes of the innermost run, contiguous on both sides.
  int rank;      // Dimensions looped over, outermost first.
  int64_t sizes[kMaxFetchRank], dstStrides[kMaxFetchRank],
      srcStrides[kMaxFetchRank];

  void run() const {
    if (width == 0)
      return;
    int64_t index[kMaxFetchRank] = {0, 0, 0, 0};
    while (true) {
      int64_t dstOffset = 0, srcOffset = 0;
      for (int d = 0; d < rank; ++d) {
        dstOffset += index[d] * dstStrides[d];
        srcOffset += index[d] * srcStrides[d];
      }
      std::memcpy(dst + dstOffset, src + srcOffset, size_t(width));
      int d = rank;
      while (d > 0 && ++index[d - 1] == sizes[d - 1])
        index[--d] = 0;
      if (d == 0)
        return;
    }
  }
};

/// The copy thread and the fetches started, in order: fetch `h` is done
/// once `finished > h`.
class Copier {
public:
  ~Copier() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
  }

  int64_t start(const FetchCopy &copy) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!thread.joinable())
      thread = std::thread([this] { work(); });
    queue.push_back(copy);
    wake.notify_one();
    return started++;
  }

  /// Waits for fetch `handle`; false if no such fetch was started.
  bool wait(int64_t handle) {
    std::unique_lock<std::mutex> lock(mutex);
    if (handle < 0 || handle >= started)
      return false;
    if (finished > handle)
      return true;
    auto begin = std::chrono::steady_clock::now();
    done.wait(lock, [&] { return finished > handle; });
    waitNanoseconds.fetch_add(nanosecondsSince(begin),
                              std::memory_order_relaxed);
    return true;
  }

private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      FetchCopy copy = queue.front();
      queue.pop_front();
      lock.unlock();
      auto begin = std::chrono::steady_clock::now();
      copy.run();
      copyNanoseconds.fetch_add(nanosecondsSince(begin),
                                std::memory_order_relaxed);
      lock.lock();
      ++finished;
      done.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable wake, done;
  std::deque<FetchCopy> queue;
  int64_t started = 0, finished = 0;
  bool stopping = false;
  std::thread thread;
};

Copier &copier() {
  static Copier instance;
  return instance;
}

/// The copy of a fetch's arguments (ABI.h), with dimensions of one element
/// dropped, neighbours that are one run in both buffers merged and the
/// innermost run taken as the width; false if they are invalid.
bool describeCopy(void *dst, const void *src, int64_t elementBytes,
                  int64_t rank, const int64_t *sizes, const int64_t *dstStrides,
                  const int64_t *srcStrides, FetchCopy &copy) {
  if (!dst || !src || elementBytes < 1 || rank < 1 || rank > kMaxFetchRank)
    return false;
  copy.dst = static_cast<char *>(dst);
  copy.src = static_cast<const char *>(src);
  copy.rank = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || dstStrides[d] < 0 || srcStrides[d] < 0)
      return false;
    if (sizes[d] == 1)
      continue;
    if (copy.rank > 0) {
      int i = copy.rank - 1;
      // Merge into the dimension before if both buffers continue its run.
      if (copy.dstStrides[i] == sizes[d] * dstStrides[d] * elementBytes &&
          copy.srcStrides[i] == sizes[d] * srcStrides[d] * elementBytes) {
        copy.sizes[i] *= sizes[d];
        copy.dstStrides[i] = dstStrides[d] * elementBytes;
        copy.srcStrides[i] = srcStrides[d] * elementBytes;
        continue;
      }
    }
    copy.sizes[copy.rank] = sizes[d];
    copy.dstStrides[copy.rank] = dstStrides[d] * elementBytes;
    copy.srcStrides[copy.rank] = srcStrides[d] * elementBytes;
    ++copy.rank;
  }
  copy.width = elementBytes;
  if (copy.rank > 0 && copy.dstStrides[copy.rank - 1] == elementBytes &&
      copy.srcStrides[copy.rank - 1] == elementBytes) {
    --copy.rank;
    copy.width *= copy.sizes[copy.rank];
  }
  for (int d = 0; d < copy.rank; ++d)
    if (copy.sizes[d] == 0)
      copy.width = 0;
  return true;
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
  copyNanoseconds.store(0, std::memory_order_relaxed);
  waitNanoseconds.store(0, std::memory_order_relaxed);
}

extern "C" int64_t
tra_exec_fetch_start(void *dst, const void *src, int64_t elementBytes,
                     int64_t rank, int64_t size0, int64_t size1, int64_t size2,
                     int64_t size3, int64_t dstStride0, int64_t dstStride1,
                     int64_t dstStride2, int64_t dstStride3, int64_t srcStride0,
                     int64_t srcStride1, int64_t srcStride2,
                     int64_t srcStride3) {
  const int64_t sizes[] = {size0, size1, size2, size3};
  const int64_t dstStrides[] = {dstStride0, dstStride1, dstStride2, dstStride3};
  const int64_t srcStrides[] = {srcStride0, srcStride1, srcStride2, srcStride3};
  FetchCopy copy;
  if (!describeCopy(dst, src, elementBytes, rank, sizes, dstStrides, srcStrides,
                    copy)) {
    tra_exec_check_failed("tra_comm.ifetch: invalid tile copy (a null "
                          "buffer, a negative size or stride, or a rank "
                          "outside 1 to 4)");
    return -1;
  }
  return copier().start(copy);
}

extern "C" void tra_exec_fetch_wait(int64_t handle) {
  // -1: the start failed and said so.
  if (!copier().wait(handle) && handle != -1)
    tra_exec_check_failed("tra_comm.wait: no fetch was started with this "
                          "handle");
}

extern "C" int64_t tra_exec_fetch_copy_ns(void) {
  return copyNanoseconds.load(std::memory_order_relaxed);
}

extern "C" int64_t tra_exec_fetch_wait_ns(void) {
  return waitNanoseconds.load(std::memory_order_relaxed);
}
