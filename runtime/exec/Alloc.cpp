//===- Alloc.cpp - Buffers of compiled code, reused across calls ----------===//
//
// Compiled code allocates the buffers of its intermediate tensors with
// memref.alloc, which finalize-memref-to-llvm (with use-generic-functions)
// lowers to the three functions below instead of malloc/free.
//
// Why not malloc: an executable or a decoding loop calls the same compiled
// function many times, and each call allocates and frees the same large
// buffers (a 256x2048 f32 activation is 2 MiB). glibc serves such blocks
// with mmap, or from the top of the heap which it trims back to the kernel
// on free; either way every call touches fresh pages, and the page faults
// (zeroing, and in a virtual machine the host's second-level faults) cost
// more than the arithmetic: 5-6 ms per 2 MiB activation of the MLP
// benchmark, against 0.2 ms for the same loop on a buffer already mapped.
//
// So blocks of at least kMinCachedBytes are kept on free, by size, and
// handed out again to the next request of the same size and alignment —
// after the first call the steady state allocates nothing from the system.
// The cache holds at most a quarter of the physical memory; beyond that,
// freed blocks go back to the system. Smaller blocks go straight to
// malloc/free, which serves them well. Allocation and free may come from
// the OpenMP threads of parallel loops, so the cache is locked.
//
// A large block the cache cannot serve is mapped with MAP_POPULATE: the
// kernel fills in all its pages in one call. Faulting them in one by one on
// first touch costs about 10 us per 4 KiB page in a virtual machine (a
// 4 MiB block: 10.7 ms faulted, 0.5 ms populated), which made the first
// call of a compiled function (a prompt's prefill) several times slower
// than the next ones.
//
// Under AddressSanitizer nothing is cached, so a use after free in
// compiled code is still reported.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRA_EXEC_NO_BLOCK_CACHE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TRA_EXEC_NO_BLOCK_CACHE 1
#endif

namespace {
constexpr size_t kMinCachedBytes = size_t(64) << 10;
/// Every block starts with this much room for its header, so the returned
/// address keeps the alignment of the block.
constexpr size_t kMinAlignment = 64;

/// Written right before the address handed to compiled code.
struct Header {
  void *raw;
  size_t bytes;     // size of the block at `raw`
  size_t alignment; // alignment of the address handed out
  size_t mapped;    // 1: `raw` is a mapping of `bytes` rounded up to pages
  size_t magic;
};
constexpr size_t kMagic = 0x7472612d626c6b31; // "tra-blk1"
static_assert(sizeof(Header) <= kMinAlignment, "header must fit its room");

class BlockCache {
public:
  BlockCache() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    limit = pages > 0 && page > 0 ? size_t(pages) * size_t(page) / 4
                                  : size_t(1) << 30;
    pageSize = page > 0 ? size_t(page) : 4096;
  }

  void *allocate(size_t alignment, size_t size) {
    if (alignment < kMinAlignment || (alignment & (alignment - 1)))
      alignment = kMinAlignment;
    size_t bytes = size + alignment;
    void *raw = nullptr;
    bool mapped = false;
    if (bytes >= kMinCachedBytes && cacheable()) {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = blocks.find({bytes, alignment});
      if (it != blocks.end() && !it->second.empty()) {
        raw = it->second.back().raw;
        mapped = it->second.back().mapped;
        it->second.pop_back();
        cached -= bytes;
      }
    }
    if (!raw && bytes >= kMinCachedBytes && cacheable() &&
        alignment <= pageSize) {
      void *map = mmap(nullptr, mappedBytes(bytes), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (map != MAP_FAILED) {
        raw = map;
        mapped = true;
      }
    }
    if (!raw && posix_memalign(&raw, alignment, bytes) != 0)
      return nullptr;
    char *user = static_cast<char *>(raw) + alignment;
    Header *header = reinterpret_cast<Header *>(user) - 1;
    *header = Header{raw, bytes, alignment, mapped ? size_t(1) : 0, kMagic};
    return user;
  }

  void release(void *ptr) {
    if (!ptr)
      return;
    Header *header = static_cast<Header *>(ptr) - 1;
    if (header->magic != kMagic) {
      // Not one of ours: a bug in the generated code, never silently freed.
      std::abort();
    }
    Header h = *header;
    header->magic = 0;
    if (h.bytes >= kMinCachedBytes && cacheable()) {
      std::lock_guard<std::mutex> lock(mutex);
      if (cached + h.bytes <= limit) {
        blocks[{h.bytes, h.alignment}].push_back({h.raw, h.mapped != 0});
        cached += h.bytes;
        return;
      }
    }
    freeBlock({h.raw, h.mapped != 0}, h.bytes);
  }

  size_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return cached;
  }

  void trim() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : blocks)
      for (Block block : entry.second)
        freeBlock(block, entry.first.first);
    blocks.clear();
    cached = 0;
  }

private:
  /// A block kept for reuse: where it starts and how it was allocated.
  struct Block {
    void *raw;
    bool mapped;
  };

  size_t mappedBytes(size_t bytes) const {
    return (bytes + pageSize - 1) / pageSize * pageSize;
  }

  void freeBlock(Block block, size_t bytes) const {
    if (block.mapped)
      munmap(block.raw, mappedBytes(bytes));
    else
      std::free(block.raw);
  }

  static bool cacheable() {
#ifdef TRA_EXEC_NO_BLOCK_CACHE
    return false;
#else
    return true;
#endif
  }

  std::mutex mutex;
  std::map<std::pair<size_t, size_t>, std::vector<Block>> blocks;
  size_t cached = 0;
  size_t limit = 0;
  size_t pageSize = 4096;
};

/// Never destroyed: compiled code may free blocks during exit.
BlockCache &cache() {
  static BlockCache *instance = new BlockCache();
  return *instance;
}
} // namespace

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t size) {
  return cache().allocate(kMinAlignment, size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return cache().allocate(alignment, size);
}

void _mlir_memref_to_llvm_free(void *ptr) { cache().release(ptr); }

int64_t tra_exec_cached_bytes(void) {
  return static_cast<int64_t>(cache().cachedBytes());
}

void tra_exec_release_cached_memory(void) { cache().trim(); }
}
