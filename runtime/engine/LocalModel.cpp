//===- LocalModel.cpp - A LLaMA model run in this process -----------------===//

#include "tra/Engine/LocalModel.h"

#include "tra/Engine/StepTensors.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Tensor.h"

#include <algorithm>

using namespace tra;
using namespace tra::engine;

namespace {
/// "f32[2, 3]".
std::string describe(int64_t dtype, const std::vector<int64_t> &shape) {
  static const char *const names[] = {"f32", "f16", "bf16", "i64", "i32", "i1"};
  std::string s =
      dtype >= TRA_EXEC_F32 && dtype <= TRA_EXEC_BOOL ? names[dtype] : "?";
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
                       int64_t numThreads)
    : p(checkpoint.params), threads(std::max<int64_t>(1, numThreads)) {
  rt::computeRopeTables(p, cosTable, sinTable);
  for (auto &[name, t] : checkpoint.weights) {
    if (t.dtype() == rt::DType::F32) {
      // Used in place from the mapped checkpoint: bring it into memory now,
      // as loading copies would, not page by page in the first step.
      rt::prefaultPages(t.data(), size_t(t.numElements()) * sizeof(float));
      weights[name] = {&t, t.data()};
      continue;
    }
    // Not f32 (a Meta checkpoint in f16/bf16): convert once.
    std::vector<float> &copy = converted[name];
    copy.resize(size_t(t.numElements()));
    for (int64_t i = 0; i < t.numElements(); ++i)
      copy[size_t(i)] = float(t.loadAsDouble(i));
    weights[name] = {&t, copy.data()};
  }
  size_t cacheElements = size_t(p.maxSeqLen * p.nKvHeads * p.headDim());
  for (auto &set : caches) {
    set.resize(size_t(2 * p.nLayers));
    for (std::vector<float> &cache : set)
      cache.assign(cacheElements, 0.0f);
  }
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
  // The engine keeps weights and caches in host memory: a GPU program's
  // `run` would read them as device pointers.
  if (desc.device != TRA_EXEC_HOST)
    return rt::fileError(path, "a program compiled for an NVIDIA GPU; the "
                               "engine runs host programs only (compile the "
                               "step with --emulate-on-cpu)");
  int64_t seq = 0;
  for (int64_t i = 0; i < desc.numInputs; ++i)
    if (classifyStepInput(desc.inputs[i].name, p.nLayers).kind ==
            StepTensorKind::Tokens &&
        desc.inputs[i].rank == 1)
      seq = desc.inputs[i].shape[0];
  if (seq < 1)
    return rt::fileError(path, "@forward has no input 'tokens' of one "
                               "dimension (not a LLaMA step program)");
  if (programs.count(seq))
    return rt::fileError(path, "a second program for " + std::to_string(seq) +
                                   " tokens per step");
  // Bound in place: the buffer table points into the program (its `pos`).
  Program &program = programs[seq];
  program.seq = seq;
  program.library = std::move(library);
  if (rt::Status status = bind(program); !status) {
    programs.erase(seq);
    return status;
  }
  program.library->setNumThreads(threads);
  return rt::Status::success();
}

rt::Status LocalModel::bind(Program &program) {
  const TraExecProgram &desc = program.library->program();
  const std::string &path = program.library->path();
  const int64_t seq = program.seq;
  program.tokens.assign(size_t(seq), 0);
  program.logits.assign(size_t(seq * p.vocabSize), 0.0f);
  program.buffers.assign(size_t(desc.numInputs + desc.numOutputs), nullptr);
  const std::vector<int64_t> caches = cacheShape(p), table = ropeTableShape(p);
  for (int64_t i = 0; i < desc.numInputs; ++i) {
    const TraExecTensorInfo &t = desc.inputs[i];
    StepTensorRole role = classifyStepInput(t.name, p.nLayers);
    void *&buffer = program.buffers[size_t(i)];
    rt::Status status;
    switch (role.kind) {
    case StepTensorKind::Tokens:
      status = expect(path, t, TRA_EXEC_I64, {seq});
      buffer = program.tokens.data();
      break;
    case StepTensorKind::Position:
      status = expect(path, t, TRA_EXEC_I64, {});
      buffer = &program.pos;
      break;
    case StepTensorKind::RopeCos:
    case StepTensorKind::RopeSin:
      status = expect(path, t, TRA_EXEC_F32, table);
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
      status = expect(path, t, TRA_EXEC_F32, w->second.tensor->shape());
      buffer = const_cast<void *>(w->second.data);
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
      status = expect(path, t, TRA_EXEC_F32, {seq, p.vocabSize});
      program.buffers[firstOutput + size_t(i)] = program.logits.data();
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
  return rt::Status::success();
}

rt::Status LocalModel::step(const std::vector<int64_t> &tokens, int64_t pos,
                            int64_t n, std::vector<double> &logits) {
  auto it = programs.find(n);
  if (it == programs.end())
    return rt::Error{"no program for " + std::to_string(n) +
                     " tokens per step"};
  Program &program = it->second;
  if (pos < 0 || n > p.maxSeqLen || pos > p.maxSeqLen - n ||
      pos + n > int64_t(tokens.size()))
    return rt::Error{"a step of " + std::to_string(n) + " tokens at position " +
                     std::to_string(pos) + " is outside the KV cache of " +
                     std::to_string(p.maxSeqLen) + " positions"};
  std::copy(tokens.begin() + pos, tokens.begin() + pos + n,
            program.tokens.begin());
  program.pos = pos;
  for (auto [slot, index] : program.cacheInputs)
    program.buffers[slot] = caches[parity][size_t(index)].data();
  for (auto [slot, index] : program.cacheOutputs)
    program.buffers[slot] = caches[!parity][size_t(index)].data();
  program.library->run(program.buffers.data());
  parity = !parity;
  // Sampling reads the last row; the others are for --logits-out.
  size_t first = allRows ? 0 : size_t(program.seq - 1) * size_t(p.vocabSize);
  logits.assign(program.logits.begin() + first, program.logits.end());
  return rt::Status::success();
}

void LocalModel::resetCaches() {
  for (auto &set : caches)
    for (std::vector<float> &cache : set)
      std::fill(cache.begin(), cache.end(), 0.0f);
  parity = false;
}
