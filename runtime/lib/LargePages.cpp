//===- LargePages.cpp - Host buffers on transparent huge pages ------------===//

#include "tra/Runtime/LargePages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace tra::rt;

namespace {
constexpr uintptr_t kHugePage = uintptr_t(2) << 20;

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/// The system's page size.
size_t pageSize() {
  static const size_t size = [] {
    long value = ::sysconf(_SC_PAGESIZE);
    return value > 0 ? size_t(value) : size_t(4096);
  }();
  return size;
}

/// `bytes` rounded up to whole pages.
size_t mappedLength(size_t bytes) {
  size_t page = pageSize();
  return (bytes + page - 1) / page * page;
}
#endif
} // namespace

void *tra::rt::allocateLargePageBytes(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kLargePageBytes && bytes <= SIZE_MAX - 2 * kHugePage) {
    const size_t length = mappedLength(bytes);
    // Reserve a huge page more than needed, keep the aligned part.
    const size_t reserved = length + kHugePage;
    void *mapped = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      throw std::bad_alloc();
    auto start = reinterpret_cast<uintptr_t>(mapped);
    uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > start)
      ::munmap(mapped, aligned - start);
    uintptr_t end = aligned + length, reservedEnd = start + reserved;
    if (reservedEnd > end)
      ::munmap(reinterpret_cast<void *>(end), reservedEnd - end);
    // Advice only: without it (THP off) the buffer still works.
    ::madvise(reinterpret_cast<void *>(aligned), length, MADV_HUGEPAGE);
    return reinterpret_cast<void *>(aligned);
  }
#endif
  return ::operator new(bytes == 0 ? 1 : bytes);
}

void tra::rt::freeLargePageBytes(void *data, size_t bytes) noexcept {
  if (!data)
    return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kLargePageBytes && bytes <= SIZE_MAX - 2 * kHugePage) {
    ::munmap(data, mappedLength(bytes));
    return;
  }
#endif
  ::operator delete(data);
}
