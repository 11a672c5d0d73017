//===- tra-generate.cpp - A generation from compiled LLaMA step programs --===//
//
//   tra-generate --checkpoint CKPT --program DECODE.so [--program PREFILL.so]
//       --prompt-ids 1,2,3 --steps N [--max-seq-len N] [--threads N]
//       [--temperature T --top-p P --seed S] [--print-ids] [--tokenizer TOK]
//       [--logits-out FILE.npy] [--bench-json FILE.json] [--warmup]
//
// Runs a LLaMA generation on one device in this process from step programs
// compiled before (by tra-llama into its library cache, or by `tra-llama
// emit` + `tra-compile --emit=lib`): the engine alone (runtime/engine), no
// compiler, so a machine that only runs models needs neither LLVM nor MLIR,
// as the GPU check's bare GPU machine. A step program compiled for a GPU
// (hw/gpu-1.json) runs on this machine's GPU with the weights and KV caches
// in device memory; the checkpoint's 16-bit weights stay 16-bit where the
// programs read them so. The options are tra-llama-worker's
// (engine::WorkerOptions); the output is `tra-llama run`'s (ids or text on
// stdout, the prefill and decode timings on stderr). Exit 1 with one line
// on any error.
//
//===----------------------------------------------------------------------===//

#include "tra/Engine/Checkpoint.h"
#include "tra/Engine/Generate.h"
#include "tra/Engine/LocalModel.h"
#include "tra/Engine/MpiJob.h"
#include "tra/Exec/Library.h"
#include "tra/Runtime/Sampler.h"
#include "tra/Runtime/Tokenizer.h"

#ifdef TRA_GENERATE_HAVE_CUDA
#include "tra/Cuda/Accelerator.h"
#endif

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace tra;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "tra-generate: error: %s\n", message.c_str());
  return 1;
}

/// Whether `program` reads an input of element type `dtype` (only weights
/// are 16-bit or i8: see StepTensors.h).
bool readsType(const TraExecProgram &program, int64_t dtype) {
  for (int64_t i = 0; i < program.numInputs; ++i)
    if (program.inputs[i].dtype == dtype)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  rt::Result<engine::WorkerOptions> options =
      engine::WorkerOptions::parse(argc, argv);
  if (!options)
    return fail(options.message());
  if (options->stepTimeout != 0)
    return fail("--step-timeout is for the ranks of a distributed run");
  engine::GenerationConfig config = options->generation;

  // The programs first: whether they run on a GPU and read 16-bit weights
  // decides how the checkpoint is loaded.
  std::vector<std::unique_ptr<exec::ProgramLibrary>> libraries;
  bool gpu = false, sixteenBit = false, eightBit = false;
  int64_t programThreads = 1;
  for (const std::string &path : options->programs) {
    rt::Result<std::unique_ptr<exec::ProgramLibrary>> library =
        exec::ProgramLibrary::open(path);
    if (!library)
      return fail(library.message());
    const TraExecProgram &program = (*library)->program();
    gpu |= program.device == TRA_EXEC_CUDA;
    sixteenBit |=
        readsType(program, TRA_EXEC_F16) || readsType(program, TRA_EXEC_BF16);
    eightBit |= readsType(program, TRA_EXEC_I8);
    programThreads = std::max<int64_t>(programThreads, program.numThreads);
    libraries.push_back(std::move(*library));
  }
  const exec::Accelerator *accelerator = nullptr;
  if (gpu) {
#ifdef TRA_GENERATE_HAVE_CUDA
    accelerator = &cuda::getAccelerator();
    if (rt::Status status = accelerator->initialize(); !status)
      return fail(options->programs.front() +
                  ": a step program for an NVIDIA GPU; running it needs an "
                  "NVIDIA GPU with a CUDA 13 driver: " +
                  status.message() +
                  "; compile the model with --emulate-on-cpu to run it here");
    std::fprintf(stderr, "tra-generate: running on %s\n",
                 accelerator->describe().c_str());
#else
    return fail(options->programs.front() +
                ": a step program for an NVIDIA GPU, but this tra-generate "
                "was built without the CUDA runtime (runtime/cuda)");
#endif
  }

  rt::Result<rt::LlamaCheckpoint> ckpt =
      engine::loadCheckpoint(options->checkpoint, sixteenBit || eightBit);
  if (!ckpt)
    return fail(ckpt.message());
  rt::LlamaParams &p = ckpt->params;
  if (options->maxSeqLen > p.maxSeqLen)
    return fail("--max-seq-len " + std::to_string(options->maxSeqLen) +
                " exceeds the model's seq_len " + std::to_string(p.maxSeqLen));
  if (options->maxSeqLen > 0)
    p.maxSeqLen = options->maxSeqLen;
  for (int64_t id : config.prompt)
    if (id >= p.vocabSize)
      return fail("--prompt-ids: " + std::to_string(id) +
                  " is not a token id in [0, " + std::to_string(p.vocabSize) +
                  ")");
  if (config.steps > p.maxSeqLen)
    return fail("--steps " + std::to_string(config.steps) +
                " exceeds the KV-cache length " + std::to_string(p.maxSeqLen));
  if (rt::Status valid =
          rt::Sampler::validate(config.temperature, config.topP, config.seed);
      !valid)
    return fail("--temperature / --top-p / --seed: " + valid.message());

  int64_t threads = options->threads > 0 ? options->threads : programThreads;
  engine::LocalModel model(*ckpt, accelerator ? 1 : threads, accelerator);
  model.allRows = !config.logitsOut.empty();
  for (std::unique_ptr<exec::ProgramLibrary> &library : libraries)
    if (rt::Status status = model.addProgram(std::move(library)); !status)
      return fail(status.message());
  if (!model.hasProgram(1))
    return fail("no step program of 1 token (decoding) among the --program "
                "libraries");

  std::optional<rt::Tokenizer> tokenizer;
  if (!options->tokenizer.empty()) {
    rt::Result<rt::Tokenizer> tok = rt::Tokenizer::open(options->tokenizer);
    if (!tok)
      return fail(tok.message());
    if (tok->size() != p.vocabSize)
      return fail(options->tokenizer + ": vocabulary of " +
                  std::to_string(tok->size()) + " pieces, but " +
                  options->checkpoint + " has vocab_size " +
                  std::to_string(p.vocabSize));
    tokenizer = std::move(*tok);
    config.tokenizer = &*tokenizer;
  }
  config.vocabSize = p.vocabSize;
  // The prompt runs in steps of the longest program (padded where the
  // prompt is shorter; StepChunks.h), one token per step if there is only
  // the decoding program.
  std::vector<int64_t> lengths = model.programLengths();
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  config.oneStepPrefill = config.prompt.size() == 1 || longest > 1;
  config.prefillChunk = longest;
  config.how = std::string("compiled step programs, in process") +
               (accelerator ? ", on the GPU" : "") +
               (eightBit     ? ", Q8_0 weights 8-bit"
                : sixteenBit ? ", 16-bit weights"
                             : "");
  config.engine = "compiled";
  auto step = [&](const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits) {
    return model.step(tokens, pos, n, logits);
  };
  if (rt::Status status = engine::generate(config, step); !status)
    return fail(status.message());
  return 0;
}
