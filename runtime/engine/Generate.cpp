//===- Generate.cpp - The generation loop of the LLaMA engine -------------===//

#include "tra/Engine/Generate.h"

#include "tra/Runtime/File.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Sampler.h"

#include <chrono>
#include <cstdio>
#include <vector>

using namespace tra;
using namespace tra::engine;

namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double rate(int64_t n, double seconds) {
  return seconds > 0 ? double(n) / seconds : 0.0;
}

/// Writes the timings of --bench-json.
rt::Status writeBenchJson(const GenerationConfig &config, int64_t promptLen,
                          double prefillSeconds, int64_t decoded,
                          double decodeSeconds,
                          const std::vector<double> &decodeStepSeconds,
                          double warmupPrefillSeconds) {
  rt::JsonValue o = rt::JsonValue::object(
      {{"engine", config.engine},
       {"prefill_tokens", promptLen},
       {"prefill_seconds", prefillSeconds},
       {"prefill_tokens_per_s", rate(promptLen, prefillSeconds)},
       {"prefill_one_step", config.oneStepPrefill},
       {"prefill_chunk", config.oneStepPrefill && config.prefillChunk > 0
                             ? config.prefillChunk
                         : config.oneStepPrefill ? promptLen
                                                 : int64_t(1)},
       {"decode_tokens", decoded},
       {"decode_seconds", decodeSeconds},
       {"decode_tokens_per_s", rate(decoded, decodeSeconds)},
       {"compile_seconds", config.compileSeconds},
       {"compiled_now", config.compiledNow},
       {"warmup", config.warmup}});
  // Each decoding step's time (sampling included): latency percentiles, and
  // whether a slow run is slow throughout or in a few steps.
  rt::JsonValue steps = rt::JsonValue::array();
  for (double seconds : decodeStepSeconds)
    steps.push(seconds);
  o.set("decode_step_seconds", std::move(steps));
  if (config.warmup) {
    o.set("warmup_prefill_seconds", warmupPrefillSeconds);
    o.set("warmup_prefill_tokens_per_s", rate(promptLen, warmupPrefillSeconds));
  }
  std::string text = o.serialize(2) + "\n";
  rt::Result<rt::AtomicFileWriter> out =
      rt::AtomicFileWriter::create(config.benchJson);
  if (!out)
    return out.error();
  if (rt::Status status = out->write(text.data(), text.size()); !status)
    return status;
  return out->commit();
}
} // namespace

rt::Status tra::engine::generate(const GenerationConfig &config,
                                 const StepFunction &step,
                                 const ShareFunction &share, bool leader) {
  if (rt::Status valid =
          rt::Sampler::validate(config.temperature, config.topP, config.seed);
      !valid)
    return valid;
  rt::Sampler sampler(float(config.temperature), float(config.topP),
                      config.seed);
  const int64_t promptLen = int64_t(config.prompt.size());
  const int64_t vocab = config.vocabSize;
  std::vector<int64_t> tokens = config.prompt;
  std::vector<double> allLogits, logits;

  // Records the logits (leader) and appends the next token: the leader's
  // choice from the last row, shared with the other processes.
  // Every row is kept only for --logits-out (a 128-token prefill of a
  // 32000-word model has 32 MiB of them).
  const bool keepLogits = leader && !config.logitsOut.empty();
  auto consume = [&]() {
    int64_t next = 0;
    if (leader) {
      if (keepLogits)
        allLogits.insert(allLogits.end(), logits.begin(), logits.end());
      next = sampler.next(logits.data() + logits.size() - vocab, vocab);
    }
    if (share)
      share(next);
    tokens.push_back(next);
  };

  // Prefill: the prompt, as one step or token by token (`keep`: record
  // every row but the last for --logits-out).
  auto prefill = [&](bool keep) -> rt::Status {
    if (config.oneStepPrefill)
      return step(tokens, 0, promptLen, logits);
    for (int64_t pos = 0; pos < promptLen; ++pos) {
      if (rt::Status status = step(tokens, pos, 1, logits); !status)
        return status;
      if (keep && pos + 1 < promptLen)
        allLogits.insert(allLogits.end(), logits.begin(), logits.end());
    }
    return rt::Status::success();
  };

  // Warm-up: the same prompt, then one decoding step on its last token; no
  // sampling, nothing recorded.
  double warmupPrefillSeconds = 0.0;
  if (config.warmup) {
    auto start = Clock::now();
    if (rt::Status status = prefill(false); !status)
      return status;
    warmupPrefillSeconds = since(start);
    if (config.steps > promptLen) {
      std::vector<int64_t> next = tokens;
      next.push_back(tokens.back());
      if (rt::Status status = step(next, promptLen, 1, logits); !status)
        return status;
    }
  }

  auto start = Clock::now();
  if (rt::Status status = prefill(keepLogits); !status)
    return status;
  consume();
  double prefillSeconds = since(start);
  // Decoding: one token per step.
  std::vector<double> decodeStepSeconds;
  start = Clock::now();
  auto stepStart = start;
  for (int64_t pos = promptLen; pos < config.steps; ++pos) {
    if (rt::Status status = step(tokens, pos, 1, logits); !status)
      return status;
    consume();
    auto now = Clock::now();
    decodeStepSeconds.push_back(
        std::chrono::duration<double>(now - stepStart).count());
    stepStart = now;
  }
  double decodeSeconds = since(start);
  int64_t decoded = config.steps - promptLen;
  if (!leader)
    return rt::Status::success();

  if (config.tokenizer) {
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i)
      text += config.tokenizer->decode(i ? tokens[i - 1] : -1, tokens[i]);
    std::printf("%s\n", text.c_str());
  }
  if (config.printIds) {
    for (size_t i = config.prompt.size(); i < tokens.size(); ++i)
      std::printf(i > config.prompt.size() ? " %lld" : "%lld",
                  static_cast<long long>(tokens[i]));
    std::printf("\n");
  }
  std::fflush(stdout);
  if (config.outcome)
    *config.outcome = {tokens, prefillSeconds, decodeSeconds};
  if (config.warmup && config.reportTimings)
    std::fprintf(stderr,
                 "tra-llama: warm-up prefill (untimed run before the timed "
                 "one): %lld tokens in %.3f s (%.1f tokens/s)\n",
                 static_cast<long long>(promptLen), warmupPrefillSeconds,
                 rate(promptLen, warmupPrefillSeconds));
  if (config.reportTimings) {
    // A prompt longer than the prefill program runs in several steps.
    std::string prefillHow =
        !config.oneStepPrefill ? "one token per step"
        : config.prefillChunk > 0 && config.prefillChunk < promptLen
            ? "steps of " + std::to_string(config.prefillChunk) + " tokens"
            : "one step";
    std::fprintf(stderr,
                 "tra-llama: prefill: %lld tokens in %.3f s (%.1f tokens/s, "
                 "%s, %s)\n",
                 static_cast<long long>(promptLen), prefillSeconds,
                 rate(promptLen, prefillSeconds), prefillHow.c_str(),
                 config.how.c_str());
    std::fprintf(stderr,
                 "tra-llama: decode: %lld tokens in %.3f s (%.1f tokens/s, "
                 "%s)\n",
                 static_cast<long long>(decoded), decodeSeconds,
                 rate(decoded, decodeSeconds), config.how.c_str());
    std::fflush(stderr);
  }
  if (!config.logitsOut.empty()) {
    rt::Status status =
        rt::writeNpy(config.logitsOut,
                     rt::HostTensor::fromDoubles(
                         rt::DType::F32, {config.steps, vocab}, allLogits));
    if (!status)
      return status;
  }
  if (!config.benchJson.empty())
    if (rt::Status status = writeBenchJson(
            config, promptLen, prefillSeconds, decoded, decodeSeconds,
            decodeStepSeconds, warmupPrefillSeconds);
        !status)
      return status;
  return rt::Status::success();
}
