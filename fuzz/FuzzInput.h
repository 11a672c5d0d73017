//===- FuzzInput.h - Helpers shared by the fuzz targets ---------*- C++ -*-===//
//
// Most of the runtime's readers take a path and memory-map the file, so a
// fuzz target writes its input to a temporary file first (`TempInput`),
// which is removed again when the input has been read. `checksum` touches
// every byte of a tensor a reader returned, so a view that points past the
// end of its mapped file is noticed by AddressSanitizer (or faults) at once.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_FUZZ_FUZZINPUT_H
#define TRA_FUZZ_FUZZINPUT_H

#include "tra/Runtime/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace tra::fuzz {

/// The fuzz input written to a new file in /tmp ("/tmp/tra-fuzz-XXXXXX" plus
/// `suffix`), unlinked on destruction.
class TempInput {
public:
  TempInput(const uint8_t *data, size_t size, const char *suffix = "") {
    std::string name = std::string("/tmp/tra-fuzz-XXXXXX") + suffix;
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    int fd = mkstemps(buffer.data(), static_cast<int>(std::strlen(suffix)));
    if (fd < 0) {
      std::perror("tra fuzz: mkstemps");
      std::abort();
    }
    filePath = buffer.data();
    for (size_t done = 0; done < size;) {
      ssize_t n = write(fd, data + done, size - done);
      if (n <= 0) {
        std::perror("tra fuzz: write");
        std::abort();
      }
      done += size_t(n);
    }
    close(fd);
  }
  ~TempInput() { unlink(filePath.c_str()); }
  TempInput(const TempInput &) = delete;
  TempInput &operator=(const TempInput &) = delete;

  const std::string &path() const { return filePath; }

private:
  std::string filePath;
};

/// Returns a sum of every byte of `tensor`, so that all of them are read.
inline uint64_t checksum(const rt::HostTensor &tensor) {
  uint64_t sum = 0;
  const uint8_t *bytes = tensor.data();
  for (size_t i = 0; i < tensor.byteSize(); ++i)
    sum += bytes[i];
  return sum;
}

/// Returns the tile offsets and sizes of the "upper half" of `shape`: from
/// index dim / 2 to the end of every dimension (a strided read for
/// matrices).
inline std::pair<std::vector<int64_t>, std::vector<int64_t>>
upperHalf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> offsets, sizes;
  for (int64_t dim : shape) {
    offsets.push_back(dim / 2);
    sizes.push_back(dim - dim / 2);
  }
  return {offsets, sizes};
}

/// Keeps `value` from being optimised away.
template <class T> inline void keep(const T &value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

} // namespace tra::fuzz

#endif // TRA_FUZZ_FUZZINPUT_H
