//===- GeneratedKernels.cpp - Whether the program's kernels run -----------===//
//
// tra_exec_use_generated_kernels (ABI.h): the switch PackedGemm.cpp and
// Gemv.cpp read before choosing between the program's compiled kernels and
// their own (GeneratedKernels.h).
//
//===----------------------------------------------------------------------===//

#include "GeneratedKernels.h"

#include <atomic>

namespace {
std::atomic<bool> gUseGenerated{true};
} // namespace

bool tra::exec::generatedKernelsEnabled() {
  return gUseGenerated.load(std::memory_order_relaxed);
}

extern "C" void tra_exec_use_generated_kernels(int64_t use) {
  gUseGenerated.store(use != 0, std::memory_order_relaxed);
}
