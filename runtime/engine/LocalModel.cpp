//===- LocalModel.cpp - A LLaMA model run in this process -----------------===//

#include "tra/Engine/LocalModel.h"

#include "tra/Engine/StepChunks.h"
#include "tra/Engine/StepTensors.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Tensor.h"

#include <algorithm>

using namespace tra;
using namespace tra::engine;

namespace {
/// "f32[2, 3]".
std::string describe(int64_t dtype, const std::vector<int64_t> &shape) {
  static const char *const names[] = {"f32", "f16", "bf16", "i64",
                                      "i32", "i1",  "i8"};
  std::string s =
      dtype >= TRA_EXEC_F32 && dtype <= TRA_EXEC_I8 ? names[dtype] : "?";
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Checks that the program's tensor `info` is `dtype[shape]`.
rt::Status expect(const std::string &path, const TraExecTensorInfo &info,
                  int64_t dtype, const std::vector<int64_t> &shape) {
  std::vector<int64_t> actual(info.shape, info.shape + info.rank);
  if (info.dtype == dtype && actual == shape)
    return rt::Status::success();
  return rt::fileError(path, "@" + std::string("forward's ") + info.name +
                                 " is " + describe(info.dtype, actual) +
                                 ", but the model's buffer is " +
                                 describe(dtype, shape));
}
} // namespace

LocalModel::LocalModel(const rt::LlamaCheckpoint &checkpoint,
                       int64_t numThreads, const exec::Accelerator *accelerator)
    : p(checkpoint.params), threads(std::max<int64_t>(1, numThreads)),
      accelerator(accelerator) {
  device.setAccelerator(accelerator);
  rt::computeRopeTables(p, cosTable, sinTable);
  // Used in place from the mapped checkpoint; brought into memory when a
  // program binds them (bind), unless the plan streams them from disk.
  for (auto &[name, t] : checkpoint.weights)
    weights[name] = &t;
  // On a GPU the caches live in device memory (prepareDevice). The second
  // set only for a program that cannot update them in place.
  if (!accelerator)
    (void)allocateCacheSet(0);
}

LocalModel::~LocalModel() {
  // The programs go first: they may still hold work on the device (the
  // device buffers go with the members).
  programs.clear();
  // Before the weights' memory goes (the converted copies with the members,
  // the checkpoint after the model).
  for (auto &[host, isPinned] : pinnedWeights)
    if (isPinned)
      accelerator->unpinHost(host);
}

rt::Status LocalModel::prepareDevice() {
  if (devicePrepared)
    return rt::Status::success();
  if (rt::Status status = accelerator->initialize(); !status)
    return status;
  size_t tableBytes = cosTable.size() * sizeof(float);
  rt::Result<void *> cos = device.buffer(cosTable.data(), tableBytes);
  if (!cos)
    return cos.status();
  rt::Result<void *> sin = device.buffer(sinTable.data(), tableBytes);
  if (!sin)
    return sin.status();
  deviceCos = *cos;
  deviceSin = *sin;
  if (rt::Status status = allocateCacheSet(0); !status)
    return status;
  devicePrepared = true;
  return rt::Status::success();
}

const void *LocalModel::hostWeight(const rt::HostTensor &weight,
                                   const std::string &name, bool widen) {
  if (!widen)
    return weight.data();
  // A 16-bit weight read as f32 by the program: converted once.
  std::vector<float> &copy = converted[name];
  if (copy.empty()) {
    copy.resize(size_t(weight.numElements()));
    for (int64_t i = 0; i < weight.numElements(); ++i)
      copy[size_t(i)] = float(weight.loadAsDouble(i));
  }
  return copy.data();
}

rt::Result<void *> LocalModel::deviceWeight(const rt::HostTensor &weight,
                                            const std::string &name,
                                            bool widen) {
  auto found = deviceWeights.find({name, widen});
  if (found != deviceWeights.end())
    return found->second;
  size_t bytes = size_t(weight.numElements()) *
                 (widen ? sizeof(float) : dtypeSize(weight.dtype()));
  rt::Result<void *> copy =
      device.buffer(hostWeight(weight, name, widen), bytes);
  if (!copy)
    return copy.error();
  deviceWeights[{name, widen}] = *copy;
  return *copy;
}

void LocalModel::pinHostWeight(void *host, size_t bytes) {
  if (!accelerator->pinHost || !accelerator->unpinHost)
    return;
  // Tried once per buffer (programs share weights): a failure leaves it
  // pageable, and trying again would fail again.
  auto [entry, added] = pinnedWeights.emplace(host, false);
  if (added)
    entry->second = bool(accelerator->pinHost(host, bytes));
}

rt::Status
LocalModel::addProgram(std::unique_ptr<exec::ProgramLibrary> library) {
  const std::string &path = library->path();
  if (library->isDistributed())
    return rt::fileError(path, "a distributed program of " +
                                   std::to_string(library->program().numRanks) +
                                   " ranks (tra-llama-worker runs those "
                                   "under mpirun)");
  const TraExecProgram &desc = library->program();
  // A GPU program's `run` reads device pointers, a host program's host
  // memory: the model's buffers must be the program's kind.
  if (desc.device == TRA_EXEC_CUDA && !accelerator)
    return rt::fileError(path, "a program compiled for an NVIDIA GPU, but "
                               "this model keeps its buffers in host memory "
                               "(no accelerator)");
  if (desc.device != TRA_EXEC_CUDA && accelerator)
    return rt::fileError(path, "a program compiled for the host, but this "
                               "model keeps its buffers on the GPU");
  if (accelerator)
    if (rt::Status status = prepareDevice(); !status)
      return rt::fileError(path, status.message());
  int64_t seq = 0;
  for (int64_t i = 0; i < desc.numInputs; ++i)
    if (classifyStepInput(desc.inputs[i].name, p.nLayers).kind ==
            StepTensorKind::Tokens &&
        desc.inputs[i].rank == 1)
      seq = desc.inputs[i].shape[0];
  if (seq < 1)
    return rt::fileError(path, "@forward has no input 'tokens' of one "
                               "dimension (not a LLaMA step program)");
  bool oneRow = false;
  for (int64_t i = 0; i < desc.numInputs; ++i)
    oneRow |= classifyStepInput(desc.inputs[i].name, p.nLayers).kind ==
              StepTensorKind::LogitsRow;
  const std::pair<int64_t, bool> key(seq, oneRow);
  if (programs.count(key))
    return rt::fileError(
        path, std::string("a second program for ") + std::to_string(seq) +
                  " tokens per step computing " +
                  (oneRow ? "the last row" : "every row") + " of logits");
  // Bound in place: the buffer table points into the program (its `pos`).
  Program &program = programs[key];
  program.seq = seq;
  program.oneRow = oneRow;
  program.library = std::move(library);
  if (rt::Status status = bind(program); !status) {
    programs.erase(key);
    return status;
  }
  program.library->setNumThreads(threads);
  return rt::Status::success();
}

rt::Status LocalModel::bind(Program &program) {
  const TraExecProgram &desc = program.library->program();
  const std::string &path = program.library->path();
  const int64_t seq = program.seq;
  const int64_t rows = program.oneRow ? 1 : seq;
  program.tokens.assign(size_t(seq), 0);
  program.logits.assign(size_t(rows * p.vocabSize), 0.0f);
  program.buffers.assign(size_t(desc.numInputs + desc.numOutputs), nullptr);
  if (accelerator) {
    rt::Result<void *> tokens =
        device.buffer(nullptr, program.tokens.size() * sizeof(int64_t));
    rt::Result<void *> position = device.buffer(nullptr, sizeof(int64_t));
    rt::Result<void *> row = device.buffer(nullptr, sizeof(int64_t));
    rt::Result<void *> logits =
        device.buffer(nullptr, program.logits.size() * sizeof(float));
    for (const rt::Result<void *> *buffer : {&tokens, &position, &row, &logits})
      if (!*buffer)
        return rt::fileError(path, buffer->message());
    program.deviceTokens = *tokens;
    program.devicePos = *position;
    program.deviceLogitsRow = *row;
    program.deviceLogits = *logits;
  }
  const std::vector<int64_t> caches = cacheShape(p), table = ropeTableShape(p);
  for (int64_t i = 0; i < desc.numInputs; ++i) {
    const TraExecTensorInfo &t = desc.inputs[i];
    StepTensorRole role = classifyStepInput(t.name, p.nLayers);
    void *&buffer = program.buffers[size_t(i)];
    rt::Status status;
    switch (role.kind) {
    case StepTensorKind::Tokens:
      status = expect(path, t, TRA_EXEC_I64, {seq});
      buffer = accelerator ? program.deviceTokens : program.tokens.data();
      break;
    case StepTensorKind::Position:
      status = expect(path, t, TRA_EXEC_I64, {});
      buffer = accelerator ? program.devicePos : &program.pos;
      break;
    case StepTensorKind::LogitsRow:
      status = expect(path, t, TRA_EXEC_I64, {});
      buffer = accelerator ? program.deviceLogitsRow : &program.logitsRow;
      break;
    case StepTensorKind::RopeCos:
    case StepTensorKind::RopeSin:
      status = expect(path, t, TRA_EXEC_F32, table);
      if (accelerator)
        buffer = role.kind == StepTensorKind::RopeCos ? deviceCos : deviceSin;
      else
        buffer = const_cast<float *>(role.kind == StepTensorKind::RopeCos
                                         ? cosTable.data()
                                         : sinTable.data());
      break;
    case StepTensorKind::Cache:
      status = expect(path, t, TRA_EXEC_F32, caches);
      program.cacheInputs.push_back({size_t(i), role.cache});
      break;
    case StepTensorKind::Logits:
    case StepTensorKind::Other:
      auto w = weights.find(t.name);
      if (w == weights.end())
        return rt::fileError(path, "@forward reads '" + std::string(t.name) +
                                       "', which the checkpoint does not "
                                       "have");
      // A weight is read in its checkpoint dtype (in place, 16-bit weights
      // staying 16-bit) or, by a program built for f32 weights, as f32 (not
      // the i8 values of a Q8_0 weight: they mean nothing without scales).
      const rt::HostTensor &weight = *w->second;
      int64_t own = weightABIType(weight.dtype());
      bool widen = t.dtype == TRA_EXEC_F32 &&
                   (own == TRA_EXEC_F16 || own == TRA_EXEC_BF16);
      if (t.dtype != own && !widen)
        return rt::fileError(
            path, "@forward reads '" + std::string(t.name) + "' as " +
                      describe(t.dtype, weight.shape()) +
                      ", but the checkpoint holds it as " +
                      describe(own, weight.shape()) +
                      " (a step program reads a weight in the checkpoint's "
                      "dtype or as f32)");
      status = expect(path, t, t.dtype, weight.shape());
      if (!status)
        return status;
      // Brought into memory now, as loading copies would, not page by page
      // in the first step; a weight the plan keeps on disk is read from the
      // mapped checkpoint by each fetch instead.
      if (t.tier != TRA_EXEC_TIER_DISK && prefaulted.insert(t.name).second)
        rt::prefaultPages(weight.data(), size_t(weight.numElements()) *
                                             dtypeSize(weight.dtype()));
      // A weight the plan keeps in a memory tier stays in host memory: the
      // program copies it to the GPU before each use (tra_comm.fetch).
      if (accelerator && t.tier == TRA_EXEC_TIER_DEVICE) {
        rt::Result<void *> copy = deviceWeight(weight, t.name, widen);
        if (!copy)
          return rt::fileError(path, "copying '" + std::string(t.name) +
                                         "' to the GPU: " + copy.message());
        buffer = *copy;
      } else {
        buffer = const_cast<void *>(hostWeight(weight, t.name, widen));
        if (accelerator && t.tier == TRA_EXEC_TIER_HOST)
          pinHostWeight(
              buffer, size_t(weight.numElements()) *
                          (widen ? sizeof(float) : dtypeSize(weight.dtype())));
      }
      break;
    }
    if (!status)
      return status;
  }
  size_t firstOutput = size_t(desc.numInputs);
  for (int64_t i = 0; i < desc.numOutputs; ++i) {
    const TraExecTensorInfo &t = desc.outputs[i];
    StepTensorRole role = classifyStepOutput(t.name, p.nLayers);
    rt::Status status;
    if (role.kind == StepTensorKind::Logits) {
      status = expect(path, t, TRA_EXEC_F32, {rows, p.vocabSize});
      program.buffers[firstOutput + size_t(i)] =
          accelerator ? program.deviceLogits : program.logits.data();
    } else if (role.kind == StepTensorKind::Cache) {
      status = expect(path, t, TRA_EXEC_F32, caches);
      program.cacheOutputs.push_back({firstOutput + size_t(i), role.cache});
    } else {
      return rt::fileError(path, "@forward returns '" + std::string(t.name) +
                                     "', which is not a LLaMA step result");
    }
    if (!status)
      return status;
  }
  if (program.cacheInputs.size() != size_t(2 * p.nLayers) ||
      program.cacheOutputs.size() != size_t(2 * p.nLayers))
    return rt::fileError(path, "@forward does not pass every KV cache of the " +
                                   std::to_string(p.nLayers) + "-layer model");
  // Updated in place when the program allows every cache output to be its
  // input's buffer (tra-alias-entry-outputs): no copy of the caches.
  std::map<int64_t, size_t> inputSlot;
  for (auto [slot, index] : program.cacheInputs)
    inputSlot[index] = slot;
  program.cachesInPlace = true;
  for (auto [slot, index] : program.cacheOutputs)
    program.cachesInPlace &=
        program.library->outputAliasedInput(slot - firstOutput) ==
        int64_t(inputSlot[index]);
  return rt::Status::success();
}

std::vector<int64_t> LocalModel::programLengths() const {
  std::vector<int64_t> lengths;
  for (const auto &entry : programs)
    if (lengths.empty() || lengths.back() != entry.first.first)
      lengths.push_back(entry.first.first);
  return lengths;
}

bool LocalModel::hasProgram(int64_t seq) const {
  return hasProgram(seq, false) || hasProgram(seq, true);
}

std::vector<std::string> LocalModel::tierFetchReport() const {
  std::vector<std::string> lines;
  for (const auto &[key, program] : programs) {
    std::string fetched = program.library->describeTierFetches();
    // Named as the note of its plan names it; "last row" where the model
    // also has the all-row program of the length.
    bool both = programs.count({key.first, !key.second}) != 0;
    if (!fetched.empty())
      lines.push_back(describeStepProgram(key.first) +
                      (both && key.second ? " (last row)" : "") + ": " +
                      fetched);
  }
  return lines;
}

rt::Status LocalModel::step(const std::vector<int64_t> &tokens, int64_t pos,
                            int64_t n, std::vector<double> &logits) {
  rt::Result<std::vector<StepChunk>> chunks = planStepChunks(
      programLengths(), p.maxSeqLen, int64_t(tokens.size()), pos, n);
  if (!chunks)
    return chunks.error();
  logits.clear();
  for (size_t c = 0; c < chunks->size(); ++c) {
    const StepChunk &chunk = (*chunks)[c];
    // Sampling reads the step's last row; every row is for --logits-out.
    int64_t firstRow = allRows ? 0 : chunk.count - 1;
    bool wantRows = allRows || c + 1 == chunks->size();
    // Every row needs an all-row program (a one-row one says so); the last
    // row, or none, is cheaper from a one-row program.
    auto it = programs.find({chunk.seq, !allRows});
    if (it == programs.end())
      it = programs.find({chunk.seq, allRows});
    if (rt::Status status =
            runProgram(it->second, tokens, chunk,
                       wantRows ? firstRow : chunk.count, logits);
        !status)
      return status;
  }
  return rt::Status::success();
}

rt::Status LocalModel::allocateCacheSet(int set) {
  const size_t elements = size_t(p.maxSeqLen * p.nKvHeads * p.headDim());
  if (!accelerator) {
    if (caches[set].empty())
      caches[set].assign(size_t(2 * p.nLayers),
                         std::vector<float>(elements, 0.0f));
    return rt::Status::success();
  }
  while (deviceCaches[set].size() < size_t(2 * p.nLayers)) {
    rt::Result<void *> cache = device.buffer(nullptr, elements * sizeof(float));
    if (!cache)
      return cache.status();
    deviceCaches[set].push_back(*cache);
  }
  return rt::Status::success();
}

rt::Status LocalModel::runProgram(Program &program,
                                  const std::vector<int64_t> &tokens,
                                  const StepChunk &chunk, int64_t firstRow,
                                  std::vector<double> &logits) {
  // The chunk's tokens, then padding (token 0) up to the program's length.
  std::fill(std::copy(tokens.begin() + chunk.pos,
                      tokens.begin() + chunk.pos + chunk.count,
                      program.tokens.begin()),
            program.tokens.end(), 0);
  program.pos = chunk.pos;
  // Rows [firstRow, count) of the logits come back (none if firstRow is
  // count); a one-row program computes the chunk's last row, at row 0.
  const size_t vocab = size_t(p.vocabSize);
  size_t first = size_t(firstRow) * vocab, last = size_t(chunk.count) * vocab;
  if (program.oneRow) {
    if (firstRow < chunk.count - 1)
      return rt::fileError(program.library->path(),
                           "this step program computes the logits of the "
                           "last token only; every row was asked for (a "
                           "program built without lastRowLogits gives them)");
    program.logitsRow = chunk.count - 1;
    first = firstRow == chunk.count ? vocab : 0;
    last = vocab;
  }
  // A program that copies its caches writes the other set (made now).
  if (!program.cachesInPlace)
    if (rt::Status status = allocateCacheSet(1); !status)
      return status;
  if (accelerator) {
    for (auto [slot, index] : program.cacheInputs)
      program.buffers[slot] = deviceCaches[parity][size_t(index)];
    for (auto [slot, index] : program.cacheOutputs)
      program.buffers[slot] =
          deviceCaches[parity != !program.cachesInPlace][size_t(index)];
    rt::Status status =
        accelerator->copyToDevice(program.deviceTokens, program.tokens.data(),
                                  program.tokens.size() * sizeof(int64_t));
    if (status)
      status = accelerator->copyToDevice(program.devicePos, &program.pos,
                                         sizeof(int64_t));
    if (status && program.oneRow)
      status = accelerator->copyToDevice(program.deviceLogitsRow,
                                         &program.logitsRow, sizeof(int64_t));
    if (status) {
      // The step's checks ran on the host when its work was issued.
      status = program.library->run(program.buffers.data());
      // The logits are on the host once the step's work is done: only the
      // rows asked for.
      if (status && last > first)
        status = accelerator->copyToHost(
            program.logits.data() + first,
            static_cast<const float *>(program.deviceLogits) + first,
            (last - first) * sizeof(float));
    }
    if (!status)
      return rt::Error{"a step of " + std::to_string(chunk.count) +
                       " tokens on " + accelerator->describe() + ": " +
                       status.message()};
  } else {
    for (auto [slot, index] : program.cacheInputs)
      program.buffers[slot] = caches[parity][size_t(index)].data();
    for (auto [slot, index] : program.cacheOutputs)
      program.buffers[slot] =
          caches[parity != !program.cachesInPlace][size_t(index)].data();
    if (rt::Status status = program.library->run(program.buffers.data());
        !status)
      return rt::Error{"a step of " + std::to_string(chunk.count) +
                       " tokens: " + status.message()};
  }
  if (!program.cachesInPlace)
    parity = !parity;
  logits.insert(logits.end(), program.logits.begin() + first,
                program.logits.begin() + last);
  return rt::Status::success();
}

void LocalModel::resetCaches() {
  for (auto &set : caches)
    for (std::vector<float> &cache : set)
      std::fill(cache.begin(), cache.end(), 0.0f);
  // The device caches are cleared in stream order, before the next step.
  size_t cacheBytes =
      size_t(p.maxSeqLen * p.nKvHeads * p.headDim()) * sizeof(float);
  for (auto &set : deviceCaches)
    for (void *cache : set)
      (void)accelerator->fillZero(cache, cacheBytes);
  parity = false;
}
