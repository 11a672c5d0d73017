//===- StepChunks.h - A step of any length with fixed-length programs -*- C++
//-*-===//
//
// Step programs are compiled for a fixed number of tokens per step (static
// shapes): one for decoding and one prefill chunk length, compiled once per
// model and hardware, rather than one program per prompt length. A step of
// n tokens at position pos (a whole prompt) runs as a sequence of chunks,
// each with one of the compiled programs:
//  - while n is at least the longest program's length, a full step of the
//    longest program;
//  - the rest (fewer tokens than the longest program): the program of
//    exactly that length if there is one; else, when one-token steps of
//    the rest cost less than one padded run (kPrefillRowSpeedup), one-token
//    steps; else the shortest program that holds it and still fits in the
//    KV cache, its extra rows padded (with token 0); else the longest
//    program shorter than the rest.
// A padded chunk writes KV-cache rows past the real tokens; they are never
// read before a later step writes them (the causal mask hides positions
// after the step's, and every step writes its positions before reading
// them), so the results are those of running the n tokens exactly. The
// logits of padded rows are dropped.
//
// Nothing here runs a program: LocalModel and RankModel follow the plan.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_STEPCHUNKS_H
#define TRA_ENGINE_STEPCHUNKS_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tra::engine {

/// One run of a step program: `count` real tokens at `pos` with the program
/// of `seq` tokens per step (seq >= count; seq - count padded rows).
struct StepChunk {
  int64_t pos = 0;
  int64_t count = 0;
  int64_t seq = 0;
};

/// A padded run of a program of s tokens computes s rows; a one-token step
/// reads every weight for one row. A run of s tokens is taken to cost
/// s / kPrefillRowSpeedup one-token steps (a prefill chunk computes a row at
/// least that many times faster than a decoding step: matrix-matrix
/// products against matrix-vector ones; about 25x on the 110M model on 2
/// cores), so a rest of fewer than s / kPrefillRowSpeedup tokens runs as
/// one-token steps. A fixed rule, not a measurement: a prompt of a given
/// length always runs the same way (the same numerics from run to run, and
/// the same plan on every rank of a job).
constexpr int64_t kPrefillRowSpeedup = 16;

/// Splits a step over positions [pos, pos + n) into runs of the programs of
/// `programLengths` tokens per step (any order) for a KV cache of
/// `maxSeqLen` positions. Fails (naming the lengths) when the step is outside
/// the cache or no combination of the programs covers it (there is no 1-token
/// program and no chunking fits).
rt::Result<std::vector<StepChunk>>
planStepChunks(const std::vector<int64_t> &programLengths, int64_t maxSeqLen,
               int64_t pos, int64_t n);

/// planStepChunks for a step that reads `numTokens` known tokens: also fails
/// when the tokens of [pos, pos + n) are not all there.
rt::Result<std::vector<StepChunk>>
planStepChunks(const std::vector<int64_t> &programLengths, int64_t maxSeqLen,
               int64_t numTokens, int64_t pos, int64_t n);

/// The prefill program's tokens per step for a `requested` chunk length
/// (0: kDefaultPrefillChunk) and a KV cache of `maxSeqLen` positions.
int64_t prefillChunkLength(int64_t requested, int64_t maxSeqLen);

/// Tokens per prefill step unless the user says otherwise: long enough for
/// the contractions to run at matrix-matrix speed, short enough that a
/// short prompt's padding costs little.
constexpr int64_t kDefaultPrefillChunk = 128;

/// "@forward (1 token per step)", "@forward (128 tokens per step)": the
/// step program of `seq` tokens, for messages.
std::string describeStepProgram(int64_t seq);

} // namespace tra::engine

#endif // TRA_ENGINE_STEPCHUNKS_H
