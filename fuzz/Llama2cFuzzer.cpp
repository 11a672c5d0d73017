//===- Llama2cFuzzer.cpp - Fuzzes the llama2.c checkpoint reader ----------===//
//
// readLlama2c on the input as a file: the 7 x int32 header and the size the
// header implies. Every weight of a checkpoint it accepts is read, and its
// shapes are checked against llamaWeightShapes.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Llama.h"

#include <cstdio>
#include <cstdlib>

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tra::fuzz::TempInput input(data, size, ".bin");
  Result<LlamaCheckpoint> checkpoint = readLlama2c(input.path());
  if (!checkpoint)
    return 0;
  auto shapes = llamaWeightShapes(checkpoint->params);
  for (const auto &[name, shape] : shapes) {
    const HostTensor *weight = checkpoint->find(name);
    if (!weight || weight->shape() != shape) {
      std::fprintf(stderr, "Llama2cFuzzer: weight %s missing or misshapen\n",
                   name.c_str());
      std::abort();
    }
  }
  for (const auto &[name, weight] : checkpoint->weights)
    tra::fuzz::keep(tra::fuzz::checksum(weight));
  return 0;
}
