//===- CheckpointTest.cpp - Weights loaded onto huge pages ----------------===//
//
// engine::loadCheckpoint moves the weights of a model into one buffer on
// huge pages (rt::LargePageAllocator): each weight is a view of its part, 64
// bytes aligned, in order, with the bytes the reader gave (llama2.c's .bin
// read directly as the reference); a checkpoint smaller than a huge page
// keeps the reader's tensors.
//
//===----------------------------------------------------------------------===//

#include "tra/Engine/Checkpoint.h"
#include "tra/Runtime/LargePages.h"
#include "tra/Runtime/Llama.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

using namespace tra;

namespace {

/// A llama2.c checkpoint of `vocab` tokens with weights that differ in every
/// element, written to a temporary file.
std::string writeModel(int64_t vocab, const std::string &name) {
  rt::LlamaParams params;
  params.dim = 64;
  params.hiddenDim = 96;
  params.nLayers = 2;
  params.nHeads = 4;
  params.nKvHeads = 4;
  params.vocabSize = vocab;
  params.maxSeqLen = 16;
  rt::LlamaCheckpoint ckpt;
  ckpt.params = params;
  int64_t seed = 1;
  for (auto &[weightName, shape] : rt::llamaWeightShapes(params)) {
    rt::HostTensor t = rt::HostTensor::zeros(rt::DType::F32, shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.store<float>(i, float((i * 7919 + seed * 104729) % 2003) / 2003.0f);
    ckpt.weights.emplace_back(weightName, std::move(t));
    ++seed;
  }
  std::string path = (std::filesystem::temp_directory_path() /
                      (name + "-" + std::to_string(::getpid()) + ".bin"))
                         .string();
  rt::Status written = rt::writeLlama2c(path, ckpt);
  EXPECT_TRUE(written.ok()) << written.message();
  return path;
}

TEST(CheckpointTest, WeightsShareOneBufferOnHugePages) {
  // The embedding and classifier alone: 2 x 8192 x 64 x 4 bytes = 4 MiB.
  std::string path = writeModel(8192, "tra-large");
  rt::Result<rt::LlamaCheckpoint> direct = rt::readLlama2c(path);
  ASSERT_TRUE(direct.ok()) << direct.message();
  rt::Result<rt::LlamaCheckpoint> loaded = engine::loadCheckpoint(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  ASSERT_EQ(loaded->weights.size(), direct->weights.size());
  const uint8_t *base = loaded->weights.front().second.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % (uintptr_t(2) << 20), 0u);
  const uint8_t *next = base;
  for (size_t i = 0; i < loaded->weights.size(); ++i) {
    const auto &[name, weight] = loaded->weights[i];
    const auto &[refName, ref] = direct->weights[i];
    ASSERT_EQ(name, refName);
    EXPECT_TRUE(weight.isView()) << name;
    EXPECT_EQ(weight.dtype(), ref.dtype()) << name;
    EXPECT_EQ(weight.shape(), ref.shape()) << name;
    EXPECT_TRUE(weight.identical(ref)) << name;
    // In order, each at the next 64-byte boundary.
    EXPECT_EQ(weight.data(), next) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(weight.data()) % 64, 0u) << name;
    next += (weight.byteSize() + 63) / 64 * 64;
  }
  std::filesystem::remove(path);
}

TEST(CheckpointTest, SmallModelsKeepTheReadersTensors) {
  std::string path = writeModel(32, "tra-small");
  rt::Result<rt::LlamaCheckpoint> direct = rt::readLlama2c(path);
  ASSERT_TRUE(direct.ok()) << direct.message();
  rt::Result<rt::LlamaCheckpoint> loaded = engine::loadCheckpoint(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  ASSERT_EQ(loaded->weights.size(), direct->weights.size());
  for (size_t i = 0; i < loaded->weights.size(); ++i)
    EXPECT_TRUE(loaded->weights[i].second.identical(direct->weights[i].second))
        << loaded->weights[i].first;
  std::filesystem::remove(path);
}

TEST(CheckpointTest, LargePageAllocations) {
  for (size_t bytes :
       {size_t(1), size_t(100000), rt::kLargePageBytes - 1, rt::kLargePageBytes,
        rt::kLargePageBytes + 4097, size_t(7) << 20}) {
    auto *p = static_cast<uint8_t *>(rt::allocateLargePageBytes(bytes));
    ASSERT_NE(p, nullptr);
    if (bytes >= rt::kLargePageBytes)
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % rt::kLargePageBytes, 0u);
    std::memset(p, 0xab, bytes);
    EXPECT_EQ(p[bytes - 1], 0xab);
    rt::freeLargePageBytes(p, bytes);
  }
  rt::freeLargePageBytes(nullptr, 0);
  rt::HostTensor big = rt::HostTensor::zeros(rt::DType::F32, {1024, 1024});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % rt::kLargePageBytes, 0u);
  EXPECT_EQ(big.load<float>(1024 * 1024 - 1), 0.0f);
  rt::HostTensor copy = big;
  EXPECT_TRUE(copy.identical(big));
  EXPECT_NE(copy.data(), big.data());
}

} // namespace
