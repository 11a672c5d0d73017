//===- TinyModel.h - The model of FakeStepProgram.cpp, for the tests --*- C++
//-*-===//
//
// The tiny LLaMA FakeStepProgram.cpp's step libraries are written for (dim 4,
// 2 heads, 1 KV head, 1 layer, vocab 5, 8 positions), the logits they
// compute, and loading them.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_UNITTESTS_ENGINE_TINYMODEL_H
#define TRA_UNITTESTS_ENGINE_TINYMODEL_H

#include "tra/Exec/Library.h"
#include "tra/Runtime/Llama.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <memory>
#include <vector>

namespace tra::engine::testing {

/// The checkpoint: tok_embeddings.weight[j][0] = 0.5 * j, the rest 0.
inline rt::LlamaCheckpoint tinyCheckpoint(rt::DType dtype = rt::DType::F32) {
  rt::LlamaCheckpoint ckpt;
  rt::LlamaParams &p = ckpt.params;
  p.dim = 4;
  p.hiddenDim = 8;
  p.nLayers = 1;
  p.nHeads = 2;
  p.nKvHeads = 1;
  p.vocabSize = 5;
  p.maxSeqLen = 8;
  std::vector<double> embedding(5 * 4, 0.0);
  for (int j = 0; j < 5; ++j)
    embedding[j * 4] = 0.5 * j;
  ckpt.weights.emplace_back(
      "tok_embeddings.weight",
      rt::HostTensor::fromDoubles(dtype, {5, 4}, embedding));
  return ckpt;
}

/// A step library (the test fails if it does not load).
inline std::unique_ptr<exec::ProgramLibrary> openStep(const char *path) {
  rt::Result<std::unique_ptr<exec::ProgramLibrary>> library =
      exec::ProgramLibrary::open(path);
  EXPECT_TRUE(library.ok()) << library.message();
  return library.ok() ? std::move(*library) : nullptr;
}

/// The embedding buffer the last run of the (loaded) step library at `path`
/// read (FakeStepProgram.cpp's `fakeLastEmbedding`), or null.
inline const void *lastEmbedding(const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    return nullptr;
  auto **pointer =
      static_cast<const void **>(dlsym(handle, "fakeLastEmbedding"));
  return pointer ? *pointer : nullptr;
}

/// The logit FakeStepProgram.cpp computes for word `j` at `position` when
/// the tokens so far add up to `sum`.
inline double expectedLogit(int j, double sum, int position) {
  return 0.5 * j + sum + 100.0 * std::cos(double(position));
}

} // namespace tra::engine::testing

#endif // TRA_UNITTESTS_ENGINE_TINYMODEL_H
