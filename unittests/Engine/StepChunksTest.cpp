//===- StepChunksTest.cpp - Steps of any length with fixed programs -------===//

#include "tra/Engine/StepChunks.h"

#include <gtest/gtest.h>

using namespace tra;
using namespace tra::engine;

namespace {

/// "pos+count/seq ..." of a plan, or its error.
std::string plan(const std::vector<int64_t> &lengths, int64_t maxSeqLen,
                 int64_t pos, int64_t n) {
  rt::Result<std::vector<StepChunk>> chunks =
      planStepChunks(lengths, maxSeqLen, pos, n);
  if (!chunks)
    return "error: " + chunks.message();
  std::string s;
  for (const StepChunk &c : *chunks)
    s += (s.empty() ? "" : " ") + std::to_string(c.pos) + "+" +
         std::to_string(c.count) + "/" + std::to_string(c.seq);
  return s;
}

TEST(StepChunks, FullChunksThenAPaddedRest) {
  EXPECT_EQ(plan({1, 128}, 1024, 0, 300), "0+128/128 128+128/128 256+44/128");
  EXPECT_EQ(plan({128, 1}, 1024, 0, 9), "0+9/128");
  EXPECT_EQ(plan({1, 128}, 1024, 0, 128), "0+128/128");
  EXPECT_EQ(plan({1, 128}, 1024, 5, 1), "5+1/1");
}

TEST(StepChunks, AnExactProgramIsPreferredToPadding) {
  EXPECT_EQ(plan({1, 9, 128}, 1024, 0, 9), "0+9/9");
  EXPECT_EQ(plan({1, 9, 128}, 1024, 0, 137), "0+128/128 128+9/9");
  // The shortest program that holds the rest.
  EXPECT_EQ(plan({1, 16, 128}, 1024, 0, 10), "0+10/16");
}

TEST(StepChunks, NearTheCacheEndShorterProgramsTakeOver) {
  // 150 + 128 > 200: no padded chunk fits; the rest runs token by token.
  std::string expected;
  for (int64_t p = 150; p < 190; ++p)
    expected += (expected.empty() ? "" : " ") + std::to_string(p) + "+1/1";
  EXPECT_EQ(plan({1, 128}, 200, 150, 40), expected);
  EXPECT_EQ(plan({1, 16, 128}, 200, 150, 40), "150+16/16 166+16/16 182+8/16");
  EXPECT_EQ(plan({1, 16, 128}, 200, 190, 10), "190+1/1 191+1/1 192+1/1 "
                                              "193+1/1 194+1/1 195+1/1 "
                                              "196+1/1 197+1/1 198+1/1 "
                                              "199+1/1");
}

TEST(StepChunks, AShortRestRunsTokenByToken) {
  // A run of 128 tokens costs about 8 one-token steps (kPrefillRowSpeedup).
  EXPECT_EQ(plan({1, 128}, 1024, 0, 3), "0+1/1 1+1/1 2+1/1");
  EXPECT_EQ(plan({1, 128}, 1024, 10, 7),
            "10+1/1 11+1/1 12+1/1 13+1/1 14+1/1 15+1/1 16+1/1");
  EXPECT_EQ(plan({1, 128}, 1024, 0, 8), "0+8/128");
  EXPECT_EQ(plan({1, 128}, 1024, 0, 130), "0+128/128 128+1/1 129+1/1");
  // The bound scales with the chunk: 15 of 256 one by one, 16 padded.
  std::string fifteen = plan({1, 256}, 1024, 0, 15);
  EXPECT_EQ(fifteen.substr(0, 12), "0+1/1 1+1/1 ");
  EXPECT_EQ(fifteen.substr(fifteen.size() - 7), " 14+1/1");
  EXPECT_EQ(plan({1, 256}, 1024, 0, 16), "0+16/256");
  // An exact program is never replaced; without a one-token program there
  // are no one-token steps.
  EXPECT_EQ(plan({1, 3, 128}, 1024, 0, 3), "0+3/3");
  EXPECT_EQ(plan({2, 128}, 1024, 0, 1), "0+1/2");
}

TEST(StepChunks, ProgramsLongerThanTheCacheAreIgnored) {
  EXPECT_EQ(plan({1, 128}, 64, 0, 3), "0+1/1 1+1/1 2+1/1");
}

TEST(StepChunks, Errors) {
  std::string none = plan({128}, 200, 150, 40);
  EXPECT_NE(none.find("no step programs for 40 tokens at position 150 "
                      "(programs of 128 tokens per step, a KV cache of 200 "
                      "positions)"),
            std::string::npos)
      << none;
  EXPECT_NE(plan({}, 8, 0, 1).find("programs of none"), std::string::npos);
  for (auto [pos, n] : {std::pair<int64_t, int64_t>{-1, 1},
                        {0, 0},
                        {8, 1},
                        {7, 2},
                        {INT64_MAX, 1},
                        {0, INT64_MAX}}) {
    std::string outside = plan({1}, 8, pos, n);
    EXPECT_NE(outside.find("outside the KV cache of 8 positions"),
              std::string::npos)
        << pos << " " << n << ": " << outside;
  }
}

TEST(StepChunks, PrefillChunkLength) {
  EXPECT_EQ(prefillChunkLength(0, 1024), kDefaultPrefillChunk);
  EXPECT_EQ(prefillChunkLength(0, 64), 64);
  EXPECT_EQ(prefillChunkLength(500, 1024), 500);
  EXPECT_EQ(prefillChunkLength(5000, 1024), 1024);
}

} // namespace
