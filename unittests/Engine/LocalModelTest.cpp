//===- LocalModelTest.cpp - The in-process engine on fake step programs ---===//

#include "tra/Engine/LocalModel.h"

#include "TinyModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using namespace tra;
using namespace tra::engine;
using namespace tra::engine::testing;

namespace {

TEST(LocalModel, PrefillThenDecodeCarriesTheCaches) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 2);
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  EXPECT_TRUE(model.hasProgram(1));
  EXPECT_TRUE(model.hasProgram(3));
  EXPECT_FALSE(model.hasProgram(2));

  std::vector<int64_t> tokens = {1, 2, 3, 4, 0};
  std::vector<double> logits;
  ASSERT_TRUE(model.step(tokens, 0, 3, logits).ok());
  ASSERT_EQ(logits.size(), 15u);
  double sums[] = {1, 3, 6};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_NEAR(logits[i * 5 + j], expectedLogit(j, sums[i], i), 1e-4)
          << "row " << i << " word " << j;
  // Decoding sees the prompt's cache entries (the sets were swapped).
  ASSERT_TRUE(model.step(tokens, 3, 1, logits).ok());
  ASSERT_EQ(logits.size(), 5u);
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 10, 3), 1e-4);
  ASSERT_TRUE(model.step(tokens, 4, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 10, 4), 1e-4);

  // A new generation starts from empty caches.
  model.resetCaches();
  ASSERT_TRUE(model.step(tokens, 3, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 4, 3), 1e-4);
}

TEST(LocalModel, LastRowOnly) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1);
  model.allRows = false;
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  std::vector<double> logits;
  ASSERT_TRUE(model.step({1, 2, 3}, 0, 3, logits).ok());
  ASSERT_EQ(logits.size(), 5u);
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 6, 2), 1e-4);
}

TEST(LocalModel, AStepOfAnyLengthRunsInChunks) {
  // Programs of 1 and 3 tokens: 7 tokens run as 3 + 3 + 1, 2 tokens as one
  // padded 3-token step, and near the cache's end (2 tokens at 6: 6 + 3 >
  // 8) token by token; every row equals one-token-at-a-time decoding.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  std::vector<int64_t> tokens = {1, 2, 3, 4, 2, 1, 3, 2};
  LocalModel single(ckpt, 1);
  ASSERT_TRUE(single.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  std::vector<double> reference, row;
  for (int64_t pos = 0; pos < 8; ++pos) {
    ASSERT_TRUE(single.step(tokens, pos, 1, row).ok());
    reference.insert(reference.end(), row.begin(), row.end());
  }
  LocalModel chunked(ckpt, 1);
  ASSERT_TRUE(chunked.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  ASSERT_TRUE(chunked.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  EXPECT_EQ(chunked.programLengths(), (std::vector<int64_t>{1, 3}));
  for (std::vector<int64_t> split :
       {std::vector<int64_t>{7, 1}, std::vector<int64_t>{2, 4, 2},
        std::vector<int64_t>{8}}) {
    chunked.resetCaches();
    std::vector<double> logits, all;
    int64_t pos = 0;
    for (int64_t n : split) {
      ASSERT_TRUE(chunked.step(tokens, pos, n, logits).ok()) << pos;
      ASSERT_EQ(logits.size(), size_t(5 * n)) << pos;
      all.insert(all.end(), logits.begin(), logits.end());
      pos += n;
    }
    ASSERT_EQ(all.size(), reference.size());
    for (size_t i = 0; i < all.size(); ++i)
      EXPECT_NEAR(all[i], reference[i], 1e-4)
          << "row " << i / 5 << " word " << i % 5;
  }
  // The last row only: that of the last real token, not of a padded row.
  chunked.resetCaches();
  chunked.allRows = false;
  std::vector<double> last;
  ASSERT_TRUE(chunked.step(tokens, 0, 5, last).ok());
  ASSERT_EQ(last.size(), 5u);
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(last[size_t(j)], reference[size_t(4 * 5 + j)], 1e-4);
}

TEST(LocalModel, AOneRowProgramGivesTheLastRealRow) {
  // A program that computes one row of logits (`logits_row`): the engine
  // asks for the chunk's last real token, also in a padded chunk, and
  // refuses to give every row.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  std::vector<int64_t> tokens = {1, 2, 3, 4, 2, 1, 3, 2};
  LocalModel full(ckpt, 1);
  ASSERT_TRUE(full.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  ASSERT_TRUE(full.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  LocalModel oneRow(ckpt, 1);
  ASSERT_TRUE(oneRow.addProgram(openStep(TRA_FAKE_STEP_SEQ3_ONE_ROW)).ok());
  ASSERT_TRUE(oneRow.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  full.allRows = oneRow.allRows = false;
  // 7 tokens: 3 + 3 + 1; 5 tokens: 3 + a padded 3; 2 tokens: a padded 3.
  for (int64_t n : {7, 5, 2, 3}) {
    full.resetCaches();
    oneRow.resetCaches();
    std::vector<double> expected, got;
    ASSERT_TRUE(full.step(tokens, 0, n, expected).ok()) << n;
    ASSERT_TRUE(oneRow.step(tokens, 0, n, got).ok()) << n;
    ASSERT_EQ(got.size(), 5u) << n;
    for (size_t j = 0; j < 5; ++j)
      EXPECT_NEAR(got[j], expected[j], 1e-6) << n << " word " << j;
    // Decoding goes on from the caches the one-row chunks wrote.
    ASSERT_TRUE(full.step(tokens, n, 1, expected).ok());
    ASSERT_TRUE(oneRow.step(tokens, n, 1, got).ok());
    for (size_t j = 0; j < 5; ++j)
      EXPECT_NEAR(got[j], expected[j], 1e-6) << n << " decode word " << j;
  }
  oneRow.resetCaches();
  oneRow.allRows = true;
  std::vector<double> logits;
  rt::Status status = oneRow.step(tokens, 0, 3, logits);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("logits of the last token only"),
            std::string::npos)
      << status.message();
  // One-token steps have one row anyway.
  EXPECT_TRUE(oneRow.step(tokens, 0, 1, logits).ok());
}

TEST(LocalModel, BothProgramsOfOneLengthServeTheirSteps) {
  // The all-row and the one-row program of 3 tokens side by side: steps
  // that want every row run the first, steps that want the last row (or
  // none) the second; a third program of either kind is refused.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  std::vector<int64_t> tokens = {1, 2, 3, 4, 2, 1, 3, 2};
  LocalModel reference(ckpt, 1);
  ASSERT_TRUE(reference.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  ASSERT_TRUE(reference.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  LocalModel model(ckpt, 1);
  std::unique_ptr<exec::ProgramLibrary> all = openStep(TRA_FAKE_STEP_SEQ3);
  std::unique_ptr<exec::ProgramLibrary> last =
      openStep(TRA_FAKE_STEP_SEQ3_ONE_ROW);
  const exec::ProgramLibrary *allRuns = all.get(), *lastRuns = last.get();
  ASSERT_TRUE(model.addProgram(std::move(all)).ok());
  EXPECT_TRUE(model.hasProgram(3, false));
  EXPECT_FALSE(model.hasProgram(3, true));
  ASSERT_TRUE(model.addProgram(std::move(last)).ok());
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  EXPECT_TRUE(model.hasProgram(3));
  EXPECT_TRUE(model.hasProgram(3, true));
  EXPECT_EQ(model.programLengths(), (std::vector<int64_t>{1, 3}));
  rt::Status again = model.addProgram(openStep(TRA_FAKE_STEP_SEQ3_ONE_ROW));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("a second program for 3 tokens per step "
                                 "computing the last row"),
            std::string::npos)
      << again.message();

  // Every row: 7 tokens in 3 + 3 + 1, all through the all-row program.
  std::vector<double> expected, got;
  ASSERT_TRUE(reference.step(tokens, 0, 7, expected).ok());
  ASSERT_TRUE(model.step(tokens, 0, 7, got).ok());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t j = 0; j < got.size(); ++j)
    EXPECT_NEAR(got[j], expected[j], 1e-6) << j;
  EXPECT_EQ(allRuns->numRuns(), 2);
  EXPECT_EQ(lastRuns->numRuns(), 0);

  // The last row: the one-row program, also for the chunk whose logits
  // nobody reads.
  reference.resetCaches();
  model.resetCaches();
  reference.allRows = model.allRows = false;
  ASSERT_TRUE(reference.step(tokens, 0, 7, expected).ok());
  ASSERT_TRUE(model.step(tokens, 0, 7, got).ok());
  ASSERT_EQ(got.size(), 5u);
  for (size_t j = 0; j < 5; ++j)
    EXPECT_NEAR(got[j], expected[j], 1e-6) << j;
  EXPECT_EQ(allRuns->numRuns(), 2);
  EXPECT_EQ(lastRuns->numRuns(), 2);
}

TEST(LocalModel, SixteenBitWeightsAreConverted) {
  // 0.5 * j is exact in bf16: the same logits as from f32 weights.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint(rt::DType::BF16);
  LocalModel model(ckpt, 1);
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());
  std::vector<double> logits;
  ASSERT_TRUE(model.step({2}, 0, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 2, 0), 1e-4);
}

TEST(LocalModel, SixteenBitWeightsAreReadInPlaceByA16BitProgram) {
  // The program reads the checkpoint's bf16 bytes themselves (0.5 * j +
  // 1/64, exact in bf16), not a copy.
  rt::LlamaCheckpoint ckpt = tinyCheckpoint(rt::DType::BF16);
  std::vector<double> embedding(5 * 4, 0.0);
  for (int j = 0; j < 5; ++j)
    embedding[j * 4] = 0.5 * j + 1.0 / 64;
  ckpt.weights[0].second =
      rt::HostTensor::fromDoubles(rt::DType::BF16, {5, 4}, embedding);
  LocalModel model(ckpt, 1);
  rt::Status added = model.addProgram(openStep(TRA_FAKE_STEP_BF16));
  ASSERT_TRUE(added.ok()) << added.message();
  std::vector<double> logits;
  ASSERT_TRUE(model.step({2}, 0, 1, logits).ok());
  for (int j = 0; j < 5; ++j)
    EXPECT_NEAR(logits[j], expectedLogit(j, 2, 0) + 1.0 / 64, 1e-4);
  EXPECT_EQ(lastEmbedding(TRA_FAKE_STEP_BF16),
            static_cast<const void *>(ckpt.weights[0].second.data()));
}

TEST(LocalModel, AWeightReadInAnotherDTypeIsRefused) {
  for (rt::DType dtype : {rt::DType::F16, rt::DType::F32}) {
    rt::LlamaCheckpoint ckpt = tinyCheckpoint(dtype);
    LocalModel model(ckpt, 1);
    rt::Status status = model.addProgram(openStep(TRA_FAKE_STEP_BF16));
    ASSERT_FALSE(status.ok());
    std::string expected =
        "@forward reads 'tok_embeddings.weight' as "
        "bf16[5, 4], but the checkpoint holds it as " +
        std::string(dtype == rt::DType::F16 ? "f16" : "f32") + "[5, 4]";
    EXPECT_NE(status.message().find(expected), std::string::npos)
        << status.message();
    EXPECT_EQ(status.message().rfind(TRA_FAKE_STEP_BF16, 0), 0u)
        << status.message();
  }
}

TEST(LocalModel, Errors) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  LocalModel model(ckpt, 1);
  ASSERT_TRUE(model.addProgram(openStep(TRA_FAKE_STEP_SEQ1)).ok());

  rt::Status second = model.addProgram(openStep(TRA_FAKE_STEP_SEQ1));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find("a second program for 1 tokens per step"),
            std::string::npos)
      << second.message();

  LocalModel other(ckpt, 1);
  rt::Status missing = other.addProgram(openStep(TRA_FAKE_STEP_BADWEIGHT));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().rfind(TRA_FAKE_STEP_BADWEIGHT, 0), 0u)
      << missing.message();
  EXPECT_NE(missing.message().find("'output.weight'"), std::string::npos)
      << missing.message();
  EXPECT_FALSE(other.hasProgram(1));

  // Only a 3-token program: 2 tokens at position 6 neither fit it padded
  // (6 + 3 > 8) nor split into shorter programs.
  std::vector<double> logits;
  LocalModel three(ckpt, 1);
  ASSERT_TRUE(three.addProgram(openStep(TRA_FAKE_STEP_SEQ3)).ok());
  rt::Status noProgram = three.step(std::vector<int64_t>(8, 1), 6, 2, logits);
  ASSERT_FALSE(noProgram.ok());
  EXPECT_NE(noProgram.message().find("no step programs for 2 tokens at "
                                     "position 6 (programs of 3 tokens"),
            std::string::npos)
      << noProgram.message();
  rt::Status fewTokens = model.step({1, 2}, 1, 2, logits);
  ASSERT_FALSE(fewTokens.ok());
  EXPECT_NE(fewTokens.message().find("has only 1 tokens"), std::string::npos)
      << fewTokens.message();
  std::vector<int64_t> tokens(9, 1);
  for (int64_t pos : {int64_t(-1), int64_t(8), INT64_MAX}) {
    rt::Status outside = model.step(tokens, pos, 1, logits);
    ASSERT_FALSE(outside.ok()) << pos;
    EXPECT_NE(outside.message().find("outside the KV cache of 8 positions"),
              std::string::npos)
        << outside.message();
  }
}

TEST(LocalModel, ShapeMismatchNamesBoth) {
  rt::LlamaCheckpoint ckpt = tinyCheckpoint();
  ckpt.params.maxSeqLen = 6; // the program's caches have 8 positions
  LocalModel model(ckpt, 1);
  rt::Status status = model.addProgram(openStep(TRA_FAKE_STEP_SEQ1));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("f32[8, 1]"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("f32[6, 1]"), std::string::npos)
      << status.message();
}

TEST(LocalModel, UnknownDeviceKindIsRefusedByTheLoader) {
  rt::Result<std::unique_ptr<exec::ProgramLibrary>> library =
      exec::ProgramLibrary::open(TRA_FAKE_STEP_BADDEVICE);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.message().find("a program for an unknown device kind 7"),
            std::string::npos)
      << library.message();
}

// A library without tra_exec_set_parallel_costs (not linked with this
// runtime) is refused with the file and the missing function named.
TEST(LocalModel, LibraryWithoutParallelCostsIsRefusedByTheLoader) {
  rt::Result<std::unique_ptr<exec::ProgramLibrary>> library =
      exec::ProgramLibrary::open(TRA_FAKE_STEP_NOCOSTS);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.message().find(TRA_FAKE_STEP_NOCOSTS), std::string::npos)
      << library.message();
  EXPECT_NE(library.message().find("no tra_exec_set_parallel_costs (not "
                                   "linked with TRAExec)"),
            std::string::npos)
      << library.message();
}

} // namespace
