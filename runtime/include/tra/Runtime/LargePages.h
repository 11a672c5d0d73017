//===- LargePages.h - Host buffers on transparent huge pages ---*- C++ -*-===//
//
// A standard allocator for the bytes of large host tensors (model weights,
// KV caches): buffers of at least kLargePageBytes are anonymous mappings
// aligned to 2 MiB and advised for transparent huge pages
// (madvise(MADV_HUGEPAGE)), so that the kernel backs them with 2 MiB pages
// where it can. A decoding step streams every weight once: with 4 KiB
// pages each 4 KiB costs a TLB miss, and on the development VM a two-thread
// matrix-vector product read 220 MB of f16 weights at 33 GB/s from 4 KiB
// pages and at 38 GB/s from huge pages. The mapping ends at the buffer's
// last 4 KiB page (the tail is never a whole huge page), so resident
// memory grows by at most a page per buffer. Smaller buffers, and systems
// without these calls, use operator new.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_LARGEPAGES_H
#define TRA_RUNTIME_LARGEPAGES_H

#include <cstddef>
#include <new>

namespace tra {
namespace rt {

/// Buffers of at least this many bytes go on their own huge-page mapping.
constexpr size_t kLargePageBytes = size_t(2) << 20;

/// `bytes` bytes, 64-byte aligned at least; throws std::bad_alloc.
void *allocateLargePageBytes(size_t bytes);
/// Frees what allocateLargePageBytes(bytes) returned.
void freeLargePageBytes(void *data, size_t bytes) noexcept;

template <class T> struct LargePageAllocator {
  using value_type = T;

  LargePageAllocator() = default;
  template <class U> LargePageAllocator(const LargePageAllocator<U> &) {}

  T *allocate(size_t count) {
    if (count > size_t(-1) / sizeof(T))
      throw std::bad_alloc();
    return static_cast<T *>(allocateLargePageBytes(count * sizeof(T)));
  }
  void deallocate(T *data, size_t count) noexcept {
    freeLargePageBytes(data, count * sizeof(T));
  }
  template <class U> bool operator==(const LargePageAllocator<U> &) const {
    return true;
  }
  template <class U> bool operator!=(const LargePageAllocator<U> &) const {
    return false;
  }
};

} // namespace rt
} // namespace tra

#endif // TRA_RUNTIME_LARGEPAGES_H
