//===- tra-llama.cpp - Build, inspect and run LLaMA models ----------------===//
//
//   tra-llama emit --checkpoint MODEL.bin [--seq N] [-o model.mlir]
//   tra-llama run  --checkpoint MODEL.bin [--steps N] [--prompt-ids 1,2,3]
//                  [--tokenizer TOK.bin --prompt TEXT]
//                  [--print-ids] [--logits-out FILE.npy]
//                  [--hw local|FILE.json] [--num-threads N] [--prefill=false]
//                  [--cache-dir DIR | --no-cache] [--bench-json FILE]
//   tra-llama tokenize --tokenizer TOK.bin TEXT
//   tra-llama reshard --checkpoint PATH --hw FILE.json -o DIR
//                     [--dtype f32|f16|bf16|keep] [--quiet]   (Reshard.h)
//
// `emit` writes the model-level tra IR of one step of the model (built from
// the checkpoint's hyper-parameters) so it can be inspected or compiled.
// `run` generates greedily (temperature 0) from the prompt (default: BOS):
// the prompt runs as one step of all its tokens (prefill), then one token
// per step. With --engine=compiled (default) @forward is compiled for each
// step length into a shared library (cached by a hash of the model IR, the
// hardware and the compiler) that is loaded into this process; the weights
// and KV caches stay in memory. --engine=interpreter uses the reference
// interpreter.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Reshard.h"
#include "tra/Conversion/Executable/Executable.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Frontend/Llama.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Interpreter/Interpreter.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/Tokenizer.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <chrono>
#include <map>

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;
namespace rt = ::tra::rt;

static cl::opt<std::string> command(cl::Positional, cl::Required,
                                    cl::desc("<emit|run|tokenize>"));
static cl::opt<std::string> text(cl::Positional, cl::desc("[text]"),
                                 cl::init(""));
static cl::opt<std::string> checkpointPath(
    "checkpoint",
    cl::desc("llama2.c .bin checkpoint, or a Meta checkpoint directory "
             "(params.json + consolidated.NN.pth)"),
    cl::init(""));
static cl::opt<int64_t> maxSeqLen("max-seq-len",
                                  cl::desc("KV-cache length (default: the "
                                           "model's seq_len)"),
                                  cl::init(0));
static cl::opt<std::string>
    tokenizerPath("tokenizer",
                  cl::desc("llama2.c tokenizer.bin (SentencePiece vocabulary)"),
                  cl::init(""));
static cl::opt<std::string> promptText("prompt",
                                       cl::desc("prompt text (needs "
                                                "--tokenizer)"),
                                       cl::init(""));
static cl::opt<std::string> outputPath("o", cl::desc("output file (emit)"),
                                       cl::init("-"));
static cl::opt<int64_t> seqLen("seq", cl::desc("tokens per step (emit)"),
                               cl::init(1));
static cl::opt<int64_t> steps("steps",
                              cl::desc("positions to run, prompt included "
                                       "(default 64)"),
                              cl::init(64));
static cl::opt<std::string> promptIds("prompt-ids",
                                      cl::desc("comma-separated prompt token "
                                               "ids (default: 1, BOS)"),
                                      cl::init("1"));
static cl::opt<bool> printIds("print-ids",
                              cl::desc("print the generated token ids"));
static cl::opt<std::string> logitsOut("logits-out",
                                      cl::desc("write every step's logits "
                                               "[steps, vocab] to FILE.npy"),
                                      cl::init(""));
enum class Engine { Compiled, Interpreter };
static cl::opt<Engine> engine(
    "engine", cl::desc("how each step runs"), cl::init(Engine::Compiled),
    cl::values(clEnumValN(Engine::Compiled, "compiled",
                          "compile @forward for the hardware (one device) "
                          "and run the native executable"),
               clEnumValN(Engine::Interpreter, "interpreter",
                          "the reference interpreter")));
static cl::opt<std::string> hwSpec("hw",
                                   cl::desc("hardware description (local or "
                                            "FILE.json)"),
                                   cl::init("local"));
static cl::opt<int64_t> numThreads("num-threads",
                                   cl::desc("BLAS threads of the compiled "
                                            "model (default: the hardware "
                                            "description's cores)"),
                                   cl::init(0));
static cl::opt<bool> prefill("prefill",
                             cl::desc("run the prompt as one step of all its "
                                      "tokens (default; --prefill=false: one "
                                      "token per step)"),
                             cl::init(true));
static cl::opt<std::string>
    cacheDirectory("cache-dir",
                   cl::desc("where compiled models are cached (default: "
                            "$XDG_CACHE_HOME/tra or ~/.cache/tra)"),
                   cl::init(""));
static cl::opt<bool> emulateOnCpu(
    "emulate-on-cpu",
    cl::desc("run the plan for a --hw file with GPUs with CPU code, one MPI "
             "rank per device, on this machine"));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("compile without reading or writing "
                                      "the cache"));
static cl::opt<std::string> benchJson("bench-json",
                                      cl::desc("write prefill and decode "
                                               "timings to FILE.json"),
                                      cl::init(""));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tra-llama") << message << "\n";
  return 1;
}

static InterpTensor f32Tensor(MLIRContext &ctx, const rt::HostTensor &t) {
  SmallVector<int64_t> shape(t.shape().begin(), t.shape().end());
  InterpTensor r(Float32Type::get(&ctx), shape);
  for (int64_t i = 0; i < r.getNumElements(); ++i)
    r.data[i] = t.loadAsDouble(i);
  return r;
}

static int emit(MLIRContext &ctx, const rt::LlamaCheckpoint &ckpt) {
  if (seqLen < 1 || seqLen > ckpt.params.maxSeqLen)
    return fail("--seq " + llvm::Twine(int64_t(seqLen)) + " must be in [1, " +
                llvm::Twine(ckpt.params.maxSeqLen) + "]");
  OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, ckpt.params, seqLen);
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

namespace {
/// Runs @forward compiled into shared libraries loaded into this process:
/// one program per step length (1 token for decoding; the prompt length for
/// prefill). The weights are passed where the checkpoint holds them, the
/// rotary tables and KV caches stay in memory. The caches are
/// double-buffered: a step reads one set and writes the other (the program
/// returns the updated caches), then the two sets swap.
class CompiledModel {
public:
  /// Prepares the buffers; returns "" or an error message.
  std::string init(const rt::LlamaCheckpoint &ckpt, int64_t numThreads) {
    p = ckpt.params;
    threads = numThreads;
    computeRopeTables(p, cosTable, sinTable);
    for (auto &[name, t] : ckpt.weights) {
      if (t.dtype() == rt::DType::F32) {
        weights[name] = {&t, t.data()};
        continue;
      }
      // Not f32 (a Meta checkpoint in f16/bf16): convert once.
      std::vector<float> &copy = converted[name];
      copy.resize(t.numElements());
      for (int64_t i = 0; i < t.numElements(); ++i)
        copy[i] = float(t.loadAsDouble(i));
      weights[name] = {&t, copy.data()};
    }
    size_t cacheElements = size_t(p.maxSeqLen * p.nKvHeads * p.headDim());
    for (auto &set : caches) {
      set.resize(2 * p.nLayers);
      for (std::vector<float> &cache : set)
        cache.assign(cacheElements, 0.0f);
    }
    return "";
  }

  /// Compiles (or loads from the cache) @forward over `seq` tokens per
  /// step; returns "" or an error message.
  std::string addProgram(MLIRContext &ctx, int64_t seq,
                         const std::string &cacheDir,
                         const std::string &keyExtra) {
    OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, p, seq);
    if (failed(verify(*module)))
      return "internal error: the generated model does not verify";
    CodegenOptions options;
    options.entry = "forward";
    options.numThreads = threads;
    options.profile = false;
    std::string notes;
    llvm::raw_string_ostream notesStream(notes);
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<CompiledProgram> compiled =
        loadOrCompileProgram(*module, options, cacheDir, keyExtra, notesStream);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    for (llvm::StringRef line : llvm::split(llvm::StringRef(notes).rtrim(), '\n'))
      if (!line.empty())
        llvm::errs() << "tra-llama: " << line << "\n";
    if (!compiled)
      return llvm::toString(compiled.takeError());
    llvm::StringRef perStep = seq == 1 ? " token per step" : " tokens per step";
    if (compiled->fromCache)
      llvm::errs() << "tra-llama: loaded cached @forward (" << seq << perStep
                   << ") in " << llvm::format("%.2f", seconds) << " s from "
                   << compiled->cachePath << "\n";
    else
      llvm::errs() << "tra-llama: compiled @forward in "
                   << llvm::format("%.2f", compiled->compileSeconds) << " s ("
                   << seq << perStep << ")\n";
    compileSeconds += compiled->compileSeconds;
    anyCompiled |= !compiled->fromCache;

    Program &program = programs[seq];
    program.seq = seq;
    program.library = std::move(compiled->program);
    program.library->setNumThreads(threads);
    program.tokens.assign(seq, 0);
    program.logits.assign(seq * p.vocabSize, 0.0f);
    const EntrySignature &sig = compiled->signature;
    program.buffers.assign(sig.inputs.size() + sig.outputs.size(), nullptr);
    // Binds every input and output by name, checking its type and shape.
    auto expect = [&](const EntryTensor &t, ExecElementType type,
                      llvm::ArrayRef<int64_t> shape) -> std::string {
      if (t.elementType == type && llvm::ArrayRef(t.shape) == shape)
        return "";
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "@forward's " << t.name << " is "
         << stringifyExecElementType(t.elementType) << "[";
      llvm::interleaveComma(t.shape, os);
      os << "], but the host buffer is " << stringifyExecElementType(type)
         << "[";
      llvm::interleaveComma(shape, os);
      os << "]";
      return s;
    };
    std::vector<int64_t> cacheShape = {p.maxSeqLen, p.nKvHeads, p.headDim()};
    std::vector<int64_t> tableShape = {p.maxSeqLen, p.headDim() / 2};
    auto cacheIndex = [&](llvm::StringRef name, llvm::StringRef suffix,
                          int64_t &index) {
      // "layers.L.k_cache" + suffix -> 2 * L + (k ? 0 : 1)
      if (!name.consume_front("layers.") || !name.consume_back(suffix))
        return false;
      auto [layer, kind] = name.split('.');
      int64_t l;
      if (layer.getAsInteger(10, l) || l < 0 || l >= p.nLayers ||
          (kind != "k_cache" && kind != "v_cache"))
        return false;
      index = 2 * l + (kind == "k_cache" ? 0 : 1);
      return true;
    };
    for (auto [i, t] : llvm::enumerate(sig.inputs)) {
      std::string error;
      int64_t index;
      if (t.name == "tokens") {
        error = expect(t, ExecElementType::i64, {seq});
        program.buffers[i] = program.tokens.data();
      } else if (t.name == "pos") {
        error = expect(t, ExecElementType::i64, {});
        program.buffers[i] = &program.pos;
      } else if (t.name == "freqs_cos" || t.name == "freqs_sin") {
        error = expect(t, ExecElementType::f32, tableShape);
        program.buffers[i] = const_cast<float *>(
            t.name == "freqs_cos" ? cosTable.data() : sinTable.data());
      } else if (cacheIndex(t.name, "", index)) {
        error = expect(t, ExecElementType::f32, cacheShape);
        program.cacheInputs.push_back({i, index});
      } else if (auto w = weights.find(t.name); w != weights.end()) {
        error = expect(t, ExecElementType::f32, w->second.tensor->shape());
        program.buffers[i] = const_cast<void *>(w->second.data);
      } else {
        error = "the checkpoint has no tensor '" + t.name + "'";
      }
      if (!error.empty())
        return error;
    }
    size_t firstOutput = sig.inputs.size();
    for (auto [i, t] : llvm::enumerate(sig.outputs)) {
      std::string error;
      int64_t index;
      if (t.name == "logits") {
        error = expect(t, ExecElementType::f32, {seq, p.vocabSize});
        program.buffers[firstOutput + i] = program.logits.data();
      } else if (cacheIndex(t.name, "_out", index)) {
        error = expect(t, ExecElementType::f32, cacheShape);
        program.cacheOutputs.push_back({firstOutput + i, index});
      } else {
        error = "internal error: unknown @forward result '" + t.name + "'";
      }
      if (!error.empty())
        return error;
    }
    if (program.cacheInputs.size() != size_t(2 * p.nLayers) ||
        program.cacheOutputs.size() != size_t(2 * p.nLayers))
      return "internal error: @forward does not pass every KV cache";
    return "";
  }

  /// Runs one step over `tokens` at positions pos ..; `logits` receives
  /// tokens.size() rows. Returns "" or an error message.
  std::string step(llvm::ArrayRef<int64_t> tokens, int64_t pos,
                   std::vector<double> &logits) {
    auto it = programs.find(int64_t(tokens.size()));
    if (it == programs.end())
      return "internal error: no program for " +
             std::to_string(tokens.size()) + " tokens per step";
    Program &program = it->second;
    if (pos < 0 || pos + int64_t(tokens.size()) > p.maxSeqLen)
      return "position " + std::to_string(pos) + " out of range";
    llvm::copy(tokens, program.tokens.begin());
    program.pos = pos;
    for (auto [slot, index] : program.cacheInputs)
      program.buffers[slot] = caches[parity][index].data();
    for (auto [slot, index] : program.cacheOutputs)
      program.buffers[slot] = caches[!parity][index].data();
    program.library->run(program.buffers.data());
    parity = !parity;
    logits.assign(program.logits.begin(), program.logits.end());
    return "";
  }

  double compileSeconds = 0;
  bool anyCompiled = false;

private:
  struct Program {
    int64_t seq = 0;
    std::unique_ptr<LoadedProgram> library;
    std::vector<int64_t> tokens;
    int64_t pos = 0;
    std::vector<float> logits;
    std::vector<void *> buffers;
    /// (buffer slot, cache index 2 * layer + (k ? 0 : 1)).
    std::vector<std::pair<size_t, int64_t>> cacheInputs, cacheOutputs;
  };
  struct Weight {
    const rt::HostTensor *tensor;
    const void *data;
  };

  rt::LlamaParams p;
  int64_t threads = 1;
  std::vector<float> cosTable, sinTable;
  std::map<std::string, Weight> weights;
  std::map<std::string, std::vector<float>> converted;
  /// Two sets of 2 * nLayers caches; set `parity` holds the current ones.
  std::array<std::vector<std::vector<float>>, 2> caches;
  bool parity = false;
  std::map<int64_t, Program> programs;
};
} // namespace

static int run(MLIRContext &ctx, const rt::LlamaCheckpoint &ckpt) {
  const rt::LlamaParams &p = ckpt.params;
  // The hardware the run is for: with --engine=compiled the model is
  // compiled for it (one device for now).
  auto hw = ::tra::hw::loadHardware(hwSpec);
  if (!hw)
    return fail(llvm::toString(hw.takeError()));
  llvm::errs() << "tra-llama: hardware: " << hw->summary() << "\n";
  SmallVector<int64_t> prompt;
  std::optional<rt::Tokenizer> tokenizer;
  if (!tokenizerPath.empty()) {
    rt::Result<rt::Tokenizer> tok = rt::Tokenizer::open(tokenizerPath);
    if (!tok)
      return fail(tok.message());
    if (tok->size() != p.vocabSize)
      return fail(tokenizerPath + ": vocabulary of " +
                  llvm::Twine(tok->size()) + " pieces, but " + checkpointPath +
                  " has vocab_size " + llvm::Twine(p.vocabSize));
    tokenizer = std::move(*tok);
  }
  if (!promptText.empty()) {
    if (!tokenizer)
      return fail("--prompt needs --tokenizer");
    for (int64_t id : tokenizer->encode(promptText))
      prompt.push_back(id);
  }
  for (llvm::StringRef part : llvm::split(llvm::StringRef(promptIds), ',')) {
    if (!promptText.empty())
      break;
    int64_t id;
    if (part.trim().getAsInteger(10, id) || id < 0 || id >= p.vocabSize)
      return fail("--prompt-ids: '" + part + "' is not a token id in [0, " +
                  llvm::Twine(p.vocabSize) + ")");
    prompt.push_back(id);
  }
  if (steps < int64_t(prompt.size()) || steps > p.maxSeqLen)
    return fail("--steps " + llvm::Twine(int64_t(steps)) + " must be in [" +
                llvm::Twine(prompt.size()) + ", " + llvm::Twine(p.maxSeqLen) +
                "] (prompt length, model seq_len)");
  if (numThreads < 0)
    return fail("--num-threads " + llvm::Twine(int64_t(numThreads)) +
                " must be positive (0: the hardware description's cores)");
  // The prompt runs as one step of all its tokens (prefill) unless
  // --prefill=false; decoding runs one token per step.
  const int64_t promptLen = int64_t(prompt.size());
  SmallVector<int64_t> stepLengths = {1};
  if (prefill && promptLen > 1)
    stepLengths.push_back(promptLen);

  // The interpreter runs @forward of each step length on interpreter
  // tensors: the arguments in the order of @forward (tokens set per step).
  std::map<int64_t, OwningOpRef<ModuleOp>> modules;
  SmallVector<InterpTensor> args;
  if (engine == Engine::Interpreter) {
    for (int64_t seq : stepLengths) {
      modules[seq] = buildLlamaModule(&ctx, p, seq);
      if (failed(verify(*modules[seq])))
        return fail("internal error: the generated model does not verify");
    }
    Type f32 = Float32Type::get(&ctx), i64 = IntegerType::get(&ctx, 64);
    std::vector<float> cosTable, sinTable;
    computeRopeTables(p, cosTable, sinTable);
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
    if (engine == Engine::Interpreter)
      args.push_back(f32Tensor(ctx, *t));
  }

  std::unique_ptr<CompiledModel> compiled;
  std::unique_ptr<DistributedModel> distributed;
  if (engine == Engine::Compiled && hw->numDevices() != 1) {
    // One MPI job per step, one rank per device; the prompt runs token by
    // token.
    distributed = std::make_unique<DistributedModel>();
    int64_t threads = numThreads > 0 ? int64_t(numThreads)
                      : emulateOnCpu ? 1
                                     : int64_t(hw->getDevice(0).cores);
    auto start = std::chrono::steady_clock::now();
    if (std::string e =
            distributed->init(ctx, ckpt, *hw, threads, emulateOnCpu);
        !e.empty())
      return fail(e);
    llvm::errs() << "tra-llama: compiled @forward for "
                 << distributed->numRanks() << " MPI ranks in "
                 << llvm::format("%.1f",
                                 std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count())
                 << " s\n";
    stepLengths = {1};
  } else if (engine == Engine::Compiled) {
    int64_t threads =
        numThreads > 0 ? int64_t(numThreads) : int64_t(hw->getDevice(0).cores);
    std::string cacheDir;
    if (!noCache) {
      cacheDir = cacheDirectory.empty() ? getDefaultLibraryCacheDirectory()
                                        : cacheDirectory.getValue();
      if (cacheDir.empty())
        llvm::errs() << "tra-llama: no cache directory (neither "
                        "XDG_CACHE_HOME nor HOME is set); compiling without "
                        "the cache\n";
    }
    compiled = std::make_unique<CompiledModel>();
    if (std::string e = compiled->init(ckpt, threads); !e.empty())
      return fail(e);
    for (int64_t seq : stepLengths)
      if (std::string e =
              compiled->addProgram(ctx, seq, cacheDir, hw->toJSONText());
          !e.empty())
        return fail(e);
  }

  // Runs one step over tokens[pos, pos + n); fills `logits` (n rows).
  SmallVector<int64_t> tokens(prompt.begin(), prompt.end());
  std::vector<double> allLogits, logits;
  auto runStep = [&](int64_t pos, int64_t n) -> std::string {
    ArrayRef<int64_t> stepTokens = ArrayRef(tokens).slice(pos, n);
    if (compiled)
      return compiled->step(stepTokens, pos, logits);
    if (distributed)
      return distributed->step(stepTokens[0], pos, logits);
    func::FuncOp forward = modules[n]->lookupSymbol<func::FuncOp>("forward");
    args[0] = InterpTensor(IntegerType::get(&ctx, 64), ArrayRef<int64_t>{n});
    for (int64_t i = 0; i < n; ++i)
      args[0].data[i] = double(stepTokens[i]);
    args[1].data[0] = double(pos);
    FailureOr<SmallVector<InterpTensor>> results = interpret(forward, args);
    if (failed(results))
      return "step at position " + std::to_string(pos) + " failed";
    logits = (*results)[0].data;
    for (int64_t l = 0; l < 2 * p.nLayers; ++l)
      args[4 + l] = std::move((*results)[1 + l]);
    return "";
  };
  // Appends the logits and the greedy choice of the last row.
  auto consume = [&]() {
    allLogits.insert(allLogits.end(), logits.begin(), logits.end());
    const double *last = logits.data() + logits.size() - p.vocabSize;
    int64_t best = 0;
    for (int64_t v = 1; v < p.vocabSize; ++v)
      if (last[v] > last[best])
        best = v;
    tokens.push_back(best);
  };
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };

  // Prefill: the prompt, as one step or token by token.
  auto start = Clock::now();
  bool oneStepPrefill = llvm::is_contained(stepLengths, promptLen);
  if (oneStepPrefill) {
    if (std::string e = runStep(0, promptLen); !e.empty())
      return fail(e);
  } else {
    for (int64_t pos = 0; pos < promptLen; ++pos) {
      if (std::string e = runStep(pos, 1); !e.empty())
        return fail(e);
      if (pos + 1 < promptLen)
        allLogits.insert(allLogits.end(), logits.begin(), logits.end());
    }
  }
  consume();
  double prefillSeconds = since(start);
  // Decoding: one token per step.
  start = Clock::now();
  for (int64_t pos = promptLen; pos < steps; ++pos) {
    if (std::string e = runStep(pos, 1); !e.empty())
      return fail(e);
    consume();
  }
  double decodeSeconds = since(start);
  int64_t decoded = steps - promptLen;

  if (tokenizer) {
    for (size_t i = 0; i < tokens.size(); ++i)
      llvm::outs() << tokenizer->decode(i ? tokens[i - 1] : -1, tokens[i]);
    llvm::outs() << "\n";
  }
  if (printIds) {
    for (size_t i = prompt.size(); i < tokens.size(); ++i)
      llvm::outs() << (i > prompt.size() ? " " : "") << tokens[i];
    llvm::outs() << "\n";
    llvm::outs().flush();
  }
  auto rate = [](int64_t n, double s) { return s > 0 ? n / s : 0.0; };
  const char *how = compiled      ? "compiled, in process"
                    : distributed ? "compiled, one MPI job per step"
                                  : "reference interpreter";
  llvm::errs() << "tra-llama: prefill: " << promptLen << " tokens in "
               << llvm::format("%.3f", prefillSeconds) << " s ("
               << llvm::format("%.1f", rate(promptLen, prefillSeconds))
               << " tokens/s, "
               << (oneStepPrefill ? "one step" : "one token per step") << ", "
               << how << ")\n";
  llvm::errs() << "tra-llama: decode: " << decoded << " tokens in "
               << llvm::format("%.3f", decodeSeconds) << " s ("
               << llvm::format("%.1f", rate(decoded, decodeSeconds))
               << " tokens/s, " << how << ")\n";
  if (!logitsOut.empty()) {
    rt::Status status = rt::writeNpy(
        logitsOut,
        rt::HostTensor::fromDoubles(rt::DType::F32,
                                    {int64_t(steps), p.vocabSize}, allLogits));
    if (!status)
      return fail(status.message());
  }
  if (!benchJson.empty()) {
    llvm::json::Object o{
        {"engine", compiled ? "compiled" : "interpreter"},
        {"prefill_tokens", promptLen},
        {"prefill_seconds", prefillSeconds},
        {"prefill_tokens_per_s", rate(promptLen, prefillSeconds)},
        {"prefill_one_step", oneStepPrefill},
        {"decode_tokens", decoded},
        {"decode_seconds", decodeSeconds},
        {"decode_tokens_per_s", rate(decoded, decodeSeconds)},
        {"compile_seconds", compiled ? compiled->compileSeconds : 0.0},
        {"compiled_now", compiled && compiled->anyCompiled}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
    if (llvm::Error error = llvm::writeToOutput(
            benchJson, [&](llvm::raw_ostream &out) {
              out << text;
              return llvm::Error::success();
            }))
      return fail(benchJson + ": " + llvm::toString(std::move(error)));
  }
  return 0;
}

static cl::opt<bool> decodeIds("decode",
                               cl::desc("tokenize: TEXT is token ids to "
                                        "decode"));

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

/// A llama2.c file, or a Meta checkpoint directory (all shards merged into
/// f32 weights; the model-parallel split is undone tile by tile).
static rt::Result<rt::LlamaCheckpoint> loadCheckpoint(const std::string &path) {
  if (llvm::sys::fs::is_directory(path)) {
    rt::Result<rt::MetaCheckpoint> meta = rt::MetaCheckpoint::open(path);
    if (!meta)
      return meta.error();
    return meta->loadAll();
  }
  return rt::readLlama2c(path);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tra LLaMA front end\n");
  if (command == "tokenize")
    return tokenize();
  if (command == "reshard")
    return runReshard({checkpointPath, hwSpec, outputPath, seqLen, maxSeqLen});
  if (command != "emit" && command != "run")
    return fail("unknown command '" + command +
                "' (expected emit, run or tokenize)");
  if (checkpointPath.empty())
    return fail(command + " needs --checkpoint");
  rt::Result<rt::LlamaCheckpoint> ckpt = loadCheckpoint(checkpointPath);
  if (!ckpt)
    return fail(ckpt.message());
  if (maxSeqLen > 0) {
    if (maxSeqLen > ckpt->params.maxSeqLen)
      return fail("--max-seq-len " + llvm::Twine(int64_t(maxSeqLen)) +
                  " exceeds the model's seq_len " +
                  llvm::Twine(ckpt->params.maxSeqLen));
    ckpt->params.maxSeqLen = maxSeqLen;
  }
  MLIRContext context;
  return command == "emit" ? emit(context, *ckpt) : run(context, *ckpt);
}
