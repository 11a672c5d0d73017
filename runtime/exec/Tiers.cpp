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
// file, the disk reads behind its page faults overlap it too); a thread
// that waits for a copy not finished yet copies what is left of it itself. The
// thread starts with the first fetch and is joined when the runtime is unloaded
// (process exit, or dlclose of a compiled library).
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

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

/// Time spent copying fetched tiles (by the copy thread or a waiting
/// thread) and time compiled code waited for them, since the reset.
std::atomic<int64_t> copyNanoseconds, waitNanoseconds;

int64_t nanosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

constexpr int kMaxFetchRank = 4;

/// One started fetch: a strided region of up to kMaxFetchRank dimensions,
/// in bytes: `rank` dimensions looped over, each position a run of `width`
/// contiguous bytes.
struct FetchCopy {
  char *dst;
  const char *src;
  int64_t width; // Bytes of the innermost run, contiguous on both sides.
  int rank;      // Dimensions looped over, outermost first.
  int64_t sizes[kMaxFetchRank], dstStrides[kMaxFetchRank],
      srcStrides[kMaxFetchRank];

  /// Runs (positions of the looped dimensions) of the copy.
  int64_t runs() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= sizes[d];
    return width == 0 ? 0 : n;
  }

  /// Copies bytes [begin, end) of the run at linear position `run`.
  void copyRun(int64_t run, int64_t begin, int64_t end) const {
    int64_t dstOffset = 0, srcOffset = 0;
    for (int d = rank; d-- > 0;) {
      int64_t index = run % sizes[d];
      run /= sizes[d];
      dstOffset += index * dstStrides[d];
      srcOffset += index * srcStrides[d];
    }
    std::memcpy(dst + dstOffset + begin, src + srcOffset + begin,
                size_t(end - begin));
  }
};

/// Bytes one piece of a fetch copies: small enough that a waiting thread
/// can take over the rest of a copy in progress, large enough that claiming
/// pieces costs nothing next to copying them.
constexpr int64_t kPieceBytes = int64_t(1) << 18;

/// A started fetch, cut into pieces that the copy thread and a thread
/// waiting for it claim one at a time.
class FetchJob {
public:
  explicit FetchJob(const FetchCopy &copy) : copy(copy) {
    int64_t runs = copy.runs();
    if (runs == 0) {
      piecesPerRun = runsPerPiece = 1;
      numPieces = 0;
    } else if (runs == 1) {
      // One run: pieces of its bytes.
      piecesPerRun = std::max<int64_t>(1, copy.width / kPieceBytes);
      runsPerPiece = 1;
      numPieces = piecesPerRun;
    } else {
      piecesPerRun = 1;
      runsPerPiece = std::max<int64_t>(1, kPieceBytes / copy.width);
      numPieces = (runs + runsPerPiece - 1) / runsPerPiece;
    }
  }

  /// Copies one unclaimed piece; false if none is left.
  bool copyPiece() {
    int64_t piece = next.fetch_add(1, std::memory_order_relaxed);
    if (piece >= numPieces)
      return false;
    auto begin = std::chrono::steady_clock::now();
    if (piecesPerRun > 1) {
      int64_t begin = copy.width * piece / piecesPerRun;
      int64_t end = copy.width * (piece + 1) / piecesPerRun;
      copy.copyRun(0, begin, end);
    } else {
      int64_t first = piece * runsPerPiece;
      int64_t last = std::min(copy.runs(), first + runsPerPiece);
      for (int64_t run = first; run < last; ++run)
        copy.copyRun(run, 0, copy.width);
    }
    copyNanoseconds.fetch_add(nanosecondsSince(begin),
                              std::memory_order_relaxed);
    done.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }

  bool finished() const {
    return done.load(std::memory_order_acquire) == numPieces;
  }

private:
  FetchCopy copy;
  int64_t piecesPerRun, runsPerPiece, numPieces;
  std::atomic<int64_t> next{0}, done{0};
};

/// The copy thread and the fetches started and not yet waited for. The
/// thread copies the fetches in the order they started; a thread waiting
/// for a fetch copies the pieces of it that are left itself rather than
/// sleep (on a CPU the copy thread competes for the same cores, and a copy
/// waited for is on the critical path).
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
    auto job = std::make_shared<FetchJob>(copy);
    std::lock_guard<std::mutex> lock(mutex);
    if (!thread.joinable())
      thread = std::thread([this] { work(); });
    int64_t handle = started++;
    jobs.emplace(handle, job);
    queue.push_back(job);
    wake.notify_one();
    return handle;
  }

  /// Waits for fetch `handle`; false if no such fetch is in flight.
  bool wait(int64_t handle) {
    std::shared_ptr<FetchJob> job;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = jobs.find(handle);
      if (it == jobs.end())
        return false;
      job = std::move(it->second);
      jobs.erase(it);
    }
    if (job->finished())
      return true;
    auto begin = std::chrono::steady_clock::now();
    while (job->copyPiece()) {
    }
    if (!job->finished()) {
      // The copy thread is copying the last pieces.
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return job->finished(); });
    }
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
      std::shared_ptr<FetchJob> job = queue.front();
      queue.pop_front();
      lock.unlock();
      while (job->copyPiece()) {
      }
      lock.lock();
      // Under the mutex, so that a waiter that saw the job unfinished is
      // already waiting for the notification.
      done.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable wake, done;
  std::deque<std::shared_ptr<FetchJob>> queue;
  std::unordered_map<int64_t, std::shared_ptr<FetchJob>> jobs;
  int64_t started = 0;
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
