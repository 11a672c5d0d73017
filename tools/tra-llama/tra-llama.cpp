//===- tra-llama.cpp - Build, inspect and run LLaMA models ----------------===//
//
//   tra-llama emit --checkpoint MODEL.bin [--seq N] [-o model.mlir]
//   tra-llama run  --checkpoint MODEL.bin [--steps N] [--prompt-ids 1,2,3]
//                  [--tokenizer TOK.bin --prompt TEXT]
//                  [--print-ids] [--logits-out FILE.npy]
//   tra-llama tokenize --tokenizer TOK.bin TEXT
//
// `emit` writes the model-level tra IR of one step of the model (built from
// the checkpoint's hyper-parameters) so it can be inspected or compiled.
// `run` generates greedily (temperature 0) from the prompt (default: BOS),
// executing every step with the reference interpreter.
//
//===----------------------------------------------------------------------===//

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
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

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
/// Runs decoding steps with @forward compiled to a native executable: the
/// weights and rotary tables go to one safetensors file, every step passes
/// the token, the position and the KV caches as .npy files.
class CompiledModel {
public:
  ~CompiledModel() {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  /// Compiles the model; returns "" or an error message.
  std::string init(MLIRContext &ctx, const rt::LlamaCheckpoint &ckpt,
                   int64_t threads) {
    p = ckpt.params;
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("tra-llama", path))
      return "cannot create a temporary directory";
    dir = std::string(path);
    OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, p, /*seqLen=*/1);
    CodegenOptions options;
    options.entry = "forward";
    options.numThreads = threads;
    exe = file("forward");
    if (failed(compileToExecutable(*module, exe, options)))
      return "code generation failed";
    std::vector<rt::NamedTensor> tensors;
    for (auto &[name, t] : ckpt.weights)
      tensors.push_back({name, t});
    std::vector<float> cosTable, sinTable;
    computeRopeTables(p, cosTable, sinTable);
    std::vector<int64_t> shape = {p.maxSeqLen, p.headDim() / 2};
    tensors.push_back(
        {"freqs_cos",
         rt::HostTensor::copyOf(rt::DType::F32, shape, cosTable.data())});
    tensors.push_back(
        {"freqs_sin",
         rt::HostTensor::copyOf(rt::DType::F32, shape, sinTable.data())});
    weights = file("weights.safetensors");
    if (rt::Status st = rt::writeSafetensors(weights, tensors); !st)
      return st.message();
    rt::HostTensor zero = rt::HostTensor::zeros(
        rt::DType::F32, {p.maxSeqLen, p.nKvHeads, p.headDim()});
    for (int64_t l = 0; l < p.nLayers; ++l)
      for (const char *kind : {"k", "v"})
        if (rt::Status st = rt::writeNpy(cacheFile(l, kind, parity), zero); !st)
          return st.message();
    return "";
  }

  /// Runs one step; fills `logits` or returns an error message.
  std::string step(int64_t token, int64_t pos, std::vector<double> &logits) {
    rt::HostTensor tok =
        rt::HostTensor::fromDoubles(rt::DType::I64, {1}, {double(token)});
    rt::HostTensor at =
        rt::HostTensor::fromDoubles(rt::DType::I64, {}, {double(pos)});
    if (rt::Status st = rt::writeNpy(file("tokens.npy"), tok); !st)
      return st.message();
    if (rt::Status st = rt::writeNpy(file("pos.npy"), at); !st)
      return st.message();
    std::vector<std::string> args = {exe,
                                     "--weights",
                                     weights,
                                     "--input",
                                     "tokens=" + file("tokens.npy"),
                                     "--input",
                                     "pos=" + file("pos.npy"),
                                     "--output",
                                     "logits=" + file("logits.npy")};
    for (int64_t l = 0; l < p.nLayers; ++l)
      for (const char *kind : {"k", "v"}) {
        std::string name = "layers." + std::to_string(l) + "." + kind;
        args.push_back("--input");
        args.push_back(name + "_cache=" + cacheFile(l, kind, parity));
        args.push_back("--output");
        args.push_back(name + "_cache_out=" + cacheFile(l, kind, !parity));
      }
    std::vector<llvm::StringRef> argv(args.begin(), args.end());
    std::string error;
    int rc =
        llvm::sys::ExecuteAndWait(exe, argv, std::nullopt, {}, 0, 0, &error);
    if (rc != 0)
      return "the compiled model failed at position " + std::to_string(pos) +
             (error.empty() ? "" : ": " + error);
    parity = !parity;
    rt::Result<rt::HostTensor> out = rt::readNpy(file("logits.npy"));
    if (!out)
      return out.message();
    logits.resize(out->numElements());
    for (int64_t i = 0; i < out->numElements(); ++i)
      logits[i] = out->loadAsDouble(i);
    return "";
  }

private:
  std::string file(const std::string &name) const {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }
  std::string cacheFile(int64_t layer, const char *kind, bool which) const {
    return file(std::string(kind) + "_cache_" + std::to_string(layer) +
                (which ? "_b.npy" : "_a.npy"));
  }

  rt::LlamaParams p;
  std::string dir, exe, weights;
  bool parity = false;
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

  OwningOpRef<ModuleOp> module = buildLlamaModule(&ctx, p, /*seqLen=*/1);
  if (failed(verify(*module)))
    return fail("internal error: the generated model does not verify");
  auto forward = module->lookupSymbol<func::FuncOp>("forward");

  // Arguments in the order of @forward.
  Type f32 = Float32Type::get(&ctx), i64 = IntegerType::get(&ctx, 64);
  std::vector<float> cosTable, sinTable;
  computeRopeTables(p, cosTable, sinTable);
  SmallVector<InterpTensor> args;
  args.emplace_back(i64, ArrayRef<int64_t>{1});
  args.emplace_back(i64, ArrayRef<int64_t>{});
  InterpTensor fc(f32, {p.maxSeqLen, p.headDim() / 2});
  InterpTensor fs = fc;
  fc.data.assign(cosTable.begin(), cosTable.end());
  fs.data.assign(sinTable.begin(), sinTable.end());
  args.push_back(std::move(fc));
  args.push_back(std::move(fs));
  for (int64_t l = 0; l < 2 * p.nLayers; ++l)
    args.emplace_back(f32,
                      ArrayRef<int64_t>{p.maxSeqLen, p.nKvHeads, p.headDim()});
  for (auto &[name, shape] : rt::llamaWeightShapes(p)) {
    const rt::HostTensor *t = ckpt.find(name);
    if (!t)
      return fail(checkpointPath + ": no tensor '" + name + "'");
    // Only the interpreter needs the weights as interpreter tensors.
    if (engine == Engine::Interpreter)
      args.push_back(f32Tensor(ctx, *t));
  }

  std::unique_ptr<CompiledModel> compiled;
  auto compileStart = std::chrono::steady_clock::now();
  if (engine == Engine::Compiled) {
    if (hw->numDevices() != 1)
      return fail(hw->getName() + " has " + llvm::Twine(hw->numDevices()) +
                  " devices: multi-device execution is not implemented yet; "
                  "use a one-device hardware file or --engine=interpreter");
    compiled = std::make_unique<CompiledModel>();
    if (std::string e = compiled->init(ctx, ckpt, hw->getDevice(0).cores);
        !e.empty())
      return fail(e);
    llvm::errs() << "tra-llama: compiled @forward in "
                 << llvm::format("%.2f", std::chrono::duration<double>(
                                             std::chrono::steady_clock::now() -
                                             compileStart)
                                             .count())
                 << " s\n";
  }

  SmallVector<int64_t> tokens(prompt.begin(), prompt.end());
  std::vector<double> allLogits, logits;
  auto start = std::chrono::steady_clock::now();
  for (int64_t pos = 0; pos < steps; ++pos) {
    if (compiled) {
      if (std::string e = compiled->step(tokens[pos], pos, logits); !e.empty())
        return fail(e);
    } else {
      args[0].data[0] = double(tokens[pos]);
      args[1].data[0] = double(pos);
      FailureOr<SmallVector<InterpTensor>> results = interpret(forward, args);
      if (failed(results))
        return fail("step " + llvm::Twine(pos) + " failed");
      logits = (*results)[0].data;
      for (int64_t l = 0; l < 2 * p.nLayers; ++l)
        args[4 + l] = std::move((*results)[1 + l]);
    }
    allLogits.insert(allLogits.end(), logits.begin(), logits.end());
    if (pos + 1 < int64_t(tokens.size()))
      continue; // still in the prompt
    int64_t best = 0;
    for (int64_t v = 1; v < p.vocabSize; ++v)
      if (logits[v] > logits[best])
        best = v;
    tokens.push_back(best);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  int64_t generated = int64_t(tokens.size()) - int64_t(prompt.size());
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
  llvm::errs() << "tra-llama: " << generated << " tokens in "
               << llvm::format("%.2f", seconds) << " s ("
               << llvm::format("%.1f", generated / seconds) << " tokens/s, "
               << (compiled ? "compiled, one process per step"
                            : "reference interpreter")
               << ")\n";
  if (!logitsOut.empty()) {
    rt::Status status = rt::writeNpy(
        logitsOut,
        rt::HostTensor::fromDoubles(rt::DType::F32,
                                    {int64_t(steps), p.vocabSize}, allLogits));
    if (!status)
      return fail(status.message());
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
