//===- LlamaTest.cpp - llama2.c checkpoint headers ------------------------===//
//
// readLlama2c must refuse every header whose sizes do not match the file,
// including headers whose sizes overflow 64 bits (fuzz-llama2c found one
// whose products overflowed int64_t), and read back what writeLlama2c wrote.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Llama.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

std::string header(std::initializer_list<int32_t> fields) {
  std::string bytes(fields.size() * 4, '\0');
  size_t at = 0;
  for (int32_t f : fields) {
    std::memcpy(&bytes[at], &f, 4);
    at += 4;
  }
  return bytes;
}

void expectError(const TempDir &dir, const std::string &bytes,
                 const std::string &part) {
  std::string path = dir.file("model.bin");
  writeBytes(path, bytes);
  Result<LlamaCheckpoint> read = readLlama2c(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.message().rfind(path + ": ", 0), 0u) << read.message();
  EXPECT_NE(read.message().find(part), std::string::npos) << read.message();
}

TEST(LlamaTest, WritesAndReadsBack) {
  TempDir dir;
  LlamaCheckpoint ckpt;
  ckpt.params = {/*dim=*/8,
                 /*hiddenDim=*/12,
                 /*nLayers=*/2,
                 /*nHeads=*/2,
                 /*nKvHeads=*/1,
                 /*vocabSize=*/5,
                 /*maxSeqLen=*/4,
                 1e-5,
                 10000.0,
                 /*sharedClassifier=*/false};
  float next = 0;
  for (const auto &[name, shape] : llamaWeightShapes(ckpt.params)) {
    HostTensor t = HostTensor::zeros(DType::F32, shape);
    float *values = reinterpret_cast<float *>(t.mutableData());
    for (int64_t i = 0; i < t.numElements(); ++i)
      values[i] = next++;
    ckpt.weights.push_back({name, std::move(t)});
  }
  const std::string path = dir.file("model.bin");
  Status written = writeLlama2c(path, ckpt);
  ASSERT_TRUE(written.ok()) << written.message();
  Result<LlamaCheckpoint> read = readLlama2c(path);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(read->params.dim, 8);
  EXPECT_FALSE(read->params.sharedClassifier);
  ASSERT_EQ(read->weights.size(), ckpt.weights.size());
  for (const auto &[name, weight] : ckpt.weights) {
    const HostTensor *got = read->find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_TRUE(got->identical(weight)) << name;
  }
}

TEST(LlamaTest, RefusesBadHeaders) {
  TempDir dir;
  expectError(dir, "abc", "truncated llama2.c header: 3 bytes, need 28");
  expectError(dir, header({8, 12, 2, 3, 1, 5, 4}),
              "dim 8 is not a multiple of n_heads 3");
  expectError(dir, header({8, 12, 1, 2, 1, 5, 4}) + std::string(40, '\0'),
              "truncated: the header (dim 8, 1 layers, vocab 5) implies");
}

TEST(LlamaTest, SizesOverflowingSixtyFourBits) {
  TempDir dir;
  // n_layers * dim * dim overflows int64_t (the crash fuzz-llama2c found),
  // and sizes whose sum, not product, overflows.
  expectError(dir, header({1 << 30, 2, 1 << 30, 2, 1, 1, 2}),
              "implies more than 2^63 bytes");
  expectError(dir, header({0x7ffffffc, 0x7fffffff, 0x7fffffff, 2, 2, 1, 2}),
              "implies more than 2^63 bytes");
  expectError(dir, header({1 << 20, 1 << 20, 1 << 20, 2, 1, -(1 << 30), 2}),
              "implies more than 2^63 bytes");
}

} // namespace
