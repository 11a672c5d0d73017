//===- Train.cpp - tra-llama train: train a LLaMA model -------------------===//

#include "Train.h"
#include "Options.h"

#include "tra/Engine/Checkpoint.h"
#include "tra/Engine/MpiJob.h"
#include "tra/Engine/TrainLoop.h"
#include "tra/Engine/Trainer.h"
#include "tra/Frontend/LlamaPrograms.h"
#include "tra/Hardware/Hardware.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <thread>

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

static cl::opt<bool>
    explainPlan("explain",
                cl::desc("train: print the plan of the training step "
                         "(EXPLAIN: where each tensor's tiles are, where the "
                         "gradients are aggregated, the moves, the memory "
                         "per device and the activations recomputed)"),
                cl::init(false), cl::cat(getToolCategory()));

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
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0)
    return engine::readTokenIds(path);
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

/// Prints the compiler's notes, one "tra-llama: " line each.
static void printNotes(llvm::StringRef notes) {
  for (llvm::StringRef line : llvm::split(notes.rtrim(), '\n'))
    if (!line.empty())
      llvm::errs() << "tra-llama: " << line << "\n";
}

/// Training on hardware with several devices: the step is planned for it
/// and compiled into one library of every rank's program, and the whole run
/// is one `mpirun -np N tra-llama-train-worker` job. The ranks read their
/// tiles of the starting weights and states from a checkpoint written into
/// a scratch directory, and the token ids from a .npy file beside it.
static int trainDistributed(MLIRContext &context, const TrainRequest &request,
                            const ::tra::hw::HardwareDescription &hw,
                            const rt::LlamaCheckpoint &weights,
                            const std::vector<rt::NamedTensor> &states,
                            const engine::TokenBatches &batches, int64_t seq,
                            const OptimizerOptions &optimizer,
                            const engine::TrainingRun &run) {
  const rt::LlamaParams &params = weights.params;
  int64_t ranks = hw.numDevices();
  rt::Result<std::string> mpirun = engine::findOnPath("mpirun");
  if (!mpirun)
    return fail(hw.getName().str() + " has " + std::to_string(ranks) +
                " devices: training needs mpirun (Open MPI), which is not "
                "on PATH");
  static int anchor;
  llvm::SmallString<128> worker(
      llvm::sys::fs::getMainExecutable(nullptr, &anchor));
  llvm::sys::path::remove_filename(worker);
  llvm::sys::path::append(worker, "tra-llama-train-worker");
  if (!llvm::sys::fs::can_execute(worker))
    return fail(std::string(worker) +
                ": not found (tra-llama-train-worker runs the ranks of a "
                "distributed training run; build it with tra-llama, which "
                "needs MPI)");
  if (!request.hostfile.empty() && !llvm::sys::fs::exists(request.hostfile))
    return fail("--hostfile " + request.hostfile + ": no such file");
  llvm::SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tra-llama-train", scratch))
    return fail("cannot create a temporary directory: " + ec.message());
  struct RemoveScratch {
    std::string dir;
    ~RemoveScratch() { llvm::sys::fs::remove_directories(dir); }
  } removeScratch{std::string(scratch)};

  // Every rank on this machine shares its cores; on the hosts of a
  // hostfile each rank gets its device's cores.
  int64_t threads =
      request.threads > 0 ? request.threads
      : !request.hostfile.empty()
          ? std::max<int64_t>(1, hw.getDevice(0).cores)
          : std::max<int64_t>(
                1,
                std::min<int64_t>(hw.getDevice(0).cores,
                                  std::thread::hardware_concurrency() / ranks));
  std::string notes;
  llvm::raw_string_ostream notesOs(notes);
  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<CachedLibrary> library = compileLlamaDistributedTrainStep(
      context, params, batchSize, seq, optimizer, hw, threads,
      request.cacheDirectory, scratch, notesOs,
      explainPlan ? &llvm::outs() : nullptr);
  printNotes(notes);
  if (!library)
    return fail(llvm::toString(library.takeError()));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  llvm::errs() << "tra-llama: training step for " << ranks << " MPI ranks "
               << (library->fromCache ? "loaded from the cache" : "compiled")
               << " in " << llvm::format("%.1f", seconds) << " s\n";

  // The starting point and the data, where every rank can read them.
  rt::LlamaCheckpoint start;
  start.params = params;
  for (const auto &[name, tensor] : weights.weights)
    start.weights.push_back({name, rt::convert(tensor, rt::DType::F32)});
  std::string startDir = std::string(scratch) + "/start";
  if (rt::Status s = engine::writeTrainingCheckpoint(startDir, start, states,
                                                     run.stepsDone, {});
      !s)
    return fail(s.message());
  std::string data = std::string(scratch) + "/tokens.npy";
  if (rt::Status s = rt::writeNpy(
          data, rt::HostTensor::copyOf(rt::DType::I64,
                                       {int64_t(batches.ids().size())},
                                       batches.ids().data()));
      !s)
    return fail(s.message());

  engine::MpiJob job;
  job.mpirun = *mpirun;
  job.worker = std::string(worker);
  job.ranks = ranks;
  job.hostfile = request.hostfile;
  job.mpirunArgs = request.mpirunArgs;
  engine::TrainWorkerOptions options;
  options.program = library->path;
  options.weights = startDir + "/model.bin";
  if (!states.empty())
    options.states = startDir + "/optimizer.safetensors";
  options.data = data;
  std::error_code ec;
  std::filesystem::create_directories(request.output, ec);
  options.output = request.output;
  options.optimizer = optimizerName.getValue();
  options.stepsDone = run.stepsDone;
  options.steps = run.steps;
  options.saveEvery = run.saveEvery;
  options.threads = threads;
  options.peakLr = run.schedule.peak;
  options.minLr = run.schedule.min;
  options.warmup = run.schedule.warmup;
  options.stepTimeout = request.stepTimeout;
  llvm::outs().flush();
  if (rt::Status s = engine::runMpiJob(job, options.toArguments()); !s)
    return fail(s.message());
  return 0;
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
  bool gpus = false;
  for (unsigned d = 0; d < hw->numDevices(); ++d)
    gpus |= hw->getDevice(d).kind == ::tra::hw::DeviceKind::GPU;
  if (gpus && !request.emulate)
    return fail(hw->getName().str() +
                " has GPUs: tra-llama train runs its training step on CPUs "
                "so far; --emulate-on-cpu runs the plan for " +
                hw->getName().str() + " with CPU code on this machine");
  if (hw->numDevices() == 1 &&
      (!request.hostfile.empty() || !request.mpirunArgs.empty() ||
       request.stepTimeout != 0))
    return fail("--hostfile, --mpirun-arg and --step-timeout are for "
                "training on hardware with several devices (one MPI rank "
                "each); " +
                hw->getName().str() + " trains in this process");
  if (request.stepTimeout < 0)
    return fail("--step-timeout must be 0 (never) or positive");

  engine::TrainingRun run;
  run.schedule.peak = peakLr;
  run.schedule.min = minLr >= 0 ? double(minLr) : peakLr / 10;
  run.schedule.warmup = warmupSteps;
  run.schedule.total = stepsDone + request.steps;
  run.stepsDone = stepsDone;
  run.steps = request.steps;
  run.saveEvery = saveEvery;
  run.progress = stdout;
  llvm::errs() << "tra-llama: training " << params.nLayers << " layers, dim "
               << params.dim << ", vocab " << params.vocabSize << " on "
               << hw->summary() << "; batch " << batchSize << " x " << seq
               << " tokens, " << batches->streamLength() << " tokens of data\n";
  MLIRContext context;
  if (hw->numDevices() > 1)
    return trainDistributed(context, request, *hw, weights, states, *batches,
                            seq, opt, run);

  int64_t threads = request.threads > 0
                        ? request.threads
                        : std::max<int64_t>(1, hw->getDevice(0).cores);
  std::string notes;
  llvm::raw_string_ostream notesOs(notes);
  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<CompiledProgram> compiled = compileLlamaTrainStep(
      context, params, batchSize, seq, opt, *hw, threads,
      request.cacheDirectory, notesOs, explainPlan ? &llvm::outs() : nullptr);
  printNotes(notes);
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
  rt::SafetensorsMetadata meta = {{"optimizer", optimizerName.getValue()}};
  auto save = [&](int64_t step) -> rt::Status {
    std::string dir = request.output + "/step-" + std::to_string(step);
    std::error_code ec;
    std::filesystem::create_directories(request.output, ec);
    if (rt::Status s = engine::writeTrainingCheckpoint(
            dir, (*trainer)->weights(), (*trainer)->states(), step, meta);
        !s.ok())
      return s;
    llvm::errs() << "tra-llama: checkpoint " << dir << "\n";
    return rt::Status::success();
  };
  auto step = [&](const std::vector<int64_t> &tokens,
                  const std::vector<int64_t> &targets,
                  double lr) { return (*trainer)->step(tokens, targets, lr); };
  llvm::outs().flush();
  if (rt::Status s =
          engine::runTraining(run, *batches, *tokensPerStep, step, save);
      !s)
    return fail(s.message());
  return 0;
}
