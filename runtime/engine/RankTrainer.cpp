//===- RankTrainer.cpp - One MPI rank of a distributed training run -------===//

#include "tra/Engine/RankTrainer.h"

#include "tra/Engine/Redistribute.h"
#include "tra/Runtime/Mpi.h"
#include "tra/Runtime/TensorSource.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace tra;
using namespace tra::engine;
using rt::Error;
using rt::HostTensor;
using rt::Result;
using rt::Status;

Result<std::unique_ptr<RankTrainer>>
RankTrainer::load(const std::string &programPath) {
  Result<std::unique_ptr<exec::ProgramLibrary>> library =
      exec::ProgramLibrary::open(programPath);
  if (!library)
    return library.error();
  if (!(*library)->isDistributed())
    return rt::fileError(programPath, "not a distributed program");
  if ((*library)->program().device == TRA_EXEC_CUDA)
    return rt::fileError(programPath,
                         "a training step compiled for NVIDIA GPUs: "
                         "distributed training runs host programs (CPU "
                         "plans, or GPU plans with --emulate-on-cpu)");
  std::unique_ptr<RankTrainer> trainer(new RankTrainer());
  trainer->library = std::move(*library);
  return trainer;
}

int64_t RankTrainer::numRanks() const { return library->program().numRanks; }

uint64_t RankTrainer::fingerprint() const {
  return uint64_t(library->program().fingerprint);
}

static std::vector<int64_t> shapeOf(const TraExecTensorInfo &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

/// Every rank's tile a whole tensor of `rank` dimensions on `onRank` only
/// (or on every rank with -1).
static std::vector<std::optional<Box>>
wholeOn(int onRank, const std::vector<int64_t> &shape, int64_t ranks) {
  std::vector<std::optional<Box>> to(size_t(ranks), std::nullopt);
  Box whole{std::vector<int64_t>(shape.size(), 0), shape};
  for (int64_t r = 0; r < ranks; ++r)
    if (onRank < 0 || r == onRank)
      to[size_t(r)] = whole;
  return to;
}

Status RankTrainer::init(int rank, const std::string &weights,
                         const std::string &states, int64_t stepsDone,
                         int64_t threads) {
  me = rank;
  done = stepsDone;
  return bind(weights, states, threads);
}

Status RankTrainer::bind(const std::string &weightsPath,
                         const std::string &statesPath, int64_t threads) {
  const TraExecProgram &program = library->program();
  const std::string &file = library->path();
  Result<std::unique_ptr<rt::TensorSource>> weights =
      rt::openTensorSource(weightsPath);
  if (!weights)
    return weights.error();
  if (!(*weights)->llamaParams())
    return rt::fileError(weightsPath,
                         "does not state the LLaMA model's parameters");
  p = *(*weights)->llamaParams();
  std::unique_ptr<rt::TensorSource> states;
  if (!statesPath.empty()) {
    Result<std::unique_ptr<rt::TensorSource>> opened =
        rt::openTensorSource(statesPath);
    if (!opened)
      return opened.error();
    states = std::move(*opened);
  }
  Result<TrainStepTensors> roles = TrainStepTensors::read(program, file, p);
  if (!roles)
    return roles.error();
  batchSize = roles->batch;
  sequence = roles->seq;
  lossTensor = roles->loss;
  normTensor = roles->gradNorm;
  enum class Role { Tokens, Targets, Cos, Sin, Lr, Step, Slot };
  std::vector<Role> inputRole(size_t(program.numInputs), Role::Slot);
  for (auto [index, role] : {std::pair{roles->tokens, Role::Tokens},
                             {roles->targets, Role::Targets},
                             {roles->cos, Role::Cos},
                             {roles->sin, Role::Sin},
                             {roles->lr, Role::Lr},
                             {roles->step, Role::Step}})
    if (index >= 0)
      inputRole[size_t(index)] = role;
  std::vector<int64_t> ropeShape = {p.maxSeqLen, p.headDim() / 2};
  std::map<int64_t, size_t> slotOfInput, slotOfOutput;
  for (const TrainStepTensors::Parameter &parameter : roles->parameters) {
    Slot slot;
    slot.name = parameter.name;
    slot.input = parameter.input;
    slot.output = parameter.output;
    slot.isState = parameter.isState;
    std::vector<int64_t> shape = shapeOf(program.inputs[slot.input]);
    const rt::TensorSource *source =
        slot.isState ? states.get() : weights->get();
    const rt::TensorInfo *stored = source ? source->find(slot.name) : nullptr;
    if (!slot.isState && !stored)
      return rt::fileError(weightsPath,
                           "no tensor " + rt::quoteName(slot.name));
    if (stored && stored->shape != shape)
      return Error{"tensor " + rt::quoteName(slot.name) + " has shape " +
                   rt::formatShape(stored->shape) + " but the training step " +
                   file + " reads " + rt::formatShape(shape)};
    Result<Layout> in = layoutOf(program, slot.input, false);
    if (!in)
      return rt::fileError(file, in.message());
    Result<Layout> out = layoutOf(program, slot.output, true);
    if (!out)
      return rt::fileError(file, out.message());
    slot.in = std::move(*in);
    slot.out = std::move(*out);
    slotOfInput[slot.input] = slots.size();
    slotOfOutput[slot.output] = slots.size();
    slots.push_back(std::move(slot));
  }

  // This rank's tiles.
  const TraExecRankProgram &mine = program.ranks[me];
  buffers.assign(size_t(mine.numInputs + mine.numOutputs), nullptr);
  std::vector<float> cos, sin;
  rt::computeRopeTables(p, cos, sin);
  for (int64_t k = 0; k < mine.numInputs; ++k) {
    const TraExecTile &tile = mine.inputs[k];
    const TraExecTensorInfo &info = program.inputs[tile.tensor];
    Box box = boxOf(tile, info.rank);
    Role role = inputRole[size_t(tile.tensor)];
    if (role == Role::Slot) {
      Slot &slot = slots[slotOfInput.at(tile.tensor)];
      slot.inSlot = k;
      const rt::TensorSource *source =
          slot.isState ? states.get() : weights->get();
      if (source && source->find(slot.name)) {
        Result<HostTensor> part = source->readTile(
            slot.name, box.offsets, box.sizes, rt::DType::F32, me);
        if (!part)
          return part.error();
        slot.value = std::move(*part);
      } else {
        slot.value = HostTensor::zeros(rt::DType::F32, box.sizes);
      }
      continue;
    }
    Fed fed;
    fed.slot = k;
    fed.box = box;
    bool integer = role == Role::Tokens || role == Role::Targets;
    fed.tile =
        HostTensor::zeros(integer ? rt::DType::I64 : rt::DType::F32, box.sizes);
    if (role == Role::Cos || role == Role::Sin)
      rt::copyTile(rt::DType::F32, ropeShape,
                   reinterpret_cast<const uint8_t *>(
                       (role == Role::Cos ? cos : sin).data()),
                   box.offsets, box.sizes, fed.tile.mutableData());
    buffers[size_t(k)] = fed.tile.mutableData();
    (role == Role::Tokens    ? tokens
     : role == Role::Targets ? targets
     : role == Role::Lr      ? rates
     : role == Role::Step    ? stepNumbers
                             : tables)
        .push_back(std::move(fed));
  }
  for (int64_t k = 0; k < mine.numOutputs; ++k) {
    const TraExecTile &tile = mine.outputs[k];
    const TraExecTensorInfo &info = program.outputs[tile.tensor];
    outputs.push_back(
        HostTensor::zeros(rt::DType::F32, boxOf(tile, info.rank).sizes));
    if (auto it = slotOfOutput.find(tile.tensor); it != slotOfOutput.end())
      slots[it->second].outSlot = k;
    else if (tile.tensor == lossTensor)
      lossSlot = k;
    else if (tile.tensor == normTensor)
      normSlot = k;
  }
  library->setNumThreads(
      threads > 0 ? threads : std::max<int64_t>(1, program.numThreads));
  return Status::success();
}

Result<double> RankTrainer::scalarOutput(int64_t tensor, int64_t slot) {
  Result<Layout> layout = layoutOf(library->program(), tensor, true);
  if (!layout)
    return layout.error();
  HostTensor none;
  int64_t moved = 0;
  Result<HostTensor> all = redistribute(
      rt::DType::F32, *layout, slot >= 0 ? outputs[size_t(slot)] : none,
      wholeOn(-1, {}, numRanks()), me, moved);
  if (!all)
    return all.error();
  return double(all->load<float>(0));
}

Result<TrainStepStats> RankTrainer::step(const std::vector<int64_t> &tok,
                                         const std::vector<int64_t> &tgt,
                                         double rate) {
  size_t n = size_t(batchSize * sequence);
  if (tok.size() != n || tgt.size() != n)
    return Error{"a training step takes " + std::to_string(n) +
                 " tokens and targets"};
  // This rank's tiles of the batch, learning rate and step number.
  for (auto [fed, whole] : {std::pair{&tokens, &tok}, {&targets, &tgt}})
    for (Fed &f : *fed) {
      int64_t rows = f.box.sizes[0], cols = f.box.sizes[1];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          f.tile.store<int64_t>(
              r * cols + c, (*whole)[size_t((f.box.offsets[0] + r) * sequence +
                                            f.box.offsets[1] + c)]);
    }
  for (Fed &f : rates)
    f.tile.store<float>(0, float(rate));
  for (Fed &f : stepNumbers)
    f.tile.store<float>(0, float(done + 1));
  const TraExecRankProgram &mine = library->program().ranks[me];
  for (Slot &s : slots)
    if (s.inSlot >= 0)
      buffers[size_t(s.inSlot)] = s.value.mutableData();
  for (size_t k = 0; k < outputs.size(); ++k)
    buffers[size_t(mine.numInputs) + k] = outputs[k].mutableData();
  // A failed run-time check is reported after the step's collectives,
  // which every rank reaches.
  Status checked = library->runRank(me, buffers.data());
  Result<double> loss = scalarOutput(lossTensor, lossSlot);
  if (!loss)
    return loss.error();
  Result<double> norm = scalarOutput(normTensor, normSlot);
  if (!norm)
    return norm.error();
  if (!checked)
    return Error{"rank " + std::to_string(me) + ", step " +
                 std::to_string(done + 1) + ": " + checked.message()};
  TrainStepStats stats;
  stats.loss = *loss;
  stats.gradNorm = *norm;
  stats.lr = rate;
  if (!std::isfinite(stats.loss) || !std::isfinite(stats.gradNorm))
    return Error{"step " + std::to_string(done + 1) + ": the loss (" +
                 std::to_string(stats.loss) + ") or the gradient norm (" +
                 std::to_string(stats.gradNorm) +
                 ") is not finite; the step is not taken (a lower "
                 "learning rate or --clip-norm may help)"};
  // The outputs become the next step's inputs: in place where the planner
  // kept the tiles, else moved to the input tiles.
  for (Slot &s : slots) {
    HostTensor none;
    HostTensor &out = s.outSlot >= 0 ? outputs[size_t(s.outSlot)] : none;
    if (s.out.sameTiles(s.in)) {
      if (s.inSlot >= 0)
        std::swap(s.value, out);
      s.valueIsLatest = true;
      continue;
    }
    Result<HostTensor> moved =
        redistribute(rt::DType::F32, s.out, out, s.in.tiles, me, relayoutBytes);
    if (!moved)
      return moved.error();
    // The output tile stays for a checkpoint (the next step writes over
    // `out`).
    if (s.outSlot >= 0)
      s.latest = out;
    s.value = std::move(*moved);
    s.valueIsLatest = false;
  }
  ++done;
  return stats;
}

Status RankTrainer::gather(rt::LlamaCheckpoint &weights,
                           std::vector<rt::NamedTensor> &states) {
  weights = rt::LlamaCheckpoint();
  weights.params = p;
  states.clear();
  const TraExecProgram &program = library->program();
  std::map<std::string, HostTensor> whole;
  for (Slot &s : slots) {
    // The newest values are in the output's tiles (`value` where the step
    // kept them, else `latest`).
    // Input tiles that are not the output's (before the first step) are
    // sent by the lowest rank holding each.
    Layout from = s.valueIsLatest && !s.out.sameTiles(s.in) ? s.in : s.out;
    if (s.valueIsLatest && !s.out.sameTiles(s.in)) {
      from.owner.assign(from.tiles.size(), false);
      for (size_t r = 0; r < from.tiles.size(); ++r) {
        bool first = from.tiles[r].has_value();
        for (size_t q = 0; first && q < r; ++q)
          first = !(from.tiles[q] && *from.tiles[q] == *from.tiles[r]);
        from.owner[r] = first;
      }
    }
    const HostTensor &mine = s.valueIsLatest ? s.value : s.latest;
    int64_t moved = 0;
    Result<HostTensor> all = redistribute(
        rt::DType::F32, from, mine,
        wholeOn(0, shapeOf(program.inputs[s.input]), numRanks()), me, moved);
    if (!all)
      return Error{"gathering " + rt::quoteName(s.name) + ": " + all.message()};
    if (me == 0)
      whole[s.name] = std::move(*all);
  }
  if (me != 0)
    return Status::success();
  for (const auto &[name, shape] : rt::llamaWeightShapes(p))
    weights.weights.push_back({name, whole.at(name)});
  for (Slot &s : slots)
    if (s.isState)
      states.push_back({s.name, whole.at(s.name)});
  return Status::success();
}
