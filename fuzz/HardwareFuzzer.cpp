//===- HardwareFuzzer.cpp - Fuzzes the hardware description parser --------===//
//
// parseHardwareJSON on the input (docs/HardwareDescription.md). A
// description it accepts is queried as the cost model queries it (devices,
// nodes, links between devices, totals, the summary), and its JSON form
// (toJSONText) must parse again to an equal description.
//
//===----------------------------------------------------------------------===//

#include "tra/Hardware/Hardware.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace tra::hw;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<HardwareDescription> hw = parseHardwareJSON(text, "fuzz.json");
  if (!hw) {
    llvm::consumeError(hw.takeError());
    return 0;
  }
  // Links between the first devices (a description may have many).
  unsigned devices = std::min(hw->numDevices(), 16u);
  for (unsigned a = 0; a < devices; ++a)
    for (unsigned b = 0; b < devices; ++b)
      (void)hw->link(a, b).transferTime(1 << 20);
  for (unsigned n = 0; n < std::min(hw->numNodes(), 16u); ++n)
    (void)hw->getDevicesOfNode(n);
  (void)hw->totalMemoryBytes();
  (void)hw->isHomogeneous();
  (void)hw->summary();

  std::string json = hw->toJSONText();
  llvm::Expected<HardwareDescription> again =
      parseHardwareJSON(json, "serialized.json");
  if (!again) {
    std::fprintf(stderr,
                 "HardwareFuzzer: toJSONText does not parse again: %s\n",
                 llvm::toString(again.takeError()).c_str());
    std::abort();
  }
  if (*again != *hw) {
    std::fprintf(stderr,
                 "HardwareFuzzer: the description changed through "
                 "toJSONText:\n%s\n",
                 json.c_str());
    std::abort();
  }
  return 0;
}
