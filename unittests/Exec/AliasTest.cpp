//===- AliasTest.cpp - Outputs given their input's buffer -----------------===//
//
// A program compiled by tra-compile (Inputs/kv_step.mlir: two KV caches
// updated at a position, and scores against the updated key cache) says in
// its descriptor that each updated cache may be given its input cache's
// buffer. Decoding steps run with one buffer per cache must give the same
// results as steps run with separate input and output buffers, and both
// must match a float64 reference. The descriptor checks of the loader
// reject output aliases that do not fit the program.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/Library.h"

#include "TestValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace {

using tra::exec::ProgramLibrary;

constexpr int64_t kRows = 16, kDim = 4, kNew = 2;

using tra::exec::testing::values;

std::unique_ptr<ProgramLibrary> openStep() {
  tra::rt::Result<std::unique_ptr<ProgramLibrary>> library =
      ProgramLibrary::open(TRA_KV_STEP_LIBRARY);
  EXPECT_TRUE(library.ok()) << library.message();
  return library.ok() ? std::move(*library) : nullptr;
}

/// The inputs of one decoding step.
struct StepInputs {
  std::vector<float> q, k, v;
  int64_t pos;
};

StepInputs stepInputs(int64_t step) {
  return {values(kDim, 3 * step + 1), values(kNew * kDim, 3 * step + 2),
          values(kNew * kDim, 3 * step + 3), kNew * step};
}

/// Input order of kv_step.mlir: q, k, v, k_cache, v_cache, pos; then the
/// outputs scores, k_cache_out, v_cache_out.
void runStep(const ProgramLibrary &library, StepInputs &in, const float *kCache,
             const float *vCache, float *scores, float *kOut, float *vOut) {
  void *buffers[] = {in.q.data(),
                     in.k.data(),
                     in.v.data(),
                     const_cast<float *>(kCache),
                     const_cast<float *>(vCache),
                     &in.pos,
                     scores,
                     kOut,
                     vOut};
  ASSERT_TRUE(library.run(buffers).ok());
}

TEST(OutputAliases, DescriptorNamesTheCaches) {
  std::unique_ptr<ProgramLibrary> library = openStep();
  ASSERT_TRUE(library);
  const TraExecProgram &p = library->program();
  ASSERT_EQ(p.numInputs, 6);
  ASSERT_EQ(p.numOutputs, 3);
  ASSERT_NE(p.outputAliases, nullptr);
  EXPECT_EQ(library->outputAliasedInput(0), -1);
  EXPECT_EQ(library->outputAliasedInput(1), 3);
  EXPECT_EQ(library->outputAliasedInput(2), 4);
  EXPECT_EQ(library->outputAliasedInput(3), -1);
  EXPECT_STREQ(p.inputs[3].name, "k_cache");
  EXPECT_STREQ(p.inputs[4].name, "v_cache");
}

// The program was compiled for hw/cpu-1node.json: its descriptor carries
// that CPU's parallel costs (1.5 us per region; 40 GB/s and 268.8 Gflop/s
// over 2 cores) for the runtime (tra/Exec/ParallelCosts.h).
TEST(OutputAliases, DescriptorCarriesTheParallelCosts) {
  std::unique_ptr<ProgramLibrary> library = openStep();
  ASSERT_TRUE(library);
  const TraExecProgram &p = library->program();
  EXPECT_EQ(p.numThreads, 2);
  EXPECT_DOUBLE_EQ(p.threadSyncSeconds, 1.5e-6);
  EXPECT_DOUBLE_EQ(p.coreBytesPerSecond, 20e9);
  EXPECT_DOUBLE_EQ(p.coreMacsPerSecond, 67.2e9);
}

TEST(OutputAliases, SharedBuffersGiveTheResultsOfSeparateOnes) {
  std::unique_ptr<ProgramLibrary> library = openStep();
  ASSERT_TRUE(library);
  library->setNumThreads(1);
  const size_t cacheSize = kRows * kDim;
  // Separate buffers, swapped after each step; and one buffer per cache.
  std::vector<float> kIn = values(cacheSize, 11), vIn = values(cacheSize, 12);
  std::vector<float> kOut(cacheSize, NAN), vOut(cacheSize, NAN);
  std::vector<float> kShared = kIn, vShared = vIn;
  // The reference, in float64.
  std::vector<double> kRef(kIn.begin(), kIn.end()),
      vRef(vIn.begin(), vIn.end());
  for (int64_t step = 0; step < kRows / kNew; ++step) {
    StepInputs in = stepInputs(step);
    std::vector<float> scores(kRows, NAN), sharedScores(kRows, NAN);
    std::vector<float> kBefore = kIn, vBefore = vIn;
    runStep(*library, in, kIn.data(), vIn.data(), scores.data(), kOut.data(),
            vOut.data());
    EXPECT_EQ(kIn, kBefore) << "the input cache was written";
    EXPECT_EQ(vIn, vBefore) << "the input cache was written";
    runStep(*library, in, kShared.data(), vShared.data(), sharedScores.data(),
            kShared.data(), vShared.data());
    EXPECT_EQ(sharedScores, scores) << "step " << step;
    EXPECT_EQ(kShared, kOut) << "step " << step;
    EXPECT_EQ(vShared, vOut) << "step " << step;

    for (int64_t r = 0; r < kNew; ++r)
      for (int64_t d = 0; d < kDim; ++d) {
        kRef[(in.pos + r) * kDim + d] = in.k[r * kDim + d];
        vRef[(in.pos + r) * kDim + d] = in.v[r * kDim + d];
      }
    for (size_t i = 0; i < cacheSize; ++i) {
      EXPECT_EQ(kOut[i], float(kRef[i])) << "step " << step << " k " << i;
      EXPECT_EQ(vOut[i], float(vRef[i])) << "step " << step << " v " << i;
    }
    for (int64_t t = 0; t < kRows; ++t) {
      double want = 0;
      for (int64_t d = 0; d < kDim; ++d)
        want += kRef[t * kDim + d] * double(in.q[d]);
      EXPECT_NEAR(scores[t], want, 1e-5) << "step " << step << " row " << t;
    }
    std::swap(kIn, kOut);
    std::swap(vIn, vOut);
  }
}

/// A one-device program of two f32[4] inputs and two outputs (f32[4] and
/// f32[2]) that checkDescriptor accepts.
struct FakeProgram {
  const int64_t four[1] = {4}, two[1] = {2};
  TraExecTensorInfo inputs[2] = {{"a", TRA_EXEC_F32, 1, four},
                                 {"b", TRA_EXEC_F32, 1, four}};
  TraExecTensorInfo outputs[2] = {{"x", TRA_EXEC_F32, 1, four},
                                  {"y", TRA_EXEC_F32, 1, two}};
  int64_t aliases[2] = {-1, -1};
  TraExecProgram p{};

  FakeProgram() {
    p.abiVersion = TRA_EXEC_ABI_VERSION;
    p.entryName = "main";
    p.numInputs = 2;
    p.inputs = inputs;
    p.numOutputs = 2;
    p.outputs = outputs;
    p.run = [](void *const *) {};
    p.outputAliases = aliases;
  }
};

TEST(OutputAliases, CheckDescriptor) {
  FakeProgram fake;
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
  fake.aliases[0] = 1;
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
  fake.p.outputAliases = nullptr;
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
  fake.p.outputAliases = fake.aliases;

  // Not an input.
  fake.aliases[0] = 2;
  tra::rt::Status status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("output 'x' may share the buffer of input 2"),
            std::string::npos)
      << status.message();
  fake.aliases[0] = -2;
  EXPECT_FALSE(tra::exec::checkDescriptor(fake.p).ok());

  // Another shape.
  fake.aliases[0] = -1;
  fake.aliases[1] = 0;
  status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("of another element type or shape"),
            std::string::npos)
      << status.message();

  // Another element type.
  fake.outputs[1] = {"y", TRA_EXEC_I32, 1, fake.four};
  EXPECT_FALSE(tra::exec::checkDescriptor(fake.p).ok());

  // One input named twice.
  fake.outputs[1] = {"y", TRA_EXEC_F32, 1, fake.four};
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
  fake.aliases[0] = 0;
  EXPECT_FALSE(tra::exec::checkDescriptor(fake.p).ok());

  // A distributed program claims none.
  fake.aliases[0] = -1;
  TraExecRankProgram rank{};
  rank.run = [](void *const *) {};
  fake.p.numRanks = 1;
  fake.p.ranks = &rank;
  fake.p.run = nullptr;
  status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("distributed program with output aliases"),
            std::string::npos)
      << status.message();
  fake.p.outputAliases = nullptr;
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
}

// Inputs may live in a memory tier (host memory or disk); outputs are in
// device memory, and unknown tiers are refused.
TEST(OutputAliases, MemoryTiers) {
  FakeProgram fake;
  fake.inputs[0].tier = TRA_EXEC_TIER_HOST;
  fake.inputs[1].tier = TRA_EXEC_TIER_DISK;
  EXPECT_TRUE(tra::exec::checkDescriptor(fake.p).ok());
  fake.inputs[1].tier = 3;
  tra::rt::Status status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("tensor 'b' has an unknown memory tier 3"),
            std::string::npos)
      << status.message();
  fake.inputs[1].tier = TRA_EXEC_TIER_DEVICE;
  fake.outputs[0].tier = TRA_EXEC_TIER_HOST;
  status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("tensor 'x' has an unknown memory tier 1"),
            std::string::npos)
      << status.message();
}

TEST(OutputAliases, StaleDescriptorIsRefused) {
  FakeProgram fake;
  fake.p.abiVersion = TRA_EXEC_ABI_VERSION - 1;
  tra::rt::Status status = tra::exec::checkDescriptor(fake.p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("descriptor ABI version " +
                                  std::to_string(TRA_EXEC_ABI_VERSION - 1)),
            std::string::npos)
      << status.message();
}

} // namespace
