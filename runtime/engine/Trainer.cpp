//===- Trainer.cpp - Running a compiled LLaMA training step ---------------===//

#include "tra/Engine/Trainer.h"

#include "tra/Runtime/File.h"
#include "tra/Runtime/Npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace tra;
using namespace tra::engine;
using rt::Error;
using rt::HostTensor;
using rt::Result;
using rt::Status;

//===----------------------------------------------------------------------===//
// Schedule and batches
//===----------------------------------------------------------------------===//

double LearningRateSchedule::at(int64_t step) const {
  if (warmup > 0 && step <= warmup)
    return peak * double(step) / double(warmup);
  if (total <= warmup)
    return peak;
  double progress =
      std::min(1.0, double(step - warmup) / double(total - warmup));
  return min + (peak - min) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

Result<TokenBatches> TokenBatches::create(std::vector<int64_t> stream,
                                          int64_t vocab, int64_t batch,
                                          int64_t seq,
                                          const std::string &what) {
  if (stream.empty())
    return rt::fileError(what, "holds no tokens");
  if (int64_t(stream.size()) < seq + 1)
    return rt::fileError(what, "holds " + std::to_string(stream.size()) +
                                   " tokens, fewer than one training "
                                   "sequence of " +
                                   std::to_string(seq) +
                                   " tokens and its next-token target (" +
                                   std::to_string(seq + 1) + ")");
  for (size_t i = 0; i < stream.size(); ++i)
    if (stream[i] < 0 || stream[i] >= vocab)
      return rt::fileError(what, "token " + std::to_string(i) + " is " +
                                     std::to_string(stream[i]) +
                                     ", outside the model's vocabulary [0, " +
                                     std::to_string(vocab) + ")");
  TokenBatches b;
  b.stream = std::move(stream);
  b.batch = batch;
  b.seq = seq;
  return b;
}

Result<std::vector<int64_t>>
tra::engine::readTokenIds(const std::string &path) {
  Result<HostTensor> t = rt::readNpy(path);
  if (!t)
    return t.error();
  if (t->rank() != 1 ||
      (t->dtype() != rt::DType::I64 && t->dtype() != rt::DType::I32))
    return rt::fileError(path, "is not a 1-D int32 or int64 array of token "
                               "ids");
  std::vector<int64_t> ids(size_t(t->numElements()));
  for (int64_t i = 0; i < t->numElements(); ++i)
    ids[size_t(i)] = int64_t(t->loadAsDouble(i));
  return ids;
}

/// (a * b) mod n for non-negative a, b and positive n, without overflow.
static int64_t mulMod(int64_t a, int64_t b, int64_t n) {
  return int64_t((unsigned __int128)(a % n) * (unsigned __int128)(b % n) %
                 (unsigned __int128)n);
}

void TokenBatches::get(int64_t index, std::vector<int64_t> &tokens,
                       std::vector<int64_t> &targets) const {
  int64_t n = int64_t(stream.size());
  tokens.resize(batch * seq);
  targets.resize(batch * seq);
  for (int64_t b = 0; b < batch; ++b) {
    // Windows follow each other through the stream, wrapping around:
    // window index * batch + b starts at token (that * seq) mod n, computed
    // mod n so that no step number overflows.
    int64_t window = (mulMod(index, batch, n) + b % n) % n;
    int64_t start = mulMod(window, seq, n);
    for (int64_t s = 0; s < seq; ++s) {
      tokens[b * seq + s] = stream[(start + s) % n];
      targets[b * seq + s] = stream[(start + s + 1) % n];
    }
  }
}

//===----------------------------------------------------------------------===//
// Trainer
//===----------------------------------------------------------------------===//

static std::vector<int64_t> infoShape(const TraExecTensorInfo &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Result<TrainStepTensors> TrainStepTensors::read(const TraExecProgram &p,
                                                const std::string &file,
                                                const rt::LlamaParams &params) {
  TrainStepTensors t;
  auto findOutput = [&](const std::string &name) -> int64_t {
    for (int64_t o = 0; o < p.numOutputs; ++o)
      if (name == p.outputs[o].name)
        return o;
    return -1;
  };
  std::set<std::string> weights;
  for (const auto &[name, shape] : rt::llamaWeightShapes(params))
    weights.insert(name);
  std::vector<int64_t> ropeShape = {params.maxSeqLen, params.headDim() / 2};
  for (int64_t i = 0; i < p.numInputs; ++i) {
    const TraExecTensorInfo &info = p.inputs[i];
    std::string name = info.name;
    std::vector<int64_t> shape = infoShape(info);
    if (name == "tokens" || name == "targets") {
      if (info.dtype != TRA_EXEC_I64 || shape.size() != 2)
        return rt::fileError(file, "input 'tokens'/'targets' is not an "
                                   "i64 [batch, seq] tensor");
      (name == "tokens" ? t.tokens : t.targets) = i;
      t.batch = shape[0];
      t.seq = shape[1];
      continue;
    }
    if (info.dtype != TRA_EXEC_F32)
      return rt::fileError(file, "input " + rt::quoteName(name) +
                                     " is not f32: not a training step "
                                     "program");
    if (name == "freqs_cos" || name == "freqs_sin") {
      if (shape != ropeShape)
        return rt::fileError(file, "its rotary tables are not " +
                                       shapeText(ropeShape));
      (name == "freqs_cos" ? t.cos : t.sin) = i;
      continue;
    }
    if (name == "lr" || name == "step") {
      if (!shape.empty())
        return rt::fileError(file, "input " + rt::quoteName(name) +
                                       " is not a scalar");
      (name == "lr" ? t.lr : t.step) = i;
      continue;
    }
    Parameter parameter;
    parameter.name = name;
    parameter.input = i;
    parameter.output = findOutput(name + "_out");
    if (parameter.output < 0)
      return rt::fileError(file, "input " + rt::quoteName(name) +
                                     " has no output " +
                                     rt::quoteName(name + "_out"));
    parameter.isState = !weights.erase(name);
    t.parameters.push_back(std::move(parameter));
  }
  t.loss = findOutput("loss");
  t.gradNorm = findOutput("grad_norm");
  if (t.tokens < 0 || t.targets < 0 || t.cos < 0 || t.sin < 0 || t.lr < 0 ||
      t.loss < 0 || t.gradNorm < 0)
    return rt::fileError(file, "not a LLaMA training step program (it needs "
                               "tokens, targets, freqs_cos, freqs_sin, lr; "
                               "loss and grad_norm)");
  // Every weight of the model must be a parameter of the step.
  if (!weights.empty())
    return rt::fileError(file, "the model's weight " +
                                   rt::quoteName(*weights.begin()) +
                                   " is not among the weights the step "
                                   "reads");
  return t;
}

Result<std::unique_ptr<Trainer>>
Trainer::create(std::unique_ptr<exec::ProgramLibrary> program,
                const rt::LlamaParams &params,
                const std::vector<std::pair<std::string, HostTensor>> &weights,
                const std::vector<rt::NamedTensor> &states, int64_t stepsDone) {
  const TraExecProgram &p = program->program();
  const std::string &file = program->path();
  Result<TrainStepTensors> roles = TrainStepTensors::read(p, file, params);
  if (!roles)
    return roles.error();
  std::unique_ptr<Trainer> t(new Trainer());
  t->params = params;
  t->done = stepsDone;
  t->batchSize = roles->batch;
  t->sequence = roles->seq;
  t->tokensIn = roles->tokens;
  t->targetsIn = roles->targets;
  t->cosIn = roles->cos;
  t->sinIn = roles->sin;
  t->lrIn = roles->lr;
  t->stepIn = roles->step;
  t->lossOut = roles->loss;
  t->normOut = roles->gradNorm;
  for (const TrainStepTensors::Parameter &parameter : roles->parameters) {
    std::vector<int64_t> shape = infoShape(p.inputs[parameter.input]);
    Slot slot;
    slot.name = parameter.name;
    slot.input = parameter.input;
    slot.output = parameter.output;
    slot.isState = parameter.isState;
    const HostTensor *given = nullptr;
    if (!slot.isState) {
      for (const auto &[n, w] : weights)
        if (n == slot.name)
          given = &w;
      if (!given)
        return Error{"the training step " + file + " reads the weight " +
                     rt::quoteName(slot.name) + ", which is not given"};
    } else {
      for (const rt::NamedTensor &s : states)
        if (s.name == slot.name)
          given = &s.tensor;
    }
    if (given) {
      if (given->shape() != shape)
        return Error{"tensor " + rt::quoteName(slot.name) + " has shape " +
                     shapeText(given->shape()) + " but the training step " +
                     file + " reads " + shapeText(shape)};
      slot.value = rt::convert(*given, rt::DType::F32);
    } else {
      slot.value = HostTensor::zeros(rt::DType::F32, shape);
    }
    t->slots.push_back(std::move(slot));
  }
  std::vector<float> cos, sin;
  rt::computeRopeTables(params, cos, sin);
  std::vector<int64_t> ropeShape = {params.maxSeqLen, params.headDim() / 2};
  t->cosTable = HostTensor::copyOf(rt::DType::F32, ropeShape, cos.data());
  t->sinTable = HostTensor::copyOf(rt::DType::F32, ropeShape, sin.data());
  t->tokens = HostTensor::zeros(rt::DType::I64, {t->batchSize, t->sequence});
  t->targets = HostTensor::zeros(rt::DType::I64, {t->batchSize, t->sequence});
  t->lr = HostTensor::zeros(rt::DType::F32, {});
  t->stepNumber = HostTensor::zeros(rt::DType::F32, {});
  for (int64_t o = 0; o < p.numOutputs; ++o)
    t->outputs.push_back(
        HostTensor::zeros(rt::DType::F32, infoShape(p.outputs[o])));
  t->program = std::move(program);
  return t;
}

Result<TrainStepStats> Trainer::step(const std::vector<int64_t> &tok,
                                     const std::vector<int64_t> &tgt,
                                     double rate) {
  size_t n = size_t(batchSize * sequence);
  if (tok.size() != n || tgt.size() != n)
    return Error{"a training step takes " + std::to_string(n) +
                 " tokens and targets"};
  for (size_t i = 0; i < n; ++i) {
    tokens.store<int64_t>(int64_t(i), tok[i]);
    targets.store<int64_t>(int64_t(i), tgt[i]);
  }
  lr.store<float>(0, float(rate));
  stepNumber.store<float>(0, float(done + 1));
  const TraExecProgram &p = program->program();
  std::vector<void *> buffers(size_t(p.numInputs + p.numOutputs));
  buffers[tokensIn] = tokens.mutableData();
  buffers[targetsIn] = targets.mutableData();
  buffers[cosIn] = cosTable.mutableData();
  buffers[sinIn] = sinTable.mutableData();
  buffers[lrIn] = lr.mutableData();
  if (stepIn >= 0)
    buffers[stepIn] = stepNumber.mutableData();
  for (Slot &s : slots)
    buffers[s.input] = s.value.mutableData();
  for (int64_t o = 0; o < p.numOutputs; ++o)
    buffers[p.numInputs + o] = outputs[o].mutableData();
  if (rt::Status status = program->run(buffers.data()); !status)
    return Error{"step " + std::to_string(done + 1) + ": " + status.message()};
  TrainStepStats stats;
  stats.loss = outputs[lossOut].load<float>(0);
  stats.gradNorm = outputs[normOut].load<float>(0);
  stats.lr = rate;
  if (!std::isfinite(stats.loss) || !std::isfinite(stats.gradNorm))
    return Error{"step " + std::to_string(done + 1) + ": the loss (" +
                 std::to_string(stats.loss) + ") or the gradient norm (" +
                 std::to_string(stats.gradNorm) +
                 ") is not finite; the step is not taken (a lower "
                 "learning rate or --clip-norm may help)"};
  // The outputs become the next step's inputs.
  for (Slot &s : slots)
    std::swap(s.value, outputs[s.output]);
  ++done;
  return stats;
}

rt::LlamaCheckpoint Trainer::weights() const {
  rt::LlamaCheckpoint ckpt;
  ckpt.params = params;
  for (const auto &[name, shape] : rt::llamaWeightShapes(params))
    for (const Slot &s : slots)
      if (s.name == name && !s.isState)
        ckpt.weights.push_back({name, s.value});
  return ckpt;
}

std::vector<rt::NamedTensor> Trainer::states() const {
  std::vector<rt::NamedTensor> out;
  for (const Slot &s : slots)
    if (s.isState)
      out.push_back({s.name, s.value});
  return out;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

/// The model's hyper-parameters as safetensors metadata.
static rt::SafetensorsMetadata paramsMetadata(const rt::LlamaParams &p) {
  return {{"dim", std::to_string(p.dim)},
          {"hidden_dim", std::to_string(p.hiddenDim)},
          {"n_layers", std::to_string(p.nLayers)},
          {"n_heads", std::to_string(p.nHeads)},
          {"n_kv_heads", std::to_string(p.nKvHeads)},
          {"vocab_size", std::to_string(p.vocabSize)},
          {"max_seq_len", std::to_string(p.maxSeqLen)},
          {"shared_classifier", p.sharedClassifier ? "true" : "false"}};
}

Status tra::engine::writeTrainingCheckpoint(
    const std::string &dir, const rt::LlamaCheckpoint &weights,
    const std::vector<rt::NamedTensor> &states, int64_t step,
    const rt::SafetensorsMetadata &metadata) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec))
    return rt::fileError(dir, "exists already; a checkpoint is written into "
                              "a new directory");
  std::string temp = dir + ".tmp." + std::to_string(::getpid());
  fs::remove_all(temp, ec);
  if (!fs::create_directories(temp, ec))
    return rt::fileError(temp, "cannot create the directory: " + ec.message());
  auto fail = [&](Status s) {
    fs::remove_all(temp, ec);
    return s;
  };
  if (Status s = rt::writeLlama2c(temp + "/model.bin", weights); !s.ok())
    return fail(s);
  std::vector<rt::NamedTensor> named;
  for (const auto &[name, tensor] : weights.weights)
    named.push_back({name, tensor});
  if (Status s = rt::writeSafetensors(temp + "/model.safetensors", named,
                                      paramsMetadata(weights.params));
      !s.ok())
    return fail(s);
  rt::SafetensorsMetadata meta = metadata;
  meta.push_back({"step", std::to_string(step)});
  if (Status s =
          rt::writeSafetensors(temp + "/optimizer.safetensors", states, meta);
      !s.ok())
    return fail(s);
  fs::rename(temp, dir, ec);
  if (ec)
    return fail(rt::fileError(dir, "cannot rename " + temp +
                                       " to it: " + ec.message()));
  // `latest` names the newest complete checkpoint.
  fs::path parent = fs::path(dir).parent_path();
  std::string latest =
      (parent.empty() ? fs::path("latest") : parent / "latest").string();
  auto writer = rt::AtomicFileWriter::create(latest);
  if (!writer)
    return writer.error();
  std::string name = fs::path(dir).filename().string() + "\n";
  if (Status s = writer->write(name.data(), name.size()); !s.ok())
    return s;
  return writer->commit();
}

Result<TrainingCheckpoint>
tra::engine::readTrainingCheckpoint(const std::string &path) {
  namespace fs = std::filesystem;
  std::string dir = path;
  std::error_code ec;
  if (fs::is_regular_file(fs::path(path) / "latest", ec)) {
    auto text = rt::readFile((fs::path(path) / "latest").string());
    if (!text)
      return text.error();
    std::string name = *text;
    while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
      name.pop_back();
    if (name.empty() || name.find('/') != std::string::npos)
      return rt::fileError((fs::path(path) / "latest").string(),
                           "does not name a checkpoint directory");
    dir = (fs::path(path) / name).string();
  }
  TrainingCheckpoint ckpt;
  auto weights = rt::readLlama2c(dir + "/model.bin");
  if (!weights)
    return weights.error();
  ckpt.weights = std::move(*weights);
  std::string optimizer = dir + "/optimizer.safetensors";
  auto file = rt::SafetensorsFile::open(optimizer);
  if (!file)
    return file.error();
  for (const rt::SafetensorsEntry &entry : file->tensors()) {
    auto tensor = file->get(entry.name);
    if (!tensor)
      return tensor.error();
    ckpt.states.push_back({entry.name, std::move(*tensor)});
  }
  ckpt.metadata = file->metadata();
  bool haveStep = false;
  for (const auto &[key, value] : ckpt.metadata) {
    if (key != "step")
      continue;
    char *end = nullptr;
    errno = 0;
    long long s = std::strtoll(value.c_str(), &end, 10);
    if (errno || end == value.c_str() || *end || s < 0)
      return rt::fileError(optimizer, "metadata 'step' is not a step "
                                      "number: '" +
                                          value + "'");
    ckpt.step = s;
    haveStep = true;
  }
  if (!haveStep)
    return rt::fileError(optimizer, "has no 'step' in its metadata: not a "
                                    "tra training checkpoint");
  return ckpt;
}
