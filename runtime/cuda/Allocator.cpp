//===- Allocator.cpp - The caching pool of device memory ------------------===//
//
// cuMemAlloc and cuMemFree synchronize with the device and cost tens of
// microseconds; a decode step allocates and frees dozens of buffers. The pool
// keeps freed blocks by size class and hands them out again. Every GPU
// operation runs on the process's one stream, so a block freed after the
// operations that use it were issued may be reused by operations issued
// later without waiting: the stream orders them.
//
// Size classes: powers of two from 512 bytes to 1 MiB, then multiples of
// 2 MiB. When the driver runs out of memory the cached blocks are returned
// and the allocation is tried once more.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <map>
#include <mutex>
#include <unordered_map>

using namespace tra;
using namespace tra::cuda;

namespace {
struct Block {
  size_t size = 0;
  bool managed = false;
};

struct Pool {
  std::mutex mutex;
  std::multimap<size_t, void *> cached;
  std::unordered_map<void *, Block> live;
  PoolStatistics stats;
};

Pool &pool() {
  // Never destroyed: blocks may be freed by static destructors at exit.
  static Pool *instance = new Pool;
  return *instance;
}

/// The size class of a request of `bytes` (> 0).
size_t sizeClass(size_t bytes) {
  constexpr size_t kSmallLimit = size_t(1) << 20, kLargeUnit = size_t(2) << 20;
  if (bytes <= kSmallLimit) {
    size_t size = 512;
    while (size < bytes)
      size <<= 1;
    return size;
  }
  if (bytes > SIZE_MAX - kLargeUnit)
    return 0;
  return (bytes + kLargeUnit - 1) / kLargeUnit * kLargeUnit;
}

std::string mib(uint64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

/// Frees the cached blocks; the caller holds the pool's mutex.
void releaseLocked(const Active &active, Pool &p) {
  if (p.cached.empty())
    return;
  // Operations issued before may still use the blocks.
  active.api->streamSynchronize(active.stream);
  for (auto &[size, pointer] : p.cached)
    active.api->memFree(reinterpret_cast<CUdeviceptr>(pointer));
  p.cached.clear();
  p.stats.cached = 0;
}
} // namespace

void *tra::cuda::poolAllocate(const Active &active, size_t bytes,
                              bool managed) {
  if (bytes == 0)
    return nullptr;
  size_t size = sizeClass(bytes);
  if (size == 0) {
    recordError("cannot allocate " + std::to_string(bytes) +
                " bytes of GPU memory: the size is too large");
    return nullptr;
  }
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  void *pointer = nullptr;
  if (!managed) {
    auto it = p.cached.find(size);
    if (it != p.cached.end()) {
      pointer = it->second;
      p.cached.erase(it);
      p.stats.cached -= size;
    }
  }
  if (!pointer) {
    CUdeviceptr address = 0;
    auto tryAllocate = [&] {
      return managed ? active.api->memAllocManaged(&address, size,
                                                   CU_MEM_ATTACH_GLOBAL)
                     : active.api->memAlloc(&address, size);
    };
    CUresult r = tryAllocate();
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      releaseLocked(active, p);
      r = tryAllocate();
    }
    if (r != CUDA_SUCCESS) {
      size_t freeBytes = 0, totalBytes = 0;
      active.api->memGetInfo(&freeBytes, &totalBytes);
      recordError("cannot allocate " + mib(bytes) + " of GPU memory (" +
                      mib(p.stats.inUse) + " in use by this program, " +
                      mib(freeBytes) + " of " + mib(totalBytes) +
                      " free on the device; cuMemAlloc)",
                  r);
      return nullptr;
    }
    pointer = reinterpret_cast<void *>(address);
  }
  p.live[pointer] = Block{size, managed};
  p.stats.inUse += size;
  if (p.stats.inUse > p.stats.peak)
    p.stats.peak = p.stats.inUse;
  return pointer;
}

void tra::cuda::poolFree(void *pointer) {
  if (!pointer)
    return;
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.live.find(pointer);
  if (it == p.live.end()) {
    recordError("freeing GPU memory that the pool did not allocate");
    return;
  }
  Block block = it->second;
  p.live.erase(it);
  p.stats.inUse -= block.size;
  if (block.managed) {
    // Managed memory is not pooled; cuMemFree waits for its users.
    Active active = activate();
    if (active.api)
      active.api->memFree(reinterpret_cast<CUdeviceptr>(pointer));
    return;
  }
  p.cached.emplace(block.size, pointer);
  p.stats.cached += block.size;
}

void tra::cuda::poolRelease(const Active &active) {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  releaseLocked(active, p);
}

PoolStatistics tra::cuda::getPoolStatistics() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}
