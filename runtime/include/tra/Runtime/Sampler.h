//===- Sampler.h - Next-token choice from logits ----------------*- C++ -*-===//
//
// Picks the next token from one row of logits the way llama2.c's `run.c`
// does, so that a seeded run is reproducible and can be checked against an
// independent implementation of the same rules:
//
//  - temperature 0: greedy, the index of the largest logit (the first one
//    on ties);
//  - otherwise the logits are divided by the temperature and turned into
//    probabilities with a softmax (float arithmetic); a coin in [0, 1) from
//    the xorshift64* generator seeded with `seed` then picks a token from
//    the whole distribution (top-p 0 or >= 1) or from the nucleus: the
//    smallest set of most probable tokens whose probability exceeds top-p
//    (candidates below (1 - top-p) / (vocab - 1) are dropped first).
//
// Every sampled step draws exactly one coin, so the sequence of draws
// depends only on the seed and the number of sampled steps.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_SAMPLER_H
#define TRA_RUNTIME_SAMPLER_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tra::rt {

class Sampler {
public:
  /// `temperature` >= 0 and `topP` in [0, 1]; see validate().
  Sampler(float temperature, float topP, uint64_t seed);

  /// Succeeds, or says what is wrong with the settings (a negative or NaN
  /// temperature, a top-p outside [0, 1], a zero seed while sampling).
  static Status validate(double temperature, double topP, uint64_t seed);

  /// Index of the largest of `n` logits (the first on ties).
  template <typename T> static int64_t argmax(const T *logits, int64_t n) {
    int64_t best = 0;
    for (int64_t v = 1; v < n; ++v)
      if (logits[v] > logits[best])
        best = v;
    return best;
  }

  /// The next token for `n` logits.
  int64_t next(const float *logits, int64_t n);
  int64_t next(const double *logits, int64_t n);

  /// The next number in [0, 1) of the generator (llama2.c's random_f32).
  float coin();

  bool isGreedy() const { return temperature == 0.0f; }

private:
  float temperature, topP;
  uint64_t state;
  std::vector<float> probs;
  std::vector<std::pair<float, int64_t>> candidates;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_SAMPLER_H
