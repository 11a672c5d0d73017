//===- NpyFuzzer.cpp - Fuzzes the .npy reader -----------------------------===//
//
// parseNpy on the bytes, then readNpy (copy and memory-mapped) on the same
// bytes as a file: every element of an accepted array is read, and
// re-encoding it must give a file that reads back identical.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Npy.h"

#include <cstdio>
#include <cstdlib>

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<NpyHeader> header = parseNpy(data, size, "fuzz.npy");
  tra::fuzz::TempInput input(data, size, ".npy");
  for (bool memoryMap : {false, true}) {
    NpyReadOptions options;
    options.memoryMap = memoryMap;
    Result<HostTensor> tensor = readNpy(input.path(), options);
    if (tensor.ok() != header.ok()) {
      std::fprintf(stderr, "NpyFuzzer: parseNpy and readNpy disagree: %s%s\n",
                   header.message().c_str(), tensor.message().c_str());
      std::abort();
    }
    if (!tensor)
      continue;
    tra::fuzz::keep(tra::fuzz::checksum(*tensor));
    std::string encoded = encodeNpy(*tensor);
    Result<NpyHeader> reparsed =
        parseNpy(reinterpret_cast<const uint8_t *>(encoded.data()),
                 encoded.size(), "encoded.npy");
    if (!reparsed) {
      std::fprintf(stderr,
                   "NpyFuzzer: encodeNpy wrote a file parseNpy "
                   "refuses: %s\n",
                   reparsed.message().c_str());
      std::abort();
    }
    if (reparsed->shape != tensor->shape()) {
      std::fprintf(stderr, "NpyFuzzer: shape changed by encodeNpy\n");
      std::abort();
    }
  }
  return 0;
}
