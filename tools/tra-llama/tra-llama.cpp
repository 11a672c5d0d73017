//===- tra-llama.cpp - Build, inspect and run LLaMA models ----------------===//
//
//   tra-llama emit --checkpoint MODEL.bin [--seq N] [-o model.mlir]
//   tra-llama run  --checkpoint MODEL.bin [--steps N] [--prompt-ids 1,2,3]
//                  [--tokenizer TOK.bin --prompt TEXT]
//                  [--print-ids] [--logits-out FILE.npy]
//                  [--hw local|FILE.json] [--num-threads N] [--prefill=false]
//                  [--prefill-chunk N]
//                  [--cache-dir DIR | --no-cache] [--bench-json FILE]
//                  [--temperature T] [--top-p P] [--seed S]
//                  [--emulate-on-cpu]
//   tra-llama tokenize --tokenizer TOK.bin TEXT
//   tra-llama reshard --checkpoint PATH --hw FILE.json -o DIR
//                     [--dtype f32|f16|bf16|keep] [--quiet]   (Reshard.h)
//
// `emit` writes the model-level tra IR of one step of the model (built from
// the checkpoint's hyper-parameters) so it can be inspected or compiled.
// `run` generates from the prompt (default: BOS), greedily or sampling as
// llama2.c does, in the engine's generation loop (tra/Engine/Generate.h):
// the prompt runs as one step of all its tokens (prefill), then one token
// per step. With --engine=compiled (default) and one device, @forward is
// compiled for two step lengths, 1 token (decoding) and a prefill chunk
// (--prefill-chunk, 128 tokens by default: prompts of any length run in
// steps of it, the last padded; tra/Engine/StepChunks.h), into shared
// libraries (cached by a hash of the model IR, the hardware and the
// compiler, so a new prompt length compiles nothing) that the engine
// (tra/Engine/LocalModel.h) loads into this process; the weights and KV
// caches stay in memory. With several devices, the step programs are
// planned for them and the generation runs as one MPI job (Distributed.h,
// tra/Engine/MpiJob.h). --engine=interpreter
// uses the reference interpreter.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Options.h"
#include "Reshard.h"
#include "Train.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Engine/Checkpoint.h"
#include "tra/Engine/Generate.h"
#include "tra/Engine/LocalModel.h"
#include "tra/Engine/StepChunks.h"
#include "tra/Target/LibraryCache.h"
#ifdef TRA_LLAMA_HAVE_CUDA
#include "tra/Cuda/Accelerator.h"
#endif
#include "tra/Frontend/Llama.h"
#include "tra/Frontend/LlamaPrograms.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Interpreter/Interpreter.h"
#include "tra/Runtime/GgufTokenizer.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/Sampler.h"
#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/Tokenizer.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;
namespace rt = ::tra::rt;
namespace engine = ::tra::engine;

static cl::opt<std::string>
    command(cl::Positional, cl::Required,
            cl::desc("<emit|run|tokenize|reshard|train>"),
            cl::cat(getToolCategory()));
static cl::opt<std::string> text(cl::Positional, cl::desc("[text]"),
                                 cl::init(""), cl::cat(getToolCategory()));
static cl::opt<std::string> checkpointPath(
    "checkpoint",
    cl::desc("llama2.c .bin checkpoint, or a Meta checkpoint directory "
             "(params.json + consolidated.NN.pth); on several devices also "
             "Hugging Face LLaMA directories and re-split checkpoints"),
    cl::init(""), cl::cat(getToolCategory()));
static cl::opt<int64_t> maxSeqLen("max-seq-len",
                                  cl::desc("KV-cache length (default: the "
                                           "model's seq_len)"),
                                  cl::init(0), cl::cat(getToolCategory()));
static cl::opt<std::string>
    tokenizerPath("tokenizer",
                  cl::desc("llama2.c tokenizer.bin (SentencePiece vocabulary)"),
                  cl::init(""), cl::cat(getToolCategory()));
static cl::opt<std::string> promptText("prompt",
                                       cl::desc("prompt text (needs "
                                                "--tokenizer)"),
                                       cl::init(""),
                                       cl::cat(getToolCategory()));
static cl::opt<std::string> outputPath("o", cl::desc("output file (emit)"),
                                       cl::init("-"),
                                       cl::cat(getToolCategory()));
static cl::opt<bool> lastRowLogits(
    "last-row-logits",
    cl::desc("emit: the step returns the logits of one row, given by the "
             "input `logits_row` (what `run` compiles unless --logits-out "
             "asks for every row)"),
    cl::cat(getToolCategory()));
static cl::opt<int64_t> seqLen("seq", cl::desc("tokens per step (emit)"),
                               cl::init(1), cl::cat(getToolCategory()));
static cl::opt<int64_t> steps("steps",
                              cl::desc("positions to run, prompt included "
                                       "(default 64)"),
                              cl::init(64), cl::cat(getToolCategory()));
static cl::opt<std::string> promptIds("prompt-ids",
                                      cl::desc("comma-separated prompt token "
                                               "ids (default: 1, BOS)"),
                                      cl::init("1"),
                                      cl::cat(getToolCategory()));
static cl::opt<bool> printIds("print-ids",
                              cl::desc("print the generated token ids"),
                              cl::cat(getToolCategory()));
static cl::opt<std::string> logitsOut("logits-out",
                                      cl::desc("write every step's logits "
                                               "[steps, vocab] to FILE.npy"),
                                      cl::init(""), cl::cat(getToolCategory()));
enum class Engine { Compiled, Interpreter };
static cl::opt<Engine> engineKind(
    "engine", cl::desc("how each step runs"), cl::init(Engine::Compiled),
    cl::values(clEnumValN(Engine::Compiled, "compiled",
                          "compile @forward for the hardware and run it (in "
                          "this process on one device, as one MPI job on "
                          "several)"),
               clEnumValN(Engine::Interpreter, "interpreter",
                          "the reference interpreter")),
    cl::cat(getToolCategory()));
static cl::opt<std::string> hwSpec("hw",
                                   cl::desc("hardware description (local or "
                                            "FILE.json)"),
                                   cl::init("local"),
                                   cl::cat(getToolCategory()));
static cl::opt<int64_t> numThreads(
    "num-threads",
    cl::desc("threads of the compiled model (one device: default the "
             "hardware description's cores; several: per MPI rank, default "
             "this machine's cores shared by the ranks, or with --hostfile "
             "the device's cores)"),
    cl::init(0), cl::cat(getToolCategory()));
static cl::opt<bool> prefill("prefill",
                             cl::desc("run the prompt as one step of all its "
                                      "tokens (default; --prefill=false: one "
                                      "token per step)"),
                             cl::init(true), cl::cat(getToolCategory()));
static cl::opt<int64_t> prefillChunk(
    "prefill-chunk",
    cl::desc("tokens per prefill step of the compiled model (default 128, "
             "at most --max-seq-len): one program runs prompts of any "
             "length, in steps of N tokens, the last padded"),
    cl::init(0), cl::cat(getToolCategory()));
static cl::opt<std::string>
    cacheDirectory("cache-dir",
                   cl::desc("where compiled models are cached (default: "
                            "$XDG_CACHE_HOME/tra or ~/.cache/tra)"),
                   cl::init(""), cl::cat(getToolCategory()));
static cl::opt<bool> emulateOnCpu(
    "emulate-on-cpu",
    cl::desc("run the plan for a --hw file with GPUs with CPU code, one MPI "
             "rank per device, on this machine"),
    cl::cat(getToolCategory()));
enum class WeightDType { Auto, F32, Checkpoint };
static cl::opt<WeightDType> weightDType(
    "weight-dtype",
    cl::desc("the element type of the weights in the model's programs"),
    cl::init(WeightDType::Auto),
    cl::values(
        clEnumValN(WeightDType::Auto, "auto",
                   "the checkpoint's (default): 16-bit weights stay 16-bit "
                   "on GPUs and CPUs, multiplied in mixed precision; a GGUF "
                   "file's Q8_0 weights stay 8-bit in one process"),
        clEnumValN(WeightDType::F32, "f32",
                   "f32: 16-bit and Q8_0 weights are widened once, the "
                   "whole model computes in f32"),
        clEnumValN(WeightDType::Checkpoint, "checkpoint",
                   "the checkpoint's: f16/bf16 weights stay 16-bit; a "
                   "projection rounds its activations to the weight's type "
                   "and accumulates in f32")),
    cl::cat(getToolCategory()));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("compile without reading or writing "
                                      "the cache"),
                             cl::cat(getToolCategory()));
static cl::opt<std::string> hostfile(
    "hostfile",
    cl::desc("multi-device hardware: run the MPI ranks on the hosts of this "
             "Open MPI hostfile (mpirun --hostfile) instead of all on this "
             "machine; tra-llama-worker, the checkpoint and the cache "
             "directory must be at the same paths on every host"),
    cl::init(""), cl::cat(getToolCategory()));
static cl::list<std::string> mpirunArgs(
    "mpirun-arg",
    cl::desc("multi-device hardware: pass ARG to mpirun (repeatable, e.g. "
             "--mpirun-arg=--mca --mpirun-arg=btl_tcp_if_include "
             "--mpirun-arg=eth0)"),
    cl::value_desc("ARG"), cl::cat(getToolCategory()));
static cl::opt<double> stepTimeout(
    "step-timeout",
    cl::desc("multi-device hardware: end the MPI job with an error when a "
             "rank starts no step for this many seconds (a hung rank; "
             "default 0: never)"),
    cl::value_desc("SECONDS"), cl::init(0.0), cl::cat(getToolCategory()));
static cl::opt<std::string> benchJson("bench-json",
                                      cl::desc("write prefill and decode "
                                               "timings to FILE.json"),
                                      cl::init(""), cl::cat(getToolCategory()));

static cl::opt<bool> warmup(
    "warmup",
    cl::desc("before the timed generation, run the prompt and one decoding "
             "step once, untimed (benchmarks: steady-state timings; the "
             "warm-up's prefill time is reported too)"),
    cl::cat(getToolCategory()));

static cl::opt<double> temperature(
    "temperature",
    cl::desc("sampling temperature (default 0: greedy, the most likely "
             "token)"),
    cl::init(0.0), cl::cat(getToolCategory()));
static cl::opt<double>
    topP("top-p",
         cl::desc("nucleus sampling: sample from the most likely tokens "
                  "whose probabilities add up to P (default 0.9, as "
                  "llama2.c; 0 or 1: from all tokens)"),
         cl::init(0.9), cl::cat(getToolCategory()));
static cl::opt<uint64_t>
    sampleSeed("seed",
               cl::desc("seed of the sampler's random generator (default: "
                        "from the clock, printed)"),
               cl::init(0), cl::cat(getToolCategory()));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tra-llama") << message << "\n";
  return 1;
}

/// Whether the model's programs read 16-bit weights 16-bit and, in one
/// process, Q8_0 weights as 8-bit values and scales (--weight-dtype). On a
/// CPU too since the runtime's kernels widen them in registers (decode) or
/// while packing (prefill): a half (a quarter) of the memory and of the
/// bytes per token of f32 copies.
static bool keepStoredTypes() { return weightDType != WeightDType::F32; }

/// The weights that the model's programs read in a 16-bit checkpoint dtype
/// or as Q8_0 values (i8) and scales (the checkpoint was loaded keeping its
/// stored types).
static LlamaWeightDTypes weightDTypesOf(const rt::LlamaCheckpoint &ckpt) {
  return engine::storedWeightDTypes(ckpt);
}

/// The interpreter tensor of weight `t`, of element type f32 or, where
/// `dtypes` says so, the checkpoint's 16-bit type (the values are exact).
static InterpTensor weightTensor(MLIRContext &ctx, const std::string &name,
                                 const rt::HostTensor &t,
                                 const LlamaWeightDTypes &dtypes) {
  SmallVector<int64_t> shape(t.shape().begin(), t.shape().end());
  Type type = Float32Type::get(&ctx);
  if (auto it = dtypes.find(name); it != dtypes.end())
    type = it->second == rt::DType::BF16 ? Type(BFloat16Type::get(&ctx))
           : it->second == rt::DType::I8 ? Type(IntegerType::get(&ctx, 8))
                                         : Type(Float16Type::get(&ctx));
  InterpTensor r(type, shape);
  for (int64_t i = 0; i < r.getNumElements(); ++i)
    r.data[i] = t.loadAsDouble(i);
  return r;
}

static int emit(MLIRContext &ctx, const rt::LlamaCheckpoint &ckpt) {
  if (seqLen < 1 || seqLen > ckpt.params.maxSeqLen)
    return fail("--seq " + llvm::Twine(int64_t(seqLen)) + " must be in [1, " +
                llvm::Twine(ckpt.params.maxSeqLen) + "]");
  OwningOpRef<ModuleOp> module = buildLlamaModule(
      &ctx, ckpt.params, seqLen, weightDTypesOf(ckpt), lastRowLogits);
  if (failed(verify(*module)))
    return fail("internal error: the generated model does not verify");
  std::string error;
  auto out = openOutputFile(outputPath, &error);
  if (!out)
    return fail(outputPath + ": " + error);
  module->print(out->os());
  out->keep();
  return 0;
}

/// Compiles @forward over `seq` tokens per step for `p` (or loads it from
/// the library cache) and adds it to the engine's `model`; adds the
/// compilation to `config`.
static llvm::Error
addCompiledProgram(MLIRContext &ctx, ::tra::engine::LocalModel &model,
                   int64_t seq, int64_t threads, const std::string &cacheDir,
                   const std::string &keyExtra,
                   ::tra::engine::GenerationConfig &config, bool cuda,
                   const LlamaWeightDTypes &weightDTypes,
                   const ::tra::hw::HardwareDescription &hardware) {
  std::string notes;
  llvm::raw_string_ostream notesStream(notes);
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<CompiledProgram> compiled =
      compileLlamaStep(ctx, model.params(), seq, threads, cacheDir, keyExtra,
                       notesStream, cuda, weightDTypes,
                       /*lastRowLogits=*/logitsOut.empty(), &hardware);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (llvm::StringRef line : llvm::split(llvm::StringRef(notes).rtrim(), '\n'))
    if (!line.empty())
      llvm::errs() << "tra-llama: " << line << "\n";
  if (!compiled)
    return compiled.takeError();
  llvm::StringRef perStep = seq == 1 ? " token per step" : " tokens per step";
  if (compiled->fromCache)
    llvm::errs() << "tra-llama: loaded cached @forward (" << seq << perStep
                 << ") in " << llvm::format("%.2f", seconds) << " s from "
                 << compiled->cachePath << "\n";
  else
    llvm::errs() << "tra-llama: compiled @forward in "
                 << llvm::format("%.2f", compiled->compileSeconds) << " s ("
                 << seq << perStep << ")\n";
  config.compileSeconds += compiled->compileSeconds;
  config.compiledNow |= !compiled->fromCache;
  if (rt::Status status = model.addProgram(std::move(compiled->program));
      !status)
    return llvm::createStringError(status.message());
  return llvm::Error::success();
}

static llvm::Error applyMaxSeqLen(rt::LlamaParams &p);

/// Fills what every engine's generation shares (prompt, steps, sampling,
/// outputs) from the command line, checked against the model's `p`;
/// fails with what is wrong.
static llvm::Error prepareGeneration(const rt::LlamaParams &p,
                                     std::optional<rt::Tokenizer> &tokenizer,
                                     engine::GenerationConfig &config) {
  // A GGUF checkpoint's own SentencePiece vocabulary, unless --tokenizer.
  if (tokenizerPath.empty() && rt::hasGgufVocabulary(checkpointPath))
    tokenizerPath = checkpointPath;
  if (!tokenizerPath.empty()) {
    rt::Result<rt::Tokenizer> tok = rt::Tokenizer::open(tokenizerPath);
    if (!tok)
      return llvm::createStringError(tok.message());
    if (tok->size() != p.vocabSize)
      return llvm::createStringError(
          tokenizerPath + ": vocabulary of " + std::to_string(tok->size()) +
          " pieces, but " + checkpointPath + " has vocab_size " +
          std::to_string(p.vocabSize));
    tokenizer = std::move(*tok);
    config.tokenizer = &*tokenizer;
  }
  std::vector<int64_t> &prompt = config.prompt;
  if (!promptText.empty()) {
    if (!tokenizer)
      return llvm::createStringError("--prompt needs --tokenizer");
    prompt = tokenizer->encode(promptText);
  } else {
    for (llvm::StringRef part : llvm::split(llvm::StringRef(promptIds), ',')) {
      int64_t id;
      if (part.trim().getAsInteger(10, id) || id < 0 || id >= p.vocabSize)
        return llvm::createStringError("--prompt-ids: '" + part.str() +
                                       "' is not a token id in [0, " +
                                       std::to_string(p.vocabSize) + ")");
      prompt.push_back(id);
    }
  }
  if (steps < int64_t(prompt.size()) || steps > p.maxSeqLen)
    return llvm::createStringError(
        "--steps " + std::to_string(steps) + " must be in [" +
        std::to_string(prompt.size()) + ", " + std::to_string(p.maxSeqLen) +
        "] (prompt length, model seq_len)");
  if (numThreads < 0)
    return llvm::createStringError(
        "--num-threads " + std::to_string(numThreads) +
        " must be positive (0: the hardware description's cores)");
  config.steps = steps;
  config.vocabSize = p.vocabSize;
  // The prompt runs as one step of all its tokens (prefill) unless
  // --prefill=false; decoding runs one token per step.
  config.oneStepPrefill = prefill || prompt.size() == 1;
  if (prefillChunk < 0)
    return llvm::createStringError(
        "--prefill-chunk " + std::to_string(prefillChunk) +
        " must be positive (0, the default: " +
        std::to_string(engine::kDefaultPrefillChunk) + " tokens)");
  config.prefillChunk = engine::prefillChunkLength(prefillChunk, p.maxSeqLen);
  config.temperature = temperature;
  config.topP = topP;
  // Without --seed a sampled run takes its seed from the clock (as
  // llama2.c does) and says which, so that it can be repeated.
  config.seed = sampleSeed;
  if (sampleSeed.getNumOccurrences() == 0 && temperature > 0) {
    config.seed =
        uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) |
        1;
    llvm::errs() << "tra-llama: sampling with --seed " << config.seed << "\n";
  }
  if (rt::Status valid =
          rt::Sampler::validate(config.temperature, config.topP, config.seed);
      !valid)
    return llvm::createStringError(
        llvm::formatv("--temperature {0} --top-p {1}: {2}",
                      llvm::format("%g", config.temperature),
                      llvm::format("%g", config.topP), valid.message())
            .str());
  config.printIds = printIds;
  config.logitsOut = logitsOut;
  config.benchJson = benchJson;
  config.warmup = warmup;
  return llvm::Error::success();
}

/// Returns the cache directory of compiled programs ("" for none).
static std::string libraryCacheDirectory() {
  if (noCache)
    return "";
  std::string cacheDir = cacheDirectory.empty()
                             ? getDefaultLibraryCacheDirectory()
                             : cacheDirectory.getValue();
  if (cacheDir.empty())
    llvm::errs() << "tra-llama: no cache directory (neither "
                    "XDG_CACHE_HOME nor HOME is set); compiling without "
                    "the cache\n";
  return cacheDir;
}

/// This machine's GPU (GPU 0), opened, for a run on `hw`'s GPUs; the error
/// names what is missing and --emulate-on-cpu.
static llvm::Expected<const ::tra::exec::Accelerator *>
openGpu(const ::tra::hw::HardwareDescription &hw) {
  std::string what = hw.numDevices() == 1
                         ? hw.getName().str() + " is a GPU"
                         : hw.getName().str() + " has " +
                               std::to_string(hw.numDevices()) + " GPUs";
#ifdef TRA_LLAMA_HAVE_CUDA
  const ::tra::exec::Accelerator *accelerator = &::tra::cuda::getAccelerator();
  if (rt::Status status = accelerator->initialize(); !status)
    return llvm::createStringError(
        what + "; running on " + (hw.numDevices() == 1 ? "it" : "them") +
        " needs an NVIDIA GPU with a CUDA 13 driver: " + status.message() +
        "; --emulate-on-cpu runs its plan with CPU code on this machine");
  return accelerator;
#else
  return llvm::createStringError(
      what + ", but this tra-llama was built without the CUDA runtime "
             "(runtime/cuda needs the CUDA toolkit's headers); "
             "--emulate-on-cpu runs its plan with CPU code");
#endif
}

/// `run` on hardware with several devices: one MPI job for the whole
/// generation (Distributed.h). Only the checkpoint's parameters are read
/// here; every rank reads its own tiles of the weights.
static int runDistributed(MLIRContext &ctx,
                          const ::tra::hw::HardwareDescription &hw) {
  rt::Result<std::unique_ptr<rt::TensorSource>> source =
      rt::openTensorSource(checkpointPath);
  if (!source)
    return fail(source.message());
  if (!(*source)->llamaParams())
    return fail(checkpointPath + ": a " + (*source)->format() +
                " checkpoint that does not state the LLaMA model's "
                "parameters");
  rt::LlamaParams p = *(*source)->llamaParams();
  if (llvm::Error e = applyMaxSeqLen(p))
    return fail(llvm::toString(std::move(e)));
  // Every weight must be there with its shape before the ranks start; the
  // ranks read 16-bit weights 16-bit (--weight-dtype).
  bool gpus = false;
  for (unsigned d = 0; d < hw.numDevices(); ++d)
    gpus |= hw.getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
  bool sixteenBit = keepStoredTypes();
  // All ranks on this machine: its GPU driver is checked before anything
  // is compiled (with a hostfile the GPUs are the hosts', which the ranks
  // check).
  if (gpus && !emulateOnCpu && hostfile.empty())
    if (llvm::Expected<const ::tra::exec::Accelerator *> gpu = openGpu(hw);
        !gpu)
      return fail(llvm::toString(gpu.takeError()));
  LlamaWeightDTypes dtypes;
  for (auto &[name, shape] : rt::llamaWeightShapes(p)) {
    const rt::TensorInfo *t = (*source)->find(name);
    if (!t)
      return fail(checkpointPath + ": no tensor '" + name + "'");
    if (t->shape != shape)
      return fail(checkpointPath + ": tensor '" + name + "' is " +
                  rt::formatShape(t->shape) + ", the model's parameters say " +
                  rt::formatShape(shape));
    if (sixteenBit &&
        (t->dtype == rt::DType::F16 || t->dtype == rt::DType::BF16))
      dtypes[name] = t->dtype;
  }
  std::optional<rt::Tokenizer> tokenizer;
  engine::GenerationConfig config;
  if (llvm::Error e = prepareGeneration(p, tokenizer, config))
    return fail(llvm::toString(std::move(e)));
  // Without a hostfile all ranks run on this machine: by default they share
  // its cores. On the hosts of a hostfile each rank gets its device's cores.
  if (!hostfile.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(hostfile);
    if (!file)
      return fail("--hostfile " + hostfile +
                  ": cannot read the file: " + file.getError().message());
  }
  int64_t ranks = hw.numDevices();
  int64_t threads =
      numThreads > 0 ? int64_t(numThreads)
      : !hostfile.empty()
          ? std::max<int64_t>(1, hw.getDevice(0).cores)
          : std::max<int64_t>(
                1,
                std::min<int64_t>(hw.getDevice(0).cores,
                                  std::thread::hardware_concurrency() / ranks));
  DistributedModel model;
  if (stepTimeout < 0)
    return fail("--step-timeout " + std::to_string(stepTimeout.getValue()) +
                ": must be 0 (never) or positive");
  model.hostfile = hostfile;
  model.stepTimeout = stepTimeout;
  model.mpirunArgs.assign(mpirunArgs.begin(), mpirunArgs.end());
  if (llvm::Error e = model.init(p, hw, threads, emulateOnCpu,
                                 libraryCacheDirectory(), std::move(dtypes)))
    return fail(llvm::toString(std::move(e)));
  // Decoding and the prefill chunk: compiled once, whatever the prompt.
  SmallVector<int64_t> stepLengths = {1};
  if (config.oneStepPrefill && config.prompt.size() > 1 &&
      config.prefillChunk > 1)
    stepLengths.push_back(config.prefillChunk);
  for (int64_t seq : stepLengths)
    if (llvm::Error e = model.addProgram(ctx, seq, logitsOut.empty()))
      return fail(llvm::toString(std::move(e)));
  config.engine = "distributed";
  config.compileSeconds = model.compileSeconds;
  config.compiledNow = model.anyCompiled;
  if (llvm::Error e = model.generate(config, checkpointPath, tokenizerPath))
    return fail(llvm::toString(std::move(e)));
  return 0;
}

/// `run` on one device: the compiled model in this process, or the
/// reference interpreter. With `cuda` (a one-GPU --hw, compiled, not
/// emulated) the steps are GPU programs, the weights and caches on the
/// device.
static int run(MLIRContext &ctx, const rt::LlamaCheckpoint &ckpt,
               const ::tra::hw::HardwareDescription &hw, bool cuda) {
  const rt::LlamaParams &p = ckpt.params;
  std::optional<rt::Tokenizer> tokenizer;
  engine::GenerationConfig config;
  if (llvm::Error e = prepareGeneration(p, tokenizer, config))
    return fail(llvm::toString(std::move(e)));
  const int64_t promptLen = int64_t(config.prompt.size());
  // Compiled: decoding and the prefill chunk, whatever the prompt's length.
  // The interpreter compiles nothing: it runs the prompt's length exactly.
  SmallVector<int64_t> stepLengths = {1};
  if (engineKind == Engine::Interpreter)
    config.prefillChunk = promptLen;
  if (config.oneStepPrefill && promptLen > 1 && config.prefillChunk > 1)
    stepLengths.push_back(config.prefillChunk);

  // The interpreter runs @forward of each step length on interpreter
  // tensors: the arguments in the order of @forward (tokens set per step).
  std::map<int64_t, OwningOpRef<ModuleOp>> modules;
  SmallVector<InterpTensor> args;
  LlamaWeightDTypes dtypes = weightDTypesOf(ckpt);
  if (engineKind == Engine::Interpreter) {
    for (int64_t seq : stepLengths) {
      modules[seq] = buildLlamaModule(&ctx, p, seq, dtypes);
      if (failed(verify(*modules[seq])))
        return fail("internal error: the generated model does not verify");
    }
    Type f32 = Float32Type::get(&ctx), i64 = IntegerType::get(&ctx, 64);
    std::vector<float> cosTable, sinTable;
    rt::computeRopeTables(p, cosTable, sinTable);
    args.emplace_back(i64, ArrayRef<int64_t>{1});
    args.emplace_back(i64, ArrayRef<int64_t>{});
    InterpTensor fc(f32, {p.maxSeqLen, p.headDim() / 2});
    InterpTensor fs = fc;
    fc.data.assign(cosTable.begin(), cosTable.end());
    fs.data.assign(sinTable.begin(), sinTable.end());
    args.push_back(std::move(fc));
    args.push_back(std::move(fs));
    for (int64_t l = 0; l < 2 * p.nLayers; ++l)
      args.emplace_back(
          f32, ArrayRef<int64_t>{p.maxSeqLen, p.nKvHeads, p.headDim()});
  }
  for (auto &[name, shape] : rt::llamaWeightShapes(p)) {
    const rt::HostTensor *t = ckpt.find(name);
    if (!t)
      return fail(checkpointPath + ": no tensor '" + name + "'");
    // Only the interpreter needs the weights as interpreter tensors.
    if (engineKind == Engine::Interpreter)
      args.push_back(weightTensor(ctx, name, *t, dtypes));
  }
  // The scales of Q8_0 weights follow the weights (buildLlamaModule).
  if (engineKind == Engine::Interpreter)
    for (auto &[name, shape] : rt::llamaWeightShapes(p))
      if (const rt::HostTensor *t = ckpt.find(name);
          t->dtype() == rt::DType::I8) {
        std::string scales = rt::q8ScalesName(name);
        args.push_back(weightTensor(ctx, scales, *ckpt.find(scales), dtypes));
      }

  std::unique_ptr<::tra::engine::LocalModel> compiled;
  if (engineKind == Engine::Compiled) {
    int64_t threads =
        numThreads > 0 ? int64_t(numThreads) : int64_t(hw.getDevice(0).cores);
    std::string cacheDir = libraryCacheDirectory();
    const ::tra::exec::Accelerator *accelerator = nullptr;
    if (cuda) {
      llvm::Expected<const ::tra::exec::Accelerator *> gpu = openGpu(hw);
      if (!gpu)
        return fail(llvm::toString(gpu.takeError()));
      accelerator = *gpu;
      llvm::errs() << "tra-llama: running on " << accelerator->describe()
                   << "\n";
      threads = 1;
    }
    compiled =
        std::make_unique<::tra::engine::LocalModel>(ckpt, threads, accelerator);
    compiled->allRows = !logitsOut.empty();
    config.how =
        cuda ? "compiled, in process, on the GPU" : "compiled, in process";
    config.engine = "compiled";
    for (int64_t seq : stepLengths)
      if (llvm::Error e =
              addCompiledProgram(ctx, *compiled, seq, threads, cacheDir,
                                 hw.toJSONText(), config, cuda, dtypes, hw))
        return fail(llvm::toString(std::move(e)));
  } else {
    config.how = "reference interpreter";
    config.engine = "interpreter";
  }
  engine::StoredWeightKinds kinds = engine::storedWeightKinds(dtypes);
  if (kinds.q8_0)
    config.how += ", Q8_0 weights 8-bit";
  if (kinds.sixteenBit)
    config.how += ", 16-bit weights";

  // Runs one step over tokens[pos, pos + n); fills `logits` (n rows).
  auto step = [&](const std::vector<int64_t> &tokens, int64_t pos, int64_t n,
                  std::vector<double> &logits) -> rt::Status {
    if (compiled)
      return compiled->step(tokens, pos, n, logits);
    ArrayRef<int64_t> stepTokens = ArrayRef(tokens).slice(pos, n);
    func::FuncOp forward = modules[n]->lookupSymbol<func::FuncOp>("forward");
    args[0] = InterpTensor(IntegerType::get(&ctx, 64), ArrayRef<int64_t>{n});
    for (int64_t i = 0; i < n; ++i)
      args[0].data[i] = double(stepTokens[i]);
    args[1].data[0] = double(pos);
    FailureOr<SmallVector<InterpTensor>> results = interpret(forward, args);
    if (failed(results))
      return rt::Error{"step at position " + std::to_string(pos) + " failed"};
    logits = (*results)[0].data;
    for (int64_t l = 0; l < 2 * p.nLayers; ++l)
      args[4 + l] = std::move((*results)[1 + l]);
    return rt::Status::success();
  };
  if (rt::Status status = ::tra::engine::generate(config, step); !status)
    return fail(status.message());
  // What the steps moved between the memory tiers and the device (a plan
  // that streams weights), for comparison with the plan's estimate.
  if (compiled)
    for (const std::string &line : compiled->tierFetchReport())
      llvm::errs() << "tra-llama: " << line << "\n";
  return 0;
}

static cl::opt<bool> decodeIds("decode",
                               cl::desc("tokenize: TEXT is token ids to "
                                        "decode"),
                               cl::cat(getToolCategory()));

static int tokenize() {
  if (tokenizerPath.empty())
    return fail("tokenize needs --tokenizer");
  rt::Result<rt::Tokenizer> tok = rt::Tokenizer::open(tokenizerPath);
  if (!tok)
    return fail(tok.message());
  if (decodeIds) {
    int64_t previous = -1;
    for (llvm::StringRef part : llvm::split(llvm::StringRef(text), ' ')) {
      int64_t id;
      if (part.empty())
        continue;
      if (part.getAsInteger(10, id) || id < 0 || id >= tok->size())
        return fail("'" + part + "' is not a token id in [0, " +
                    llvm::Twine(tok->size()) + ")");
      llvm::outs() << tok->decode(previous, id);
      previous = id;
    }
    llvm::outs() << "\n";
    return 0;
  }
  std::vector<int64_t> ids = tok->encode(text);
  for (size_t i = 0; i < ids.size(); ++i)
    llvm::outs() << (i ? " " : "") << ids[i];
  llvm::outs() << "\n";
  return 0;
}

/// Applies --max-seq-len to `p`.
static llvm::Error applyMaxSeqLen(rt::LlamaParams &p) {
  if (maxSeqLen < 0)
    return llvm::createStringError(
        "--max-seq-len " + std::to_string(maxSeqLen) +
        " must be positive (0, the default: the model's seq_len)");
  if (maxSeqLen == 0)
    return llvm::Error::success();
  if (maxSeqLen > p.maxSeqLen)
    return llvm::createStringError(
        "--max-seq-len " + std::to_string(maxSeqLen) +
        " exceeds the model's seq_len " + std::to_string(p.maxSeqLen));
  p.maxSeqLen = maxSeqLen;
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(getToolCategory());
  cl::ParseCommandLineOptions(argc, argv, "tra LLaMA front end\n");
  if (rejectForeignOptions())
    return 1;
  if (command == "tokenize")
    return tokenize();
  if (command == "reshard")
    return runReshard({checkpointPath, hwSpec, outputPath, seqLen, maxSeqLen});
  if (command == "train")
    return runTrain(
        {checkpointPath, hwSpec, outputPath, tokenizerPath,
         libraryCacheDirectory(), steps, numThreads, uint64_t(sampleSeed),
         emulateOnCpu, hostfile,
         std::vector<std::string>(mpirunArgs.begin(), mpirunArgs.end()),
         stepTimeout});
  if (command != "emit" && command != "run")
    return fail("unknown command '" + command +
                "' (expected emit, run, tokenize, reshard or train)");
  if (checkpointPath.empty())
    return fail(command + " needs --checkpoint");
  MLIRContext context;
  std::optional<::tra::hw::HardwareDescription> hw;
  if (command == "run") {
    // The hardware the run is for: compiled for one device, the model runs
    // in this process, for several as one MPI job (the interpreter runs
    // whole tensors in this process whatever the hardware).
    auto loaded = ::tra::hw::loadHardware(hwSpec);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    hw = std::move(*loaded);
    llvm::errs() << "tra-llama: hardware: " << hw->summary() << "\n";
    if (hw->numDevices() != 1 && engineKind == Engine::Compiled)
      return runDistributed(context, *hw);
    if (!hostfile.empty() || !mpirunArgs.empty() || stepTimeout != 0)
      return fail("--hostfile, --mpirun-arg and --step-timeout are for "
                  "compiled runs on hardware with several devices (one MPI "
                  "rank each); " +
                  hw->getName().str() + " runs in this process");
  }
  // The steps run on a GPU for a one-GPU --hw (compiled, not emulated).
  bool onGpu = command == "run" && engineKind == Engine::Compiled &&
               hw->getDevice(0).kind == ::tra::hw::DeviceKind::GPU &&
               !emulateOnCpu;
  rt::Result<rt::LlamaCheckpoint> ckpt =
      engine::loadCheckpoint(checkpointPath, keepStoredTypes());
  if (!ckpt)
    return fail(ckpt.message());
  if (llvm::Error e = applyMaxSeqLen(ckpt->params))
    return fail(llvm::toString(std::move(e)));
  return command == "emit" ? emit(context, *ckpt)
                           : run(context, *ckpt, *hw, onGpu);
}
