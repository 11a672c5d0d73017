//===- LocalModelGpuTest.cpp - The engine's GPU path on a fake driver -----===//
//
// LocalModel with runtime/cuda's accelerator, on the fake CUDA driver of
// unittests/Cuda (device memory is host memory) and fake step programs
// marked as GPU programs: the same logits as the host path, the weights and
// caches in device memory, and the errors of mixing host and GPU programs.
// Each suite runs in its own process with the environment CMakeLists.txt
// gives it.
//
//===----------------------------------------------------------------------===//

#include "tra/Cuda/Accelerator.h"
#include "tra/Cuda/Cuda.h"
#include "tra/Engine/LocalModel.h"

#include "TinyModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace tra;
using namespace tra::engine;
using namespace tra::engine::testing;

TEST(LocalModelGpu, StepsOnDeviceBuffers) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1, &cuda::getAccelerator());
  rt::Status added = model.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ3));
  ASSERT_TRUE(added.ok()) << added.message();
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ1)).ok());
  // Weights, tables, both cache sets and the step buffers are on the device.
  EXPECT_GT(cuda::getPoolStatistics().inUse, 0u);

  std::vector<int64_t> tokens = {1, 2, 3, 4, 0};
  std::vector<double> logits;
  rt::Status step = model.step(tokens, 0, 3, logits);
  ASSERT_TRUE(step.ok()) << step.message();
  ASSERT_EQ(logits.size(), 15u);
  double sums[] = {1, 3, 6};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_NEAR(logits[i * 5 + j], expectedLogit(j, sums[i], i), 1e-4);
  // The program read a device copy of the weight, not the checkpoint.
  const void *read = lastEmbedding(TRA_FAKE_GPU_STEP_SEQ3);
  ASSERT_NE(read, nullptr);
  EXPECT_NE(read, static_cast<const void *>(ckpt.weights[0].second.data()));

  // Decoding sees the prompt's cache entries, kept on the device.
  ASSERT_TRUE(model.step(tokens, 3, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 10, 3), 1e-4);
  // The two programs share the device copy of the weight.
  EXPECT_EQ(lastEmbedding(TRA_FAKE_GPU_STEP_SEQ1), read);

  model.resetCaches();
  ASSERT_TRUE(model.step(tokens, 3, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 4, 3), 1e-4);
}

TEST(LocalModelGpu, OnlyTheLastRowComesBackForTheSampler) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1, &cuda::getAccelerator());
  model.allRows = false;
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ3)).ok());
  std::vector<int64_t> tokens = {1, 2, 3};
  std::vector<double> logits;
  rt::Status step = model.step(tokens, 0, 3, logits);
  ASSERT_TRUE(step.ok()) << step.message();
  ASSERT_EQ(logits.size(), 5u);
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 6, 2), 1e-4);
}

TEST(LocalModelGpu, AOneRowProgramReadsItsRowFromTheDevice) {
  // The row (`logits_row`) goes to the device with the tokens: 2 tokens in
  // a padded 3-token chunk give the second token's logits.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1, &cuda::getAccelerator());
  model.allRows = false;
  rt::Status added = model.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ3_ONE_ROW));
  ASSERT_TRUE(added.ok()) << added.message();
  std::vector<int64_t> tokens = {1, 2, 3};
  std::vector<double> logits;
  for (int64_t n : {3, 2}) {
    model.resetCaches();
    rt::Status step = model.step(tokens, 0, n, logits);
    ASSERT_TRUE(step.ok()) << step.message();
    ASSERT_EQ(logits.size(), 5u);
    double sum = n == 3 ? 6 : 3;
    for (int j = 0; j < 5; ++j)
      EXPECT_NEAR(logits[j], expectedLogit(j, sum, n - 1), 1e-4) << n;
  }
}

TEST(LocalModelGpu, SixteenBitWeightsStaySixteenBitOnTheDevice) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint(rt::DType::BF16);
  const rt::HostTensor &embedding = ckpt.weights[0].second;
  LocalModel model(ckpt, 1, &cuda::getAccelerator());
  rt::Status added = model.addProgram(openStep(TRA_FAKE_GPU_STEP_BF16));
  ASSERT_TRUE(added.ok()) << added.message();
  std::vector<int64_t> tokens = {2};
  std::vector<double> logits;
  rt::Status step = model.step(tokens, 0, 1, logits);
  ASSERT_TRUE(step.ok()) << step.message();
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 2, 0), 1e-4);
  // The program read a device copy holding the checkpoint's bf16 bytes (the
  // fake's device memory is host memory): 2 bytes per element, no f32.
  const void *read = lastEmbedding(TRA_FAKE_GPU_STEP_BF16);
  ASSERT_NE(read, nullptr);
  EXPECT_NE(read, static_cast<const void *>(embedding.data()));
  ASSERT_EQ(embedding.byteSize(), 5u * 4u * 2u);
  EXPECT_EQ(std::memcmp(read, embedding.data(), embedding.byteSize()), 0);
}

TEST(LocalModelGpu, HostAndGpuProgramsDoNotMix) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel gpu(ckpt, 1, &cuda::getAccelerator());
  rt::Status status = gpu.addProgram(openStep(TRA_FAKE_STEP_SEQ1));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("a program compiled for the host, but this "
                                  "model keeps its buffers on the GPU"),
            std::string::npos)
      << status.message();
  LocalModel host(ckpt, 1);
  status = host.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ1));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("a program compiled for an NVIDIA GPU"),
            std::string::npos)
      << status.message();
}

TEST(LocalModelGpuNoDevice, AddingAProgramNamesWhatIsMissing) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1, &cuda::getAccelerator());
  rt::Status status = model.addProgram(openStep(TRA_FAKE_GPU_STEP_SEQ1));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot load the CUDA driver"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find(TRA_FAKE_GPU_STEP_SEQ1), std::string::npos);
}
