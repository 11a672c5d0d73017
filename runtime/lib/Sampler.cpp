//===- Sampler.cpp - Next-token choice from logits ------------------------===//

#include "tra/Runtime/Sampler.h"

#include <algorithm>
#include <cmath>

using namespace tra::rt;

Sampler::Sampler(float temperature, float topP, uint64_t seed)
    : temperature(temperature), topP(topP), state(seed) {}

Status Sampler::validate(double temperature, double topP, uint64_t seed) {
  if (!(temperature >= 0.0) || std::isinf(temperature))
    return Error{"the temperature must be a finite number >= 0 (0: greedy)"};
  if (!(topP >= 0.0 && topP <= 1.0))
    return Error{"top-p must be in [0, 1] (0 or 1: the whole distribution)"};
  if (temperature > 0.0 && seed == 0)
    return Error{"the seed must not be 0 (the xorshift generator would only "
                 "produce zeros)"};
  return Status::success();
}

float Sampler::coin() {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  uint32_t bits = uint32_t((state * 0x2545F4914F6CDD1Dull) >> 32);
  return float(bits >> 8) / 16777216.0f;
}

int64_t Sampler::next(const double *logits, int64_t n) {
  if (isGreedy())
    return argmax(logits, n);
  std::vector<float> row(logits, logits + n);
  return next(row.data(), n);
}

int64_t Sampler::next(const float *logits, int64_t n) {
  if (isGreedy())
    return argmax(logits, n);
  // Softmax of logits / temperature, in float as llama2.c computes it.
  probs.assign(logits, logits + n);
  for (float &p : probs)
    p /= temperature;
  float max = *std::max_element(probs.begin(), probs.end());
  float sum = 0.0f;
  for (float &p : probs) {
    p = std::exp(p - max);
    sum += p;
  }
  for (float &p : probs)
    p /= sum;
  float r = coin();
  if (topP <= 0.0f || topP >= 1.0f) {
    float cdf = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      cdf += probs[i];
      if (r < cdf)
        return i;
    }
    return n - 1; // rounding
  }
  // Nucleus: the most probable tokens until their mass exceeds top-p.
  const float cutoff = (1.0f - topP) / float(n - 1);
  candidates.clear();
  for (int64_t i = 0; i < n; ++i)
    if (probs[i] >= cutoff)
      candidates.push_back({probs[i], i});
  // The nucleus holds at least the most probable token (with a tiny top-p
  // no probability may reach the cutoff; llama2.c would read out of bounds).
  if (candidates.empty())
    return argmax(probs.data(), n);
  std::sort(
      candidates.begin(), candidates.end(), [](const auto &a, const auto &b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
  float cumulative = 0.0f;
  size_t last = candidates.size() - 1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    cumulative += candidates[i].first;
    if (cumulative > topP) {
      last = i;
      break;
    }
  }
  float target = r * cumulative;
  float cdf = 0.0f;
  for (size_t i = 0; i <= last; ++i) {
    cdf += candidates[i].first;
    if (target < cdf)
      return candidates[i].second;
  }
  return candidates[last].second;
}
