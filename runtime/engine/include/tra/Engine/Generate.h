//===- Generate.h - The generation loop of the LLaMA engine -----*- C++ -*-===//
//
// The part of a generation every way of running the steps shares: the prompt
// runs as one step (prefill) or token by token, then one token per step; the
// next token is chosen from the last row of logits by rt::Sampler (llama2.c's
// rules: greedy at temperature 0, else softmax + top-p with a seeded xorshift
// generator); the ids or text, the timing lines, --logits-out and
// --bench-json are written the same way whatever ran the steps: the
// in-process compiled model (LocalModel.h) and the reference interpreter in
// tra-llama, the MPI ranks of a distributed model (RankModel.h) in
// tra-llama-worker (where rank 0 is the leader that samples and prints, and
// the others follow its choices). No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_GENERATE_H
#define TRA_ENGINE_GENERATE_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tra::engine {

/// What to generate and what to report.
struct GenerationConfig {
  /// The prompt's token ids (BOS first).
  std::vector<int64_t> prompt;
  /// Positions to run, the prompt's included.
  int64_t steps = 0;
  int64_t vocabSize = 0;
  /// Run the prompt as one step of all its tokens (the engine runs it in
  /// chunks of its prefill program, StepChunks.h); otherwise one token per
  /// step.
  bool oneStepPrefill = true;
  /// The prefill program's tokens per step, for the timing lines (0: the
  /// prompt's length).
  int64_t prefillChunk = 0;
  /// Sampling (see rt::Sampler; checked with Sampler::validate).
  double temperature = 0.0;
  double topP = 0.9;
  uint64_t seed = 0;
  /// Print the generated ids (one line on stdout).
  bool printIds = false;
  /// Print the text (prompt and generated) with this tokenizer, if set.
  const rt::Tokenizer *tokenizer = nullptr;
  /// Write every position's logits [steps, vocab] to this .npy file.
  std::string logitsOut;
  /// Write the timings as JSON to this file.
  std::string benchJson;
  /// Before the timed generation, run the prompt's steps and one decoding
  /// step once, untimed (a benchmark's warm-up run: the timings are then
  /// those of a process that has generated before, as for a server). The
  /// warm-up's prefill time is reported too. The timed run writes every
  /// KV-cache position again before a step reads it.
  bool warmup = false;
  /// Print the timing lines on stderr (a library client may not want them).
  bool reportTimings = true;
  /// If set, receives every token of the sequence (prompt included) and the
  /// timings, on the leader.
  struct Outcome {
    std::vector<int64_t> tokens;
    double prefillSeconds = 0.0, decodeSeconds = 0.0;
  } *outcome = nullptr;
  /// How the steps run, for the timing lines ("compiled, in process").
  std::string how;
  /// For --bench-json: the engine's name and its compilation.
  std::string engine;
  double compileSeconds = 0.0;
  bool compiledNow = false;
};

/// Runs one step over tokens[pos, pos + n) (the KV caches hold positions
/// before pos); on the leader fills `logits` with at least the last of the
/// n rows of vocabSize (every row when --logits-out is asked for).
using StepFunction =
    std::function<rt::Status(const std::vector<int64_t> &tokens, int64_t pos,
                             int64_t n, std::vector<double> &logits)>;

/// Makes every process agree on the leader's choice of the next token
/// (distributed runs); on the leader `token` is its choice, on the others it
/// is replaced by it.
using ShareFunction = std::function<void(int64_t &token)>;

/// Generates as `config` says, running the steps with `step`. Only the
/// leader samples, prints and writes files; the other processes of a
/// distributed run (`leader` false) run the same steps and get every token
/// through `share`.
rt::Status generate(const GenerationConfig &config, const StepFunction &step,
                    const ShareFunction &share = nullptr, bool leader = true);

} // namespace tra::engine

#endif // TRA_ENGINE_GENERATE_H
