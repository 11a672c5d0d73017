//===- RankModel.cpp - One MPI rank of a distributed LLaMA model ----------===//

#include "tra/Engine/RankModel.h"
#include "tra/Engine/StepChunks.h"

#include "tra/Engine/Redistribute.h"
#include "tra/Engine/StepTensors.h"

#include <algorithm>

using namespace tra;
using namespace tra::engine;

rt::Result<std::unique_ptr<RankModel>>
RankModel::load(const std::vector<std::string> &programPaths) {
  std::unique_ptr<RankModel> model(new RankModel());
  for (const std::string &path : programPaths) {
    rt::Result<std::unique_ptr<exec::ProgramLibrary>> library =
        exec::ProgramLibrary::open(path);
    if (!library)
      return library.error();
    const TraExecProgram &program = (*library)->program();
    if (!(*library)->isDistributed())
      return rt::fileError(path, "not a distributed program");
    if (!model->steps.empty() && program.numRanks != model->ranks)
      return rt::fileError(
          path, "a program of " + std::to_string(program.numRanks) +
                    " ranks, the others have " + std::to_string(model->ranks));
    if (!model->steps.empty() &&
        (program.device == TRA_EXEC_CUDA) != model->gpuPrograms)
      return rt::fileError(path, "a program for another kind of device than "
                                 "the others (GPU and host programs do not "
                                 "mix)");
    model->gpuPrograms = program.device == TRA_EXEC_CUDA;
    model->ranks = program.numRanks;
    model->planFingerprint =
        model->planFingerprint * 1000003u ^ uint64_t(program.fingerprint);
    Step step;
    step.library = std::move(*library);
    model->steps.push_back(std::move(step));
  }
  if (model->steps.empty())
    return rt::Error{"no step program"};
  return model;
}

RankModel::~RankModel() {
  // The programs go first: they may still hold work on the device (the
  // device buffers go with the members).
  steps.clear();
  // Before the weights' memory goes with the members.
  for (auto &[host, isPinned] : pinnedWeights)
    if (isPinned)
      accelerator->unpinHost(host);
}

rt::Status RankModel::init(int rank, const std::string &checkpoint,
                           int64_t maxSeqLen, int64_t threads,
                           const exec::Accelerator *gpu) {
  me = rank;
  if (gpuPrograms && !gpu)
    return rt::fileError(steps.front().library->path(),
                         "a program compiled for NVIDIA GPUs, but this rank "
                         "has no GPU runtime (runtime/cuda)");
  accelerator = gpuPrograms ? gpu : nullptr;
  device.setAccelerator(accelerator);
  checkpointPath = checkpoint;
  rt::Result<std::unique_ptr<rt::TensorSource>> opened =
      rt::openTensorSource(checkpoint);
  if (!opened)
    return opened.error();
  source = std::move(*opened);
  if (!source->llamaParams())
    return rt::fileError(checkpoint,
                         "does not state the LLaMA model's parameters");
  p = *source->llamaParams();
  if (maxSeqLen > 0)
    p.maxSeqLen = std::min(p.maxSeqLen, maxSeqLen);
  rt::computeRopeTables(p, cosTable, sinTable);
  for (Step &step : steps) {
    if (rt::Status status = bindLayouts(step); !status)
      return status;
    if (rt::Status status = bindBuffers(step, threads); !status)
      return status;
    if (accelerator)
      if (rt::Status status = placeOnDevice(step); !status)
        return rt::fileError(step.library->path(),
                             "rank " + std::to_string(me) + " on " +
                                 accelerator->describe() + ": " +
                                 status.message());
  }
  caches.resize(size_t(2 * p.nLayers));
  return rt::Status::success();
}

bool RankModel::hasProgram(int64_t seq) const {
  return std::any_of(steps.begin(), steps.end(),
                     [&](const Step &s) { return s.seq == seq; });
}

std::vector<int64_t> RankModel::programLengths() const {
  std::vector<int64_t> lengths;
  for (const Step &s : steps)
    lengths.push_back(s.seq);
  return lengths;
}

std::vector<std::string> RankModel::tierFetchReport() const {
  std::vector<std::string> lines;
  for (const Step &s : steps) {
    std::string fetched = s.library->describeTierFetches();
    if (!fetched.empty())
      lines.push_back(describeStepProgram(s.seq) + ": " + fetched);
  }
  return lines;
}

/// Finds the step length and the layouts of the caches and the logits.
rt::Status RankModel::bindLayouts(Step &step) {
  const TraExecProgram &program = step.library->program();
  const std::string &path = step.library->path();
  size_t numCaches = size_t(2 * p.nLayers);
  step.cacheIn.resize(numCaches);
  step.cacheOut.resize(numCaches);
  step.cacheInSlot.assign(numCaches, std::nullopt);
  step.cacheOutSlot.assign(numCaches, std::nullopt);
  std::vector<bool> seenIn(numCaches), seenOut(numCaches);
  bool seenLogits = false;
  auto set = [&](Layout &layout, int64_t tensor, bool output) -> rt::Status {
    rt::Result<Layout> found = layoutOf(program, tensor, output);
    if (!found)
      return rt::fileError(path, found.message());
    layout = std::move(*found);
    return rt::Status::success();
  };
  for (int64_t i = 0; i < program.numInputs; ++i) {
    const TraExecTensorInfo &info = program.inputs[i];
    StepTensorRole role = classifyStepInput(info.name, p.nLayers);
    if (role.kind == StepTensorKind::Tokens) {
      if (info.rank != 1 || info.dtype != TRA_EXEC_I64)
        return rt::fileError(path, "input 'tokens' is not i64[seq]");
      step.seq = info.shape[0];
    } else if (role.kind == StepTensorKind::LogitsRow) {
      step.oneRow = true;
    } else if (role.kind == StepTensorKind::Cache) {
      seenIn[size_t(role.cache)] = true;
      if (rt::Status s = set(step.cacheIn[size_t(role.cache)], i, false); !s)
        return s;
    }
  }
  for (int64_t i = 0; i < program.numOutputs; ++i) {
    const char *name = program.outputs[i].name;
    StepTensorRole role = classifyStepOutput(name, p.nLayers);
    if (role.kind == StepTensorKind::Cache) {
      seenOut[size_t(role.cache)] = true;
      if (rt::Status s = set(step.cacheOut[size_t(role.cache)], i, true); !s)
        return s;
    } else if (role.kind == StepTensorKind::Logits) {
      seenLogits = true;
      if (rt::Status s = set(step.logits, i, true); !s)
        return s;
    } else {
      return rt::fileError(path, "unknown @forward result '" +
                                     std::string(name) + "'");
    }
  }
  for (size_t c = 0; c < numCaches; ++c)
    if (!seenIn[c] || !seenOut[c])
      return rt::fileError(path, "@forward does not pass every KV cache of "
                                 "the " +
                                     std::to_string(p.nLayers) +
                                     "-layer model");
  if (!seenLogits || step.seq < 1)
    return rt::fileError(path, "@forward has no tokens or logits");
  return rt::Status::success();
}

/// Prepares `step`'s buffers for this rank: reads the weight tiles, cuts
/// the rotary tables, allocates the rest.
rt::Status RankModel::bindBuffers(Step &step, int64_t threads) {
  const TraExecProgram &program = step.library->program();
  const std::string &path = step.library->path();
  step.mine = &program.ranks[me];
  const TraExecRankProgram &mine = *step.mine;
  auto shapeOf = [](const TraExecTensorInfo &info) {
    return std::vector<int64_t>(info.shape, info.shape + info.rank);
  };
  step.buffers.assign(size_t(mine.numInputs + mine.numOutputs), nullptr);
  step.ownBuffers.reserve(size_t(mine.numInputs + mine.numOutputs));
  auto own = [&](size_t slot, rt::HostTensor t) {
    step.ownBuffers.push_back(std::move(t));
    step.buffers[slot] = step.ownBuffers.back().mutableData();
  };
  for (int64_t i = 0; i < mine.numInputs; ++i) {
    const TraExecTile &tile = mine.inputs[i];
    const TraExecTensorInfo &info = program.inputs[tile.tensor];
    std::string name = info.name;
    Box box = boxOf(tile, info.rank);
    size_t slot = size_t(i);
    StepTensorRole role = classifyStepInput(name, p.nLayers);
    // Weights may be 16-bit (the checkpoint's), everything else is f32 or
    // i64.
    bool weight = role.kind == StepTensorKind::Logits ||
                  role.kind == StepTensorKind::Other;
    std::optional<rt::DType> weightType = weightDType(info.dtype);
    if (weight ? !weightType
               : info.dtype != TRA_EXEC_F32 && info.dtype != TRA_EXEC_I64)
      return rt::fileError(path,
                           "input '" + name + "' is neither " +
                               (weight ? "f32, f16 nor bf16" : "f32 nor i64"));
    switch (role.kind) {
    case StepTensorKind::Tokens:
      step.tokens = {slot, box};
      own(slot, rt::HostTensor::zeros(rt::DType::I64, box.sizes));
      break;
    case StepTensorKind::Position:
      step.posSlots.push_back(slot);
      own(slot, rt::HostTensor::zeros(rt::DType::I64, {}));
      break;
    case StepTensorKind::LogitsRow:
      step.rowSlots.push_back(slot);
      own(slot, rt::HostTensor::zeros(rt::DType::I64, {}));
      break;
    case StepTensorKind::RopeCos:
    case StepTensorKind::RopeSin: {
      std::vector<int64_t> shape = ropeTableShape(p);
      if (shapeOf(info) != shape)
        return rt::fileError(path, "'" + name +
                                       "' has another shape than the "
                                       "model's rotary tables");
      rt::HostTensor part = rt::HostTensor::zeros(rt::DType::F32, box.sizes);
      const std::vector<float> &table =
          role.kind == StepTensorKind::RopeCos ? cosTable : sinTable;
      rt::copyTile(rt::DType::F32, shape,
                   reinterpret_cast<const uint8_t *>(table.data()), box.offsets,
                   box.sizes, part.mutableData());
      own(slot, std::move(part));
      break;
    }
    case StepTensorKind::Cache:
      step.cacheInSlot[size_t(role.cache)] = slot;
      break;
    case StepTensorKind::Logits:
    case StepTensorKind::Other: {
      // A weight: only this rank's tile is read (from its own file of a
      // re-split checkpoint), shared by the programs that hold the same
      // tile.
      const rt::TensorInfo *stored = source->find(name);
      if (!stored)
        return rt::fileError(checkpointPath, "no tensor '" + name + "'");
      if (stored->shape != shapeOf(info))
        return rt::fileError(
            checkpointPath,
            "tensor '" + name + "' is " + rt::formatShape(stored->shape) +
                ", the model expects " + rt::formatShape(shapeOf(info)));
      // Read in the dtype the program reads it: 16-bit weights stay 16-bit
      // where the program was built so.
      anySixteenBit |= *weightType != rt::DType::F32;
      std::string key = name + ":" + rt::dtypeName(*weightType) +
                        rt::formatShape(box.offsets) +
                        rt::formatShape(box.sizes);
      auto found = weights.find(key);
      if (found == weights.end()) {
        rt::Result<rt::HostTensor> part =
            source->readTile(name, box.offsets, box.sizes, *weightType, me);
        if (!part)
          return part.error();
        found = weights.emplace(key, std::move(*part)).first;
      }
      step.buffers[slot] = found->second.mutableData();
      break;
    }
    }
  }
  for (int64_t i = 0; i < mine.numOutputs; ++i) {
    const TraExecTile &tile = mine.outputs[i];
    const TraExecTensorInfo &info = program.outputs[tile.tensor];
    size_t slot = size_t(mine.numInputs + i);
    StepTensorRole role = classifyStepOutput(info.name, p.nLayers);
    if (role.kind == StepTensorKind::Logits) {
      step.logitsSlot = slot;
      own(slot,
          rt::HostTensor::zeros(rt::DType::F32, boxOf(tile, info.rank).sizes));
    } else {
      step.cacheOutSlot[size_t(role.cache)] = slot;
    }
  }
  step.library->setNumThreads(
      threads > 0 ? threads : std::max<int64_t>(1, program.numThreads));
  return rt::Status::success();
}

rt::Status RankModel::placeOnDevice(Step &step) {
  const TraExecProgram &program = step.library->program();
  const TraExecRankProgram &mine = *step.mine;
  // The buffers bindBuffers made on the host: weights (shared by key), and
  // the tokens, positions, rotary tables and logits of this step.
  std::map<const void *, std::string> weightKeys;
  for (auto &[key, tensor] : weights)
    weightKeys[tensor.data()] = key;
  auto bytesOf = [&](const TraExecTile &tile, const TraExecTensorInfo &info) {
    std::vector<int64_t> sizes = boxOf(tile, info.rank).sizes;
    std::optional<rt::DType> dtype = info.dtype == TRA_EXEC_I64
                                         ? std::optional(rt::DType::I64)
                                         : weightDType(info.dtype);
    return size_t(*rt::shapeByteSize(*dtype, sizes));
  };
  for (int64_t i = 0; i < mine.numInputs + mine.numOutputs; ++i) {
    void *&buffer = step.buffers[size_t(i)];
    if (!buffer)
      continue; // a KV cache, bound per step
    bool input = i < mine.numInputs;
    const TraExecTile &tile =
        input ? mine.inputs[i] : mine.outputs[i - mine.numInputs];
    const TraExecTensorInfo &info =
        input ? program.inputs[tile.tensor] : program.outputs[tile.tensor];
    size_t bytes = bytesOf(tile, info);
    if (auto key = weightKeys.find(buffer); key != weightKeys.end()) {
      // A weight the plan keeps in a memory tier stays in host memory: the
      // program copies it to the GPU before each use (tra_comm.fetch).
      if (input && info.tier != TRA_EXEC_TIER_DEVICE) {
        // Pinned, those in host memory (not the disk tier's, which stay
        // paged in lazily): their fetches then copy directly and overlap
        // the kernels. Tried once per buffer (steps share weights); a
        // failure leaves it pageable.
        if (info.tier == TRA_EXEC_TIER_HOST && accelerator->pinHost &&
            accelerator->unpinHost) {
          auto [entry, added] = pinnedWeights.emplace(buffer, false);
          if (added)
            entry->second = bool(accelerator->pinHost(buffer, bytes));
        }
        continue;
      }
      void *&copy = deviceWeights[key->second];
      if (!copy) {
        rt::Result<void *> placed = device.buffer(buffer, bytes);
        if (!placed)
          return rt::Error{"copying '" + std::string(info.name) +
                           "' to the GPU: " + placed.message()};
        copy = *placed;
      }
      buffer = copy;
      continue;
    }
    StepTensorRole role = input ? classifyStepInput(info.name, p.nLayers)
                                : classifyStepOutput(info.name, p.nLayers);
    bool table = role.kind == StepTensorKind::RopeCos ||
                 role.kind == StepTensorKind::RopeSin;
    rt::Result<void *> placed = device.buffer(table ? buffer : nullptr, bytes);
    if (!placed)
      return placed.error();
    // Tokens and positions are filled per step, logits read back per step.
    if (!table)
      step.hostCopies[size_t(i)] = {buffer, bytes};
    buffer = *placed;
  }
  return rt::Status::success();
}

rt::Status
RankModel::bindCaches(Step &step, std::vector<rt::HostTensor> &inputs,
                      std::vector<std::pair<void *, size_t>> &deviceInputs) {
  auto cacheBytes = [](const std::optional<Box> &box) {
    return box ? size_t(*rt::shapeByteSize(rt::DType::F32, box->sizes)) : 0;
  };
  for (size_t c = 0; c < caches.size(); ++c) {
    Cache &cache = caches[c];
    const std::optional<Box> &myIn = step.cacheIn[c].tiles[size_t(me)];
    const std::optional<Box> &myOut = step.cacheOut[c].tiles[size_t(me)];
    bool relayout = cache.layout && !cache.layout->sameTiles(step.cacheIn[c]);
    if (!accelerator) {
      if (!cache.layout) {
        inputs[c] = myIn ? rt::HostTensor::zeros(rt::DType::F32, myIn->sizes)
                         : rt::HostTensor();
      } else if (!relayout) {
        inputs[c] = std::move(cache.tile);
      } else {
        rt::Result<rt::HostTensor> moved =
            redistribute(rt::DType::F32, *cache.layout, cache.tile,
                         step.cacheIn[c].tiles, me, cacheBytesMoved);
        if (!moved)
          return moved.error();
        inputs[c] = std::move(*moved);
        ++cacheRelayouts;
      }
      if (step.cacheInSlot[c])
        step.buffers[*step.cacheInSlot[c]] = inputs[c].mutableData();
      if (myOut && cache.spare.shape() != myOut->sizes)
        cache.spare = rt::HostTensor::zeros(rt::DType::F32, myOut->sizes);
      if (step.cacheOutSlot[c])
        step.buffers[*step.cacheOutSlot[c]] = cache.spare.mutableData();
      continue;
    }
    // On the GPU: the tiles stay in device memory unless they change rank.
    size_t inBytes = cacheBytes(myIn);
    void *input = nullptr;
    if (!cache.layout || relayout) {
      rt::HostTensor moved;
      if (relayout) {
        // Through host memory: the tile this rank holds, to its new owners.
        const std::optional<Box> &held = cache.layout->tiles[size_t(me)];
        rt::HostTensor tile;
        if (held) {
          tile = rt::HostTensor::zeros(rt::DType::F32, held->sizes);
          if (rt::Status s = accelerator->copyToHost(
                  tile.mutableData(), cache.deviceTile, cache.tileBytes);
              !s)
            return s;
        }
        rt::Result<rt::HostTensor> result =
            redistribute(rt::DType::F32, *cache.layout, tile,
                         step.cacheIn[c].tiles, me, cacheBytesMoved);
        if (!result)
          return result.error();
        moved = std::move(*result);
        ++cacheRelayouts;
        device.release(cache.deviceTile);
        cache.deviceTile = nullptr;
      }
      if (myIn) {
        rt::Result<void *> placed =
            device.buffer(relayout ? moved.data() : nullptr, inBytes);
        if (!placed)
          return placed.error();
        input = *placed;
      }
    } else {
      input = cache.deviceTile;
    }
    deviceInputs[c] = {input, inBytes};
    if (step.cacheInSlot[c])
      step.buffers[*step.cacheInSlot[c]] = input;
    size_t outBytes = cacheBytes(myOut);
    if (myOut && cache.spareBytes != outBytes) {
      device.release(cache.deviceSpare);
      rt::Result<void *> spare = device.buffer(nullptr, outBytes);
      if (!spare)
        return spare.error();
      cache.deviceSpare = *spare;
      cache.spareBytes = outBytes;
    }
    if (step.cacheOutSlot[c])
      step.buffers[*step.cacheOutSlot[c]] = cache.deviceSpare;
  }
  return rt::Status::success();
}

rt::Status RankModel::step(const std::vector<int64_t> &tokens, int64_t pos,
                           int64_t n, std::vector<double> &logits) {
  rt::Result<std::vector<StepChunk>> chunks = planStepChunks(
      programLengths(), p.maxSeqLen, int64_t(tokens.size()), pos, n);
  if (!chunks)
    return chunks.error();
  logits.clear();
  std::vector<int64_t> padded;
  for (size_t c = 0; c < chunks->size(); ++c) {
    const StepChunk &chunk = (*chunks)[c];
    Step *step = nullptr;
    for (Step &s : steps)
      if (s.seq == chunk.seq)
        step = &s;
    // A padded chunk reads token 0 past its real tokens.
    const std::vector<int64_t> *stepTokens = &tokens;
    if (chunk.count < chunk.seq) {
      padded.assign(tokens.begin(), tokens.begin() + chunk.pos + chunk.count);
      padded.resize(size_t(chunk.pos + chunk.seq), 0);
      stepTokens = &padded;
    }
    // Sampling reads the step's last row; every row is for --logits-out.
    bool wantRows = allRows || c + 1 == chunks->size();
    int64_t firstRow = !wantRows ? chunk.count : allRows ? 0 : chunk.count - 1;
    if (rt::Status status =
            runStep(*step, *stepTokens, chunk, firstRow, logits);
        !status)
      return status;
  }
  return rt::Status::success();
}

rt::Status RankModel::runStep(Step &program, const std::vector<int64_t> &tokens,
                              const StepChunk &chunk, int64_t firstRow,
                              std::vector<double> &logits) {
  Step *step = &program;
  const int64_t pos = chunk.pos, n = chunk.count;
  // The tokens tile and the positions: on a GPU through their host copies.
  auto hostOf = [&](size_t slot) {
    auto copy = step->hostCopies.find(slot);
    return copy == step->hostCopies.end() ? step->buffers[slot]
                                          : copy->second.first;
  };
  if (step->tokens) {
    auto &[slot, box] = *step->tokens;
    int64_t *dst = static_cast<int64_t *>(hostOf(slot));
    for (int64_t i = 0; i < box.sizes[0]; ++i)
      dst[i] = tokens[size_t(pos + box.offsets[0] + i)];
  }
  for (size_t slot : step->posSlots)
    *static_cast<int64_t *>(hostOf(slot)) = pos;
  // A one-row program computes the chunk's last row, its logits' row 0.
  int64_t rowsEnd = n;
  if (step->oneRow) {
    if (firstRow < n - 1)
      return rt::fileError(step->library->path(),
                           "this step program computes the logits of the "
                           "last token only; every row was asked for (a "
                           "program built without lastRowLogits gives them)");
    firstRow -= n - 1;
    rowsEnd = 1;
  }
  for (size_t slot : step->rowSlots)
    *static_cast<int64_t *>(hostOf(slot)) = n - 1;
  auto onDevice = [&](const rt::Status &status) -> rt::Status {
    if (status)
      return status;
    return rt::Error{"rank " + std::to_string(me) + ", a step of " +
                     std::to_string(n) + " tokens on " +
                     accelerator->describe() + ": " + status.message()};
  };
  if (accelerator)
    for (auto &[slot, copy] : step->hostCopies)
      if (slot != step->logitsSlot)
        if (rt::Status s = accelerator->copyToDevice(step->buffers[slot],
                                                     copy.first, copy.second);
            !s)
          return onDevice(s);
  // The caches: this step's input tiles from the previous step's output.
  std::vector<rt::HostTensor> inputs(caches.size());
  std::vector<std::pair<void *, size_t>> deviceInputs(caches.size());
  if (rt::Status status = bindCaches(*step, inputs, deviceInputs); !status)
    return accelerator ? onDevice(status) : status;
  // A failed run-time check is reported after the step's collectives, which
  // every rank reaches (the code goes on with the value clamped).
  rt::Status checked = step->library->runRank(me, step->buffers.data());
  for (size_t c = 0; c < caches.size(); ++c) {
    Cache &cache = caches[c];
    cache.layout = &step->cacheOut[c];
    if (accelerator) {
      std::swap(cache.deviceTile, cache.deviceSpare);
      std::swap(cache.tileBytes, cache.spareBytes);
      // The old tile (this step's input) is the next output's buffer.
      cache.deviceSpare = deviceInputs[c].first;
      cache.spareBytes = deviceInputs[c].second;
      continue;
    }
    cache.tile = std::move(cache.spare);
    cache.spare = std::move(inputs[c]);
  }
  if (accelerator && step->logitsSlot) {
    // Returns once the step's work is done: its errors are reported here.
    auto &[host, bytes] = step->hostCopies.at(*step->logitsSlot);
    if (rt::Status s = accelerator->copyToHost(
            host, step->buffers[*step->logitsSlot], bytes);
        !s)
      return onDevice(s);
  } else if (accelerator) {
    if (rt::Status s = accelerator->synchronize(); !s)
      return onDevice(s);
  }
  rt::Status gathered = gatherLogits(*step, firstRow, rowsEnd, logits);
  if (!checked)
    return rt::Error{"rank " + std::to_string(me) + ": " + checked.message()};
  return gathered;
}

rt::Status RankModel::gatherLogits(Step &step, int64_t firstRow, int64_t n,
                                   std::vector<double> &logits) {
  // No rows wanted (a chunk before the last): every rank skips the gather.
  if (firstRow >= n)
    return rt::Status::success();
  std::vector<std::optional<Box>> whole(static_cast<size_t>(ranks));
  whole[0] = Box{{firstRow, 0}, {n - firstRow, p.vocabSize}};
  rt::HostTensor mine;
  if (step.logitsSlot) {
    size_t slot = *step.logitsSlot;
    auto copy = step.hostCopies.find(slot);
    const void *data =
        copy == step.hostCopies.end() ? step.buffers[slot] : copy->second.first;
    mine = rt::HostTensor::view(rt::DType::F32,
                                step.logits.tiles[size_t(me)]->sizes,
                                static_cast<const uint8_t *>(data), nullptr);
  }
  int64_t gathered = 0;
  rt::Result<rt::HostTensor> all =
      redistribute(rt::DType::F32, step.logits, mine, whole, me, gathered);
  if (!all)
    return all.error();
  if (me == 0) {
    const float *data = reinterpret_cast<const float *>(all->data());
    logits.insert(logits.end(), data, data + all->numElements());
  }
  return rt::Status::success();
}
