//===- SamplerTest.cpp - Next-token choice --------------------------------===//

#include "tra/Runtime/Sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using tra::rt::Sampler;

namespace {

// The generator is llama2.c's xorshift64* (random_f32); these values were
// computed with an independent Python implementation of it for seed 42.
TEST(SamplerTest, CoinsFollowLlama2c) {
  Sampler sampler(1.0f, 0.0f, 42);
  const float expected[] = {0.3390852212905884f, 0.7822558283805847f,
                            0.790136992931366f, 0.9440426230430603f};
  for (float e : expected)
    EXPECT_EQ(sampler.coin(), e);
}

TEST(SamplerTest, GreedyIsFirstArgmax) {
  Sampler sampler(0.0f, 0.9f, 0);
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_TRUE(sampler.isGreedy());
  EXPECT_EQ(sampler.next(logits.data(), 4), 1);
  std::vector<double> wide = {-3.0, -2.0, -2.5};
  EXPECT_EQ(sampler.next(wide.data(), 3), 1);
}

/// Draws `count` tokens from `logits` and returns the frequencies.
std::vector<double> frequencies(Sampler &sampler,
                                const std::vector<float> &logits, int count) {
  std::vector<double> seen(logits.size(), 0.0);
  for (int i = 0; i < count; ++i)
    seen[sampler.next(logits.data(), int64_t(logits.size()))] += 1.0 / count;
  return seen;
}

TEST(SamplerTest, TemperatureOneSamplesTheSoftmax) {
  Sampler sampler(1.0f, 0.0f, 7);
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  std::vector<double> seen = frequencies(sampler, logits, 40000);
  EXPECT_NEAR(seen[0], 0.5, 0.01);
  EXPECT_NEAR(seen[1], 0.3, 0.01);
  EXPECT_NEAR(seen[2], 0.2, 0.01);
}

TEST(SamplerTest, TemperatureSharpens) {
  // At temperature 0.5 the probabilities are proportional to p^2:
  // 0.25 : 0.09 : 0.04.
  Sampler sampler(0.5f, 0.0f, 11);
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  std::vector<double> seen = frequencies(sampler, logits, 40000);
  EXPECT_NEAR(seen[0], 0.25 / 0.38, 0.01);
  EXPECT_NEAR(seen[1], 0.09 / 0.38, 0.01);
  EXPECT_NEAR(seen[2], 0.04 / 0.38, 0.01);
}

TEST(SamplerTest, TopPKeepsTheNucleus) {
  // Probabilities 0.5, 0.3, 0.2 with top-p 0.6: the nucleus is {0, 1}
  // (0.5 + 0.3 > 0.6), renormalized to 0.625 : 0.375.
  Sampler sampler(1.0f, 0.6f, 3);
  std::vector<float> logits = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
  std::vector<double> seen = frequencies(sampler, logits, 40000);
  EXPECT_EQ(seen[0], 0.0);
  EXPECT_NEAR(seen[1], 0.625, 0.01);
  EXPECT_NEAR(seen[2], 0.375, 0.01);
}

TEST(SamplerTest, TinyTopPStillPicksTheMostProbable) {
  // With top-p 0.01 no probability reaches the cutoff 0.99: the most
  // probable token is the nucleus.
  Sampler sampler(1.0f, 0.01f, 5);
  std::vector<float> logits = {0.0f, 0.1f};
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(sampler.next(logits.data(), 2), 1);
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::vector<float> logits = {0.1f, 0.4f, 0.2f, 0.3f, 0.0f};
  Sampler a(0.8f, 0.9f, 1234), b(0.8f, 0.9f, 1234), c(0.8f, 0.9f, 4321);
  std::vector<int64_t> ta, tb, tc;
  for (int i = 0; i < 64; ++i) {
    ta.push_back(a.next(logits.data(), 5));
    tb.push_back(b.next(logits.data(), 5));
    tc.push_back(c.next(logits.data(), 5));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
}

TEST(SamplerTest, Validate) {
  EXPECT_TRUE(Sampler::validate(0.0, 0.9, 0).ok());
  EXPECT_TRUE(Sampler::validate(0.8, 1.0, 1).ok());
  EXPECT_FALSE(Sampler::validate(-0.1, 0.9, 1).ok());
  EXPECT_FALSE(Sampler::validate(std::nan(""), 0.9, 1).ok());
  EXPECT_FALSE(Sampler::validate(INFINITY, 0.9, 1).ok());
  EXPECT_FALSE(Sampler::validate(0.8, 1.5, 1).ok());
  EXPECT_FALSE(Sampler::validate(0.8, -0.5, 1).ok());
  EXPECT_FALSE(Sampler::validate(0.8, 0.9, 0).ok());
}

} // namespace
