//===- Train.cpp - tra-llama train: train a LLaMA model -------------------===//

#include "Train.h"
#include "Options.h"

#include "tra/Engine/Checkpoint.h"
#include "tra/Engine/Trainer.h"
#include "tra/Frontend/LlamaPrograms.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Tokenizer.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::tra;
namespace cl = llvm::cl;
namespace rt = ::tra::rt;
namespace engine = ::tra::engine;

static cl::opt<std::string>
    dataPath("data",
             cl::desc("train: the training text (with --tokenizer) or its "
                      "token ids as a 1-D integer .npy file"),
             cl::init(""), cl::cat(getToolCategory()));
static cl::opt<std::string>
    configPath("config",
               cl::desc("train: start from random weights of the model "
                        "described by this JSON file (dim, hidden_dim, "
                        "n_layers, n_heads, n_kv_heads, vocab_size, "
                        "max_seq_len, shared_classifier, norm_eps)"),
               cl::init(""), cl::cat(getToolCategory()));
static cl::opt<std::string>
    resumePath("resume",
               cl::desc("train: continue from a training checkpoint "
                        "directory (or a -o directory: its latest)"),
               cl::init(""), cl::cat(getToolCategory()));
static cl::opt<int64_t> batchSize("batch",
                                  cl::desc("train: sequences per step "
                                           "(default 8)"),
                                  cl::init(8), cl::cat(getToolCategory()));
static cl::opt<int64_t>
    trainSeqLen("seq-len",
                cl::desc("train: tokens per training sequence (default: "
                         "the model's max_seq_len, at most 256)"),
                cl::init(0), cl::cat(getToolCategory()));
static cl::opt<double> peakLr("lr",
                              cl::desc("train: peak learning rate (default "
                                       "1e-3)"),
                              cl::init(1e-3), cl::cat(getToolCategory()));
static cl::opt<double> minLr("min-lr",
                             cl::desc("train: learning rate at the last step "
                                      "of the cosine decay (default: lr/10)"),
                             cl::init(-1.0), cl::cat(getToolCategory()));
static cl::opt<int64_t> warmupSteps("warmup-steps",
                                    cl::desc("train: linear warm-up steps "
                                             "(default 0)"),
                                    cl::init(0), cl::cat(getToolCategory()));
static cl::opt<std::string>
    optimizerName("optimizer", cl::desc("train: adamw (default) or sgd"),
                  cl::init("adamw"), cl::cat(getToolCategory()));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("train: weight decay (AdamW: "
                                            "decoupled; default 0)"),
                                   cl::init(0.0), cl::cat(getToolCategory()));
static cl::opt<double> beta1("beta1", cl::desc("train: AdamW beta1 (0.9)"),
                             cl::init(0.9), cl::cat(getToolCategory()));
static cl::opt<double> beta2("beta2", cl::desc("train: AdamW beta2 (0.95)"),
                             cl::init(0.95), cl::cat(getToolCategory()));
static cl::opt<double> momentum("momentum",
                                cl::desc("train: SGD momentum (default 0)"),
                                cl::init(0.0), cl::cat(getToolCategory()));
static cl::opt<double> clipNorm("clip-norm",
                                cl::desc("train: clip gradients to this "
                                         "global L2 norm (default 1; 0: no "
                                         "clipping)"),
                                cl::init(1.0), cl::cat(getToolCategory()));
static cl::opt<int64_t> saveEvery("save-every",
                                  cl::desc("train: write a checkpoint every "
                                           "N steps (default 0: only at the "
                                           "end)"),
                                  cl::init(0), cl::cat(getToolCategory()));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tra-llama") << message << "\n";
  return 1;
}

/// The model of a --config file.
static rt::Result<rt::LlamaParams> readConfig(const std::string &path) {
  auto text = rt::readFile(path);
  if (!text)
    return text.error();
  auto json = rt::parseJson(*text, path);
  if (!json)
    return json.error();
  if (!json->isObject())
    return rt::fileError(path, "is not a JSON object");
  rt::LlamaParams p;
  p.sharedClassifier = true;
  auto integer = [&](const char *key, int64_t &field,
                     bool required) -> rt::Status {
    const rt::JsonValue *v = json->find(key);
    if (!v) {
      if (required)
        return rt::fileError(path, std::string("has no \"") + key + "\"");
      return rt::Status::success();
    }
    if (!v->isInteger() || v->getInteger() < 1)
      return rt::fileError(path, std::string("\"") + key +
                                     "\" is not a positive integer");
    field = v->getInteger();
    return rt::Status::success();
  };
  for (auto [key, field] : {std::pair<const char *, int64_t *>{"dim", &p.dim},
                            {"hidden_dim", &p.hiddenDim},
                            {"n_layers", &p.nLayers},
                            {"n_heads", &p.nHeads},
                            {"vocab_size", &p.vocabSize},
                            {"max_seq_len", &p.maxSeqLen}})
    if (rt::Status s = integer(key, *field, true); !s.ok())
      return s.error();
  p.nKvHeads = p.nHeads;
  if (rt::Status s = integer("n_kv_heads", p.nKvHeads, false); !s.ok())
    return s.error();
  if (const rt::JsonValue *v = json->find("shared_classifier")) {
    if (!v->isBool())
      return rt::fileError(path, "\"shared_classifier\" is not true or false");
    p.sharedClassifier = v->getBool();
  }
  if (const rt::JsonValue *v = json->find("norm_eps")) {
    if (!v->isNumber() || !(v->getNumber() > 0))
      return rt::fileError(path, "\"norm_eps\" is not a positive number");
    p.normEps = v->getNumber();
  }
  if (rt::Status e = p.validate(); !e.ok())
    return rt::fileError(path, e.message());
  return p;
}

/// Random weights for `p`: N(0, 0.02), the output projections of each
/// residual branch (wo, w2) N(0, 0.02 / sqrt(2 * layers)) as in GPT-2 and
/// llama2.c's training, norms 1.
static rt::LlamaCheckpoint randomWeights(const rt::LlamaParams &p,
                                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  rt::LlamaCheckpoint ckpt;
  ckpt.params = p;
  for (auto &[name, shape] : rt::llamaWeightShapes(p)) {
    rt::HostTensor t = rt::HostTensor::zeros(rt::DType::F32, shape);
    bool norm = name.size() >= 11 &&
                name.compare(name.size() - 11, 11, "norm.weight") == 0;
    bool residual = name.find("attention.wo.") != std::string::npos ||
                    name.find("feed_forward.w2.") != std::string::npos;
    double std = residual ? 0.02 / std::sqrt(2.0 * double(p.nLayers)) : 0.02;
    std::normal_distribution<double> normal(0.0, std);
    auto *data = reinterpret_cast<float *>(t.mutableData());
    for (int64_t i = 0; i < t.numElements(); ++i)
      data[i] = norm ? 1.0f : float(normal(rng));
    ckpt.weights.push_back({name, std::move(t)});
  }
  return ckpt;
}

/// The token stream of --data.
static rt::Result<std::vector<int64_t>>
readTokens(const std::string &path, const std::string &tokenizer) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    auto t = rt::readNpy(path);
    if (!t)
      return t.error();
    if (t->rank() != 1 ||
        (t->dtype() != rt::DType::I64 && t->dtype() != rt::DType::I32))
      return rt::fileError(path, "is not a 1-D int32 or int64 array of "
                                 "token ids");
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < t->numElements(); ++i)
      ids.push_back(int64_t(t->loadAsDouble(i)));
    return ids;
  }
  if (tokenizer.empty())
    return rt::fileError(path, "is text, which needs --tokenizer (or give "
                               "token ids as a .npy file)");
  auto tok = rt::Tokenizer::open(tokenizer);
  if (!tok)
    return tok.error();
  auto text = rt::readFile(path);
  if (!text)
    return text.error();
  return tok->encode(*text, /*bos=*/true);
}

int mlir::tra::runTrain(const TrainRequest &request) {
  if (request.output.empty() || request.output == "-")
    return fail("train needs -o DIR, the directory of its checkpoints");
  if (dataPath.empty())
    return fail("train needs --data FILE (text with --tokenizer, or a .npy "
                "of token ids)");
  int sources =
      !request.checkpoint.empty() + !configPath.empty() + !resumePath.empty();
  if (sources != 1)
    return fail("train starts from exactly one of --checkpoint (weights), "
                "--config (random weights) or --resume (a training "
                "checkpoint)");
  if (request.steps < 1)
    return fail("--steps " + std::to_string(request.steps) +
                " must be positive");
  if (batchSize < 1)
    return fail("--batch " + std::to_string(batchSize) + " must be positive");
  if (!(peakLr > 0) || !std::isfinite(peakLr))
    return fail("--lr " + std::to_string(peakLr) + " must be positive");
  if (warmupSteps < 0 || saveEvery < 0)
    return fail("--warmup-steps and --save-every cannot be negative");
  std::optional<OptimizerKind> kind = parseOptimizerKind(optimizerName);
  if (!kind)
    return fail("--optimizer " + optimizerName.getValue() +
                ": expected adamw or sgd");
  OptimizerOptions opt;
  opt.kind = *kind;
  opt.beta1 = beta1;
  opt.beta2 = beta2;
  opt.weightDecay = weightDecay;
  opt.momentum = momentum;
  opt.clipNorm = clipNorm;
  if (clipNorm < 0)
    return fail("--clip-norm cannot be negative");

  // The model and where training starts.
  rt::LlamaCheckpoint weights;
  std::vector<rt::NamedTensor> states;
  int64_t stepsDone = 0;
  if (!resumePath.empty()) {
    auto ckpt = engine::readTrainingCheckpoint(resumePath);
    if (!ckpt)
      return fail(ckpt.message());
    weights = std::move(ckpt->weights);
    states = std::move(ckpt->states);
    stepsDone = ckpt->step;
    for (const auto &[key, value] : ckpt->metadata)
      if (key == "optimizer" && value != optimizerName)
        return fail(resumePath + ": the checkpoint was trained with " + value +
                    ", not --optimizer " + optimizerName.getValue());
  } else if (!configPath.empty()) {
    auto params = readConfig(configPath);
    if (!params)
      return fail(params.message());
    weights = randomWeights(*params, request.seed);
  } else {
    auto ckpt = engine::loadCheckpoint(request.checkpoint);
    if (!ckpt)
      return fail(ckpt.message());
    weights = std::move(*ckpt);
  }
  const rt::LlamaParams &params = weights.params;
  int64_t seq = trainSeqLen ? int64_t(trainSeqLen)
                            : std::min<int64_t>(params.maxSeqLen, 256);
  if (seq < 1 || seq > params.maxSeqLen)
    return fail("--seq-len " + std::to_string(seq) + " must be in [1, " +
                std::to_string(params.maxSeqLen) +
                "] (the model's "
                "max_seq_len)");

  std::optional<int64_t> tokensPerStep = rt::checkedMul(batchSize, seq);
  if (!tokensPerStep || *tokensPerStep > (int64_t(1) << 31))
    return fail("--batch " + std::to_string(batchSize) + " x --seq-len " +
                std::to_string(seq) +
                " tokens per step is more than a step can hold (2^31)");
  if (stepsDone > std::numeric_limits<int64_t>::max() - request.steps)
    return fail("--steps " + std::to_string(request.steps) +
                " after the checkpoint's step " + std::to_string(stepsDone) +
                " overflows the step count");
  auto stream = readTokens(dataPath, request.tokenizer);
  if (!stream)
    return fail(stream.message());
  auto batches = engine::TokenBatches::create(
      std::move(*stream), params.vocabSize, batchSize, seq, dataPath);
  if (!batches)
    return fail(batches.message());

  auto hw = ::tra::hw::loadHardware(request.hardware);
  if (!hw)
    return fail(llvm::toString(hw.takeError()));
  if (hw->numDevices() != 1 ||
      hw->getDevice(0).kind != ::tra::hw::DeviceKind::CPU)
    return fail(hw->getName().str() + " has " +
                std::to_string(hw->numDevices()) +
                " devices (or a GPU): tra-llama train runs the training step "
                "on one CPU device so far; the same step planned for several "
                "devices runs with tra.compile(model, hw=...) from Python "
                "(docs/Training.md)");
  int64_t threads = request.threads > 0
                        ? request.threads
                        : std::max<int64_t>(1, hw->getDevice(0).cores);

  llvm::errs() << "tra-llama: training " << params.nLayers << " layers, dim "
               << params.dim << ", vocab " << params.vocabSize << " on "
               << hw->summary() << "; batch " << batchSize << " x " << seq
               << " tokens, " << batches->streamLength() << " tokens of data\n";
  MLIRContext context;
  std::string notes;
  llvm::raw_string_ostream notesOs(notes);
  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<CompiledProgram> compiled =
      compileLlamaTrainStep(context, params, batchSize, seq, opt, threads,
                            request.cacheDirectory, hw->toJSONText(), notesOs);
  llvm::errs() << notes;
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  llvm::errs() << "tra-llama: training step "
               << (compiled->fromCache ? "loaded from the cache" : "compiled")
               << " in " << llvm::format("%.1f", compileSeconds) << " s\n";
  compiled->program->setNumThreads(threads);
  auto trainer = engine::Trainer::create(std::move(compiled->program), params,
                                         weights.weights, states, stepsDone);
  if (!trainer)
    return fail(trainer.message());

  engine::LearningRateSchedule schedule;
  schedule.peak = peakLr;
  schedule.min = minLr >= 0 ? double(minLr) : peakLr / 10;
  schedule.warmup = warmupSteps;
  schedule.total = stepsDone + request.steps;
  rt::SafetensorsMetadata meta = {{"optimizer", optimizerName.getValue()}};
  auto save = [&](int64_t step) -> int {
    std::string dir = request.output + "/step-" + std::to_string(step);
    std::error_code ec;
    std::filesystem::create_directories(request.output, ec);
    rt::Status s = engine::writeTrainingCheckpoint(
        dir, (*trainer)->weights(), (*trainer)->states(), step, meta);
    if (!s.ok())
      return fail(s.message());
    llvm::errs() << "tra-llama: checkpoint " << dir << "\n";
    return 0;
  };
  std::vector<int64_t> tokens, targets;
  for (int64_t i = 0; i < request.steps; ++i) {
    int64_t step = stepsDone + i + 1;
    batches->get(step - 1, tokens, targets);
    double lr = schedule.at(step);
    auto start = std::chrono::steady_clock::now();
    auto stats = (*trainer)->step(tokens, targets, lr);
    if (!stats)
      return fail(stats.message());
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    llvm::outs() << "step " << step << "/" << schedule.total << ": loss "
                 << llvm::format("%.4f", stats->loss) << ", lr "
                 << llvm::format("%.3g", lr) << ", grad norm "
                 << llvm::format("%.3f", stats->gradNorm) << ", "
                 << llvm::format("%.0f", double(*tokensPerStep) / seconds)
                 << " tokens/s\n";
    llvm::outs().flush();
    bool last = i + 1 == request.steps;
    if (last || (saveEvery > 0 && step % saveEvery == 0))
      if (int rc = save(step))
        return rc;
  }
  return 0;
}
