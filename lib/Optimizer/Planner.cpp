//===- Planner.cpp - Planning functions and applying plans ----------------===//

#include "tra/Optimizer/Planner.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Optimizer/Recompute.h"
#include "tra/Optimizer/Report.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <variant>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

//===----------------------------------------------------------------------===//
// Search under the memory constraint
//===----------------------------------------------------------------------===//

namespace {
/// The device whose memory a plan overflows the most, if any.
struct Overflow {
  unsigned device = 0;
  double needed = 0;
  double capacity = 0;
};
} // namespace

static std::optional<Overflow> findOverflow(const MemoryUse &memory,
                                            const CostModel &model) {
  std::optional<Overflow> worst;
  for (const auto &device : model.getHardware().getDevices()) {
    double needed = memory.getPeak(device.id);
    double capacity = double(device.memoryBytes);
    if (needed <= capacity)
      continue;
    if (!worst || needed - capacity > worst->needed - worst->capacity)
      worst = Overflow{device.id, needed, capacity};
  }
  return worst;
}

static std::string bytesText(double bytes) {
  return llvm::formatv("{0:F0} bytes ({1})", bytes, formatBytes(bytes)).str();
}

/// ", and in its nodes' tiers 64.00 GiB of host memory and no disk" when
/// the hardware states memory tiers; empty otherwise.
static std::string tiersText(const ::tra::hw::HardwareDescription &hardware) {
  bool anyHost = false, anyDisk = false, unlimitedDisk = false;
  double disk = 0;
  for (unsigned n = 0; n < hardware.numNodes(); ++n) {
    anyHost |= hardware.getHostMemory(n) != nullptr;
    if (const auto *tier = hardware.getDisk(n)) {
      anyDisk = true;
      unlimitedDisk |= tier->bytes == 0;
      disk += double(tier->bytes);
    }
  }
  if (!anyHost && !anyDisk)
    return "";
  std::string text = ", and in its nodes' tiers ";
  text += anyHost ? bytesText(double(hardware.totalHostMemoryBytes())) +
                        " of host memory"
                  : "no host memory";
  if (!anyDisk)
    text += " and no disk";
  else if (unlimitedDisk)
    text += " and a disk the weights stream from";
  else
    text += " and " + bytesText(disk) + " of disk";
  return text;
}

/// The error for a model larger than all the memory there is.
static llvm::Error makeTooLargeError(func::FuncOp func, const CostModel &model,
                                     double arguments, double activations) {
  const auto &hardware = model.getHardware();
  return llvm::createStringError(llvm::formatv(
      "@{0} needs at least {1} of memory ({2} of arguments and weights, {3} "
      "of activations) but {4} has {5} in {6} device{7}{8}",
      func.getSymName(), bytesText(arguments + activations),
      formatBytes(arguments), formatBytes(activations), hardware.getName(),
      bytesText(double(hardware.totalMemoryBytes())), hardware.numDevices(),
      hardware.numDevices() == 1 ? "" : "s", tiersText(hardware)));
}

/// The error for a model that fits in total but not device by device.
static llvm::Error makeNoFitError(func::FuncOp func, const CostModel &model,
                                  const Overflow &overflow, double minimum) {
  const auto &hardware = model.getHardware();
  return llvm::createStringError(llvm::formatv(
      "@{0} does not fit in the memory of {1}: the plan using the least "
      "memory needs {2} on device {3}, which has {4} (the model needs at "
      "least {5} in all; the hardware has {6}{7})",
      func.getSymName(), hardware.getName(), bytesText(overflow.needed),
      overflow.device, bytesText(overflow.capacity), bytesText(minimum),
      bytesText(double(hardware.totalMemoryBytes())), tiersText(hardware)));
}

/// Seconds per byte charged even without memory pressure: 1 ns per GB.
static constexpr double kTieBreakLambda = 1e-18;

namespace {
/// Runs the search with increasing memory penalties until the plan fits.
class ConstrainedSearch {
public:
  ConstrainedSearch(PlanProblem &problem, const PlannerOptions &options,
                    PlanSummary &summary)
      : problem(problem), options(options), summary(summary) {}

  /// The fastest plan that fits, or the overflow of the plan that came
  /// closest.
  std::variant<SearchResult, Overflow> run();

private:
  SearchResult search(double lambda) {
    SearchOptions searchOptions;
    searchOptions.beam = options.beam;
    // A negligible charge for memory breaks ties between equally fast plans
    // in favour of the one that replicates less.
    searchOptions.lambda = std::max(lambda, kTieBreakLambda);
    ++summary.searches;
    SearchResult result = searchPlan(problem, searchOptions);
    summary.maxStates = std::max(summary.maxStates, result.maxStates);
    summary.pruned |= result.pruned;
    return result;
  }
  std::optional<Overflow> overflowOf(const SearchResult &result) {
    return findOverflow(problem.getMemoryUse(result.plan),
                        problem.getCostModel());
  }

  PlanProblem &problem;
  const PlannerOptions &options;
  PlanSummary &summary;
};
} // namespace

std::variant<SearchResult, Overflow> ConstrainedSearch::run() {
  SearchResult fastest = search(0.0);
  std::optional<Overflow> overflow = overflowOf(fastest);
  if (!overflow)
    return fastest;
  // The first penalty makes the memory of the fastest plan cost a tenth of
  // its time; then it grows until the plan fits (or memory dominates any
  // time), and is narrowed down again.
  double bytes = 0;
  ArrayRef<ProblemNode> nodes = problem.getNodes();
  for (auto [n, node] : llvm::enumerate(nodes))
    bytes += node.choices[fastest.plan[n]].memoryBytes;
  double low = 0;
  double high = std::max(1e-18, 0.1 * problem.evaluate(fastest.plan, 0.0) /
                                    std::max(bytes, 1.0));
  std::optional<SearchResult> fitting;
  for (; high <= 1e-3; high *= 16) {
    SearchResult result = search(high);
    std::optional<Overflow> over = overflowOf(result);
    if (!over) {
      fitting = std::move(result);
      break;
    }
    overflow = over;
    low = high;
  }
  if (!fitting)
    return *overflow;
  for (int i = 0; i < 2 && low > 0; ++i) {
    double middle = std::sqrt(low * high);
    SearchResult result = search(middle);
    if (overflowOf(result)) {
      low = middle;
    } else {
      high = middle;
      fitting = std::move(result);
    }
  }
  summary.lambda = high;
  return *fitting;
}

//===----------------------------------------------------------------------===//
// Recording a plan
//===----------------------------------------------------------------------===//

static ArrayAttr getDistArray(MLIRContext *context, PlanProblem &problem,
                              ArrayRef<unsigned> ids) {
  SmallVector<Attribute> attrs;
  for (unsigned id : ids)
    attrs.push_back(toAttr(context, problem.getDist(id)));
  return ArrayAttr::get(context, attrs);
}

static bool allRankedTensors(TypeRange types) {
  return llvm::all_of(types,
                      [](Type t) { return llvm::isa<RankedTensorType>(t); });
}

/// Writes the distribution of a source value (argument or fill).
static void recordSource(func::FuncOp func, PlanProblem &problem,
                         unsigned value, ArrayRef<unsigned> plan) {
  MLIRContext *context = func.getContext();
  const ProblemValue &v = problem.getValues()[value];
  DistAttr dist =
      toAttr(context, problem.getDist(problem.getValueDist(value, plan)));
  if (auto arg = llvm::dyn_cast<BlockArgument>(v.value)) {
    func.setArgAttr(arg.getArgNumber(), PlanDialect::kDistAttrName, dist);
    return;
  }
  Operation *fill = v.value.getDefiningOp();
  fill->setAttr(PlanDialect::kOperandsAttrName, ArrayAttr::get(context, {}));
  fill->setAttr(PlanDialect::kResultsAttrName, ArrayAttr::get(context, {dist}));
}

static void recordPlan(func::FuncOp func, PlanProblem &problem,
                       ArrayRef<unsigned> plan, const CostModel &model) {
  MLIRContext *context = func.getContext();
  context->getOrLoadDialect<PlanDialect>();
  Builder builder(context);
  func->setAttr(PlanDialect::kHardwareAttrName,
                builder.getStringAttr(model.getHardware().getName()));
  func->setAttr(PlanDialect::kNumDevicesAttrName,
                builder.getI64IntegerAttr(model.getNumDevices()));
  for (auto [n, node] : llvm::enumerate(problem.getNodes())) {
    if (node.kind == ProblemNode::Kind::Source)
      continue;
    Operation *op = node.op;
    if (!allRankedTensors(op->getOperandTypes()) ||
        !allRankedTensors(op->getResultTypes()))
      continue;
    const ProblemChoice &choice = node.choices[plan[n]];
    op->setAttr(PlanDialect::kOperandsAttrName,
                getDistArray(context, problem, choice.operands));
    op->setAttr(PlanDialect::kResultsAttrName,
                getDistArray(context, problem, choice.results));
    if (node.space)
      op->setAttr(PlanDialect::kSplitAttrName,
                  toAttr(context, *node.space, node.splits[choice.split]));
  }
  for (auto [id, v] : llvm::enumerate(problem.getValues()))
    if (v.isArgument || v.isFill)
      recordSource(func, problem, id, plan);
}

namespace {
/// One planning of one function: its problem and the best plan found, or
/// why none fits.
struct Attempt {
  std::unique_ptr<PlanProblem> problem;
  PlanSummary summary;
  /// The minimum bytes of arguments and of activations.
  double arguments = 0, activations = 0;
  std::variant<SearchResult, Overflow> found;

  bool tooLarge(const CostModel &model) const {
    return arguments + activations >
           double(model.getHardware().totalMemoryBytes());
  }
  const SearchResult *getFitting() const {
    return std::get_if<SearchResult>(&found);
  }
};
} // namespace

static llvm::Expected<Attempt>
attemptPlan(func::FuncOp func, const CostModel &model,
            const PlannerOptions &options,
            const llvm::DenseSet<Value> &streamed = {},
            const llvm::DenseMap<Operation *, DeviceBlock> &blocks =
                llvm::DenseMap<Operation *, DeviceBlock>()) {
  ProblemOptions problemOptions;
  problemOptions.choices = options.choices;
  problemOptions.streamed = streamed;
  problemOptions.blocks = blocks;
  auto problemOr = PlanProblem::build(func, model, problemOptions);
  if (!problemOr)
    return problemOr.takeError();
  Attempt attempt;
  attempt.problem = std::move(*problemOr);
  PlanProblem &problem = *attempt.problem;
  attempt.summary.numNodes = problem.getNodes().size();
  for (const ProblemNode &node : problem.getNodes())
    attempt.summary.numChoices += node.choices.size();
  std::tie(attempt.arguments, attempt.activations) = problem.getMinimumBytes();
  if (attempt.tooLarge(model)) {
    attempt.found = Overflow{};
    return std::move(attempt);
  }
  attempt.found = ConstrainedSearch(problem, options, attempt.summary).run();
  if (const SearchResult *best = attempt.getFitting()) {
    attempt.summary.estimatedTime = problem.evaluate(best->plan, 0.0);
    attempt.summary.memory = problem.getMemoryUse(best->plan);
  }
  return std::move(attempt);
}

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

std::string PipelineStage::getDevicesText() const {
  SmallVector<unsigned, 16> devices;
  for (unsigned d = 0; d < numDevices; ++d)
    devices.push_back(firstDevice + d);
  return formatDeviceSet(devices);
}

/// The work of each operation of `func` in program order: its time on one
/// device (0 for operations the optimizer does not look into).
static std::vector<double> getOperationWork(func::FuncOp func,
                                            const CostModel &model) {
  std::vector<double> work;
  for (Operation &op : func.getBody().front().without_terminator()) {
    std::optional<IndexSpace> space = getIndexSpace(&op);
    work.push_back(space ? getChoiceTime(*space, SplitChoice(), model) : 0.0);
  }
  return work;
}

/// The bytes of the function arguments each operation of `func` reads
/// first, in program order (the weights a stage that runs it must hold).
static std::vector<double> getOperationArgumentBytes(func::FuncOp func) {
  std::vector<double> bytes;
  llvm::DenseSet<Value> seen;
  for (Operation &op : func.getBody().front().without_terminator()) {
    double first = 0;
    for (Value operand : op.getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!isa<BlockArgument>(operand) || !type || !type.hasStaticShape() ||
          !seen.insert(operand).second)
        continue;
      first += double(type.getNumElements()) *
               double(std::max<unsigned>(type.getElementTypeBitWidth(), 8) / 8);
    }
    bytes.push_back(first);
  }
  return bytes;
}

/// What the operations of a pipeline are cut by: their compute over the
/// stages' peak flop/s, or the weights they read over the stages' memory.
enum class StageMeasure { Compute, Memory };

/// The stages of the operations of `load` (getOperationWork or
/// getOperationArgumentBytes, per `measure`) on `model`'s nodes cut into
/// `numStages` groups of consecutive nodes: the operations in program
/// order, cut where the load so far reaches the stages' share of the peak
/// flop/s or of the memory. Empty when some stage would get no operation.
static std::vector<PipelineStage> cutStages(ArrayRef<double> load,
                                            const CostModel &model,
                                            unsigned numStages,
                                            StageMeasure measure) {
  const auto &hardware = model.getHardware();
  unsigned nodesPerStage = hardware.numNodes() / numStages;
  std::vector<PipelineStage> stages(numStages);
  std::vector<double> capacity(numStages, 0.0);
  double totalCapacity = 0;
  for (unsigned s = 0; s < numStages; ++s) {
    const auto &first = hardware.getNode(s * nodesPerStage);
    stages[s].firstDevice = first.firstDevice;
    for (unsigned n = 0; n < nodesPerStage; ++n) {
      const auto &node = hardware.getNode(s * nodesPerStage + n);
      stages[s].numDevices += node.numDevices;
      for (const auto &device : hardware.getDevicesOfNode(node.id))
        capacity[s] += measure == StageMeasure::Compute
                           ? device.getPeakFlops(::tra::hw::DType::F32)
                           : double(device.memoryBytes);
    }
    totalCapacity += capacity[s];
  }
  double total = 0;
  for (double w : load)
    total += w;
  if (total <= 0 || totalCapacity <= 0 || load.size() < numStages)
    return {};
  double done = 0, share = 0;
  unsigned op = 0;
  for (unsigned stage = 0; stage < numStages; ++stage) {
    share += capacity[stage] / totalCapacity;
    stages[stage].firstOp = op;
    // The last stage takes the rest; the others up to their share, at
    // least one operation each, leaving one for every later stage.
    while (op < load.size() && (stage + 1 == numStages ||
                                (op + (numStages - stage) <= load.size() &&
                                 (op == stages[stage].firstOp ||
                                  done + 0.5 * load[op] <= share * total)))) {
      done += load[op];
      ++op;
    }
    if (op == stages[stage].firstOp)
      return {};
    stages[stage].lastOp = op - 1;
  }
  return stages;
}

/// Whether the `numStages` groups of `model`'s nodes have shares of the
/// memory that differ from their shares of the peak flop/s (by more than
/// 1%): then a cut by weights differs from a cut by compute in kind.
static bool hasUnevenStages(const CostModel &model, unsigned numStages) {
  const auto &hardware = model.getHardware();
  unsigned nodesPerStage = hardware.numNodes() / numStages;
  std::vector<double> flops(numStages, 0.0), memory(numStages, 0.0);
  double totalFlops = 0, totalMemory = 0;
  for (unsigned s = 0; s < numStages; ++s)
    for (unsigned n = 0; n < nodesPerStage; ++n)
      for (const auto &device : hardware.getDevicesOfNode(
               hardware.getNode(s * nodesPerStage + n).id)) {
        flops[s] += device.getPeakFlops(::tra::hw::DType::F32);
        memory[s] += double(device.memoryBytes);
      }
  for (unsigned s = 0; s < numStages; ++s) {
    totalFlops += flops[s];
    totalMemory += memory[s];
  }
  if (totalFlops <= 0 || totalMemory <= 0)
    return false;
  for (unsigned s = 0; s < numStages; ++s)
    if (std::abs(flops[s] / totalFlops - memory[s] / totalMemory) > 0.01)
      return true;
  return false;
}

/// The device block of every operation of `func` under `stages`.
static llvm::DenseMap<Operation *, DeviceBlock>
getStageBlocks(func::FuncOp func, ArrayRef<PipelineStage> stages) {
  llvm::DenseMap<Operation *, DeviceBlock> blocks;
  unsigned position = 0, stage = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    while (position > stages[stage].lastOp)
      ++stage;
    blocks[&op] = {stages[stage].firstDevice, stages[stage].numDevices};
    ++position;
  }
  return blocks;
}

/// Plans `func` in pipeline stages on every number of groups of nodes
/// (dividing the node count) and returns the fastest attempt that fits, if
/// it is faster than `best` (or `best` does not fit). The operations are cut
/// by compute; also by the weights they read, where the stages' shares of
/// memory differ from their shares of compute (devices of different kinds)
/// or the compute cut does not fit.
static llvm::Expected<std::optional<Attempt>>
attemptPipelines(func::FuncOp func, const CostModel &model,
                 const PlannerOptions &options, const Attempt &best,
                 unsigned &searches) {
  std::optional<Attempt> chosen;
  unsigned numNodes = model.getHardware().numNodes();
  if (!options.pipeline || numNodes < 2 || numNodes > kMaxPipelineNodes)
    return chosen;
  double fastest = best.getFitting() ? best.summary.estimatedTime
                                     : std::numeric_limits<double>::infinity();
  std::vector<double> work = getOperationWork(func, model);
  std::vector<double> bytes = getOperationArgumentBytes(func);
  for (unsigned numStages = 2; numStages <= numNodes; ++numStages) {
    if (numNodes % numStages)
      continue;
    std::vector<PipelineStage> byCompute =
        cutStages(work, model, numStages, StageMeasure::Compute);
    std::vector<PipelineStage> byMemory =
        cutStages(bytes, model, numStages, StageMeasure::Memory);
    bool fits = false;
    for (std::vector<PipelineStage> *stages : {&byCompute, &byMemory}) {
      if (stages->empty())
        continue;
      if (stages == &byMemory) {
        bool sameCut =
            !byCompute.empty() &&
            llvm::equal(byCompute, byMemory,
                        [](const PipelineStage &a, const PipelineStage &b) {
                          return a.lastOp == b.lastOp;
                        });
        if (sameCut || (fits && !hasUnevenStages(model, numStages)))
          continue;
      }
      llvm::Expected<Attempt> attempt =
          attemptPlan(func, model, options, {}, getStageBlocks(func, *stages));
      if (!attempt)
        return attempt.takeError();
      searches += attempt->summary.searches;
      if (!attempt->getFitting())
        continue;
      fits = true;
      if (attempt->summary.estimatedTime >= fastest)
        continue;
      fastest = attempt->summary.estimatedTime;
      attempt->summary.stages = *stages;
      chosen = std::move(*attempt);
    }
  }
  return chosen;
}

//===----------------------------------------------------------------------===//
// Streaming weights from memory tiers
//===----------------------------------------------------------------------===//

/// Whether every device's node has a tier to stream from.
static bool hasStreamTiers(const CostModel &model) {
  for (unsigned d = 0; d < model.getNumDevices(); ++d)
    if (!model.getStreamTier(d))
      return false;
  return model.getNumDevices() > 0;
}

/// The arguments that may live in a tier: read-only weights (not written in
/// place, not returned, not carried between steps), largest first.
static SmallVector<Value> getStreamCandidates(const PlanProblem &problem) {
  ArrayRef<ProblemValue> values = problem.getValues();
  std::vector<bool> viewed(values.size(), false);
  for (const ProblemValue &v : values)
    if (v.aliasOf >= 0)
      viewed[v.aliasOf] = true;
  SmallVector<std::pair<double, unsigned>> candidates;
  for (auto [id, v] : llvm::enumerate(values))
    if (v.isArgument && !v.isReturned && !viewed[id] && !v.uses.empty() &&
        v.carriedTo < 0 && v.carriedFrom < 0 && !v.isCarryTarget)
      candidates.push_back({-v.getBytes(), unsigned(id)});
  llvm::sort(candidates); // (bytes, id): ties in argument order
  // Among weights of one size (the same matrix of every layer), any first
  // few are spread over the layers (bit-reversed order), so that each
  // transfer overlaps its own layer's compute rather than piling up.
  SmallVector<Value> result;
  for (size_t begin = 0; begin < candidates.size();) {
    size_t end = begin;
    while (end < candidates.size() &&
           candidates[end].first == candidates[begin].first)
      ++end;
    size_t count = end - begin;
    unsigned bits = llvm::Log2_64_Ceil(count);
    SmallVector<std::pair<uint64_t, unsigned>> spread;
    for (size_t i = 0; i < count; ++i)
      spread.push_back(
          {llvm::reverseBits(uint64_t(i)) >> (64 - std::max(bits, 1u)),
           candidates[begin + i].second});
    llvm::sort(spread);
    for (auto [key, id] : spread)
      result.push_back(values[id].value);
    begin = end;
  }
  return result;
}

/// Plans with the fewest of the largest weights streamed from the tiers
/// that fits the devices (a binary search over how many); when even
/// streaming every candidate does not fit, that attempt (for its error);
/// std::nullopt without candidates.
static llvm::Expected<std::optional<Attempt>>
attemptStreaming(func::FuncOp func, const CostModel &model,
                 const PlannerOptions &options, const PlanProblem &plain,
                 unsigned &searches) {
  SmallVector<Value> candidates = getStreamCandidates(plain);
  auto attempt = [&](size_t count) -> llvm::Expected<Attempt> {
    llvm::DenseSet<Value> streamed(candidates.begin(),
                                   candidates.begin() + count);
    llvm::Expected<Attempt> result =
        attemptPlan(func, model, options, streamed);
    if (result)
      searches += result->summary.searches;
    return result;
  };
  if (candidates.empty())
    return std::nullopt;
  llvm::Expected<Attempt> all = attempt(candidates.size());
  if (!all)
    return all.takeError();
  // Even streaming every candidate does not fit: that attempt says what
  // the devices would still need.
  if (!all->getFitting())
    return std::move(*all);
  // Fits with `high` streamed, not with `low`.
  size_t low = 0, high = candidates.size();
  std::optional<Attempt> best = std::move(*all);
  while (high - low > 1) {
    size_t middle = low + (high - low) / 2;
    llvm::Expected<Attempt> tried = attempt(middle);
    if (!tried)
      return tried.takeError();
    if (tried->getFitting()) {
      high = middle;
      best = std::move(*tried);
    } else {
      low = middle;
    }
  }
  // The fewest that fit may fit only by cutting weights the plan would
  // rather replicate (a memory penalty): streaming a few more can be
  // faster. Keep the fastest estimate (which charges every transfer in
  // full, not overlapped: an extra weight has to pay for itself).
  size_t fewest = high;
  for (double factor : {1.25, 1.5, 2.0}) {
    size_t count =
        std::min(candidates.size(), size_t(std::ceil(double(fewest) * factor)));
    if (count <= high)
      continue;
    llvm::Expected<Attempt> tried = attempt(count);
    if (!tried)
      return tried.takeError();
    if (tried->getFitting() &&
        tried->summary.estimatedTime < best->summary.estimatedTime)
      best = std::move(*tried);
    high = count;
  }
  return best;
}

/// How many arguments `problem` streams, and their bytes.
static std::pair<unsigned, double>
getStreamedTotals(const PlanProblem &problem) {
  unsigned count = 0;
  double bytes = 0;
  for (const ProblemValue &v : problem.getValues())
    if (v.isStreamed) {
      ++count;
      bytes += v.getBytes();
    }
  return {count, bytes};
}

namespace {
/// Where the streamed arguments of a plan live.
struct TierUse {
  /// Per streamed argument number: "host" or "disk".
  llvm::DenseMap<unsigned, StringRef> tiers;
};
} // namespace

/// Puts each streamed argument in its nodes' host memory while it has room,
/// else on their disk (every node keeps the tiles its devices read); fails
/// naming every tier when neither holds it.
static llvm::Expected<TierUse> assignTiers(func::FuncOp func,
                                           const PlanProblem &problem,
                                           ArrayRef<unsigned> plan,
                                           const CostModel &model) {
  const auto &hardware = model.getHardware();
  unsigned numNodes = hardware.numNodes();
  std::vector<double> hostLeft(numNodes, 0.0), diskLeft(numNodes, 0.0);
  for (unsigned n = 0; n < numNodes; ++n) {
    if (const auto *host = hardware.getHostMemory(n))
      hostLeft[n] = double(host->bytes);
    if (const auto *disk = hardware.getDisk(n))
      diskLeft[n] = disk->bytes ? double(disk->bytes)
                                : std::numeric_limits<double>::infinity();
  }
  TierUse use;
  double total = getStreamedTotals(problem).second;
  for (auto [id, v] : llvm::enumerate(problem.getValues())) {
    if (!v.isStreamed)
      continue;
    // The bytes of the distinct tiles each node's devices read.
    const TensorDist &dist = problem.getDist(problem.getValueDist(id, plan));
    std::vector<double> perNode(numNodes, 0.0);
    for (int64_t t = 0; t < dist.getNumTiles(); ++t) {
      SmallVector<unsigned, 4> nodes;
      for (unsigned device : dist.getTileDevices(t))
        if (!llvm::is_contained(nodes, model.getNodeOf(device)))
          nodes.push_back(model.getNodeOf(device));
      double bytes = double(dist.getTileElements(v.shape, t)) * v.elementBytes;
      for (unsigned node : nodes)
        perNode[node] += bytes;
    }
    auto fits = [&](const std::vector<double> &left) {
      for (unsigned n = 0; n < numNodes; ++n)
        if (perNode[n] > left[n])
          return false;
      return true;
    };
    std::vector<double> *tier = fits(hostLeft)   ? &hostLeft
                                : fits(diskLeft) ? &diskLeft
                                                 : nullptr;
    if (!tier)
      return llvm::createStringError(llvm::formatv(
          "@{0} does not fit in the memory of {1}: beyond what its devices "
          "hold, {2} of weights must live in a memory tier, but {1} has {3} "
          "in {4} device{5}{6}",
          func.getSymName(), hardware.getName(), bytesText(total),
          bytesText(double(hardware.totalMemoryBytes())), hardware.numDevices(),
          hardware.numDevices() == 1 ? "" : "s", tiersText(hardware)));
    for (unsigned n = 0; n < numNodes; ++n)
      (*tier)[n] -= perNode[n];
    auto arg = llvm::cast<BlockArgument>(v.value);
    use.tiers[arg.getArgNumber()] = tier == &hostLeft ? "host" : "disk";
  }
  return use;
}

llvm::Expected<PlanSummary>
plan::assignPartitions(func::FuncOp func, const CostModel &model,
                       const PlannerOptions &options) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<Attempt> stored = attemptPlan(func, model, options);
  if (!stored)
    return stored.takeError();
  // On a few nodes, pipeline stages may beat splitting every operation
  // over all of them.
  {
    unsigned searches = stored->summary.searches;
    llvm::Expected<std::optional<Attempt>> pipelined =
        attemptPipelines(func, model, options, *stored, searches);
    if (!pipelined)
      return pipelined.takeError();
    if (*pipelined)
      *stored = std::move(**pipelined);
    stored->summary.searches = searches;
  }
  Attempt *chosen = &*stored;
  // Storing every activation does not fit, or fits only with a memory
  // penalty (weights cut that would rather be replicated): plan again with
  // the activations the backward pass reads recomputed there, and keep the
  // faster plan that fits.
  std::optional<Attempt> recomputed;
  unsigned numRecomputed = 0;
  bool useRecomputed = false;
  const SearchResult *fitting = stored->getFitting();
  if (options.recompute && (!fitting || stored->summary.lambda > 0)) {
    OwningOpRef<func::FuncOp> copy = func.clone();
    numRecomputed = recomputeActivations(*copy);
    if (numRecomputed) {
      llvm::Expected<Attempt> again = attemptPlan(*copy, model, options);
      if (!again)
        return again.takeError();
      stored->summary.searches += again->summary.searches;
      again->summary.searches = stored->summary.searches;
      const SearchResult *other = again->getFitting();
      useRecomputed = other && (!fitting || again->summary.estimatedTime <
                                                stored->summary.estimatedTime);
      // Neither fits: the error states what recomputing leaves.
      if (useRecomputed || !fitting) {
        recomputed = std::move(*again);
        chosen = &*recomputed;
        // The problem refers to the copy's operations: they move over.
        if (useRecomputed)
          func.getBody().takeBody(copy->getBody());
      }
    }
  }
  auto withRecompute = [&](llvm::Error error) -> llvm::Error {
    if (!recomputed)
      return error;
    return llvm::createStringError(
        llvm::toString(std::move(error)) + ", with " +
        std::to_string(numRecomputed) +
        " elementwise activations recomputed instead of kept");
  };
  // The devices cannot hold it: keep the largest weights in the nodes'
  // memory tiers, as few as make it fit, streamed to the devices.
  std::optional<Attempt> streaming;
  if (!chosen->getFitting() && options.stream && hasStreamTiers(model)) {
    // Nothing fits, so the function keeps its own body (a recomputing
    // copy is only adopted when it fits): the first attempt's problem
    // names its arguments.
    llvm::Expected<std::optional<Attempt>> streamed = attemptStreaming(
        func, model, options, *stored->problem, stored->summary.searches);
    if (!streamed)
      return streamed.takeError();
    if (*streamed) {
      streaming = std::move(**streamed);
      streaming->summary.searches = stored->summary.searches;
      chosen = &*streaming;
    }
  }
  // Neither fits: the error says what streaming would leave.
  auto withStreaming = [&](llvm::Error error) -> llvm::Error {
    if (!streaming || streaming->getFitting())
      return withRecompute(std::move(error));
    auto [count, bytes] = getStreamedTotals(*streaming->problem);
    return llvm::createStringError(llvm::toString(std::move(error)) +
                                   ", with its " + std::to_string(count) +
                                   " read-only weights (" + formatBytes(bytes) +
                                   ") kept in the memory tiers and streamed");
  };
  if (chosen->tooLarge(model))
    return withStreaming(
        makeTooLargeError(func, model, chosen->arguments, chosen->activations));
  if (auto *overflow = std::get_if<Overflow>(&chosen->found))
    return withStreaming(makeNoFitError(
        func, model, *overflow, chosen->arguments + chosen->activations));
  std::optional<TierUse> tiers;
  if (streaming) {
    llvm::Expected<TierUse> assigned =
        assignTiers(func, *chosen->problem, chosen->getFitting()->plan, model);
    if (!assigned)
      return assigned.takeError();
    tiers = std::move(*assigned);
  }
  PlanSummary summary = chosen->summary;
  summary.recomputed = useRecomputed ? numRecomputed : 0;
  recordPlan(func, *chosen->problem, chosen->getFitting()->plan, model);
  if (tiers) {
    summary.streamed = tiers->tiers.size();
    Builder builder(func.getContext());
    for (auto [arg, tier] : tiers->tiers)
      func.setArgAttr(arg, PlanDialect::kTierAttrName,
                      builder.getStringAttr(tier));
  }
  summary.planningSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return summary;
}

//===----------------------------------------------------------------------===//
// Making moves explicit
//===----------------------------------------------------------------------===//

DistAttr plan::getWrittenDist(Value value) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    auto func = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func)
      return {};
    return func.getArgAttrOfType<DistAttr>(arg.getArgNumber(),
                                           PlanDialect::kDistAttrName);
  }
  Operation *op = value.getDefiningOp();
  if (auto move = llvm::dyn_cast<RepartitionOp>(op))
    return move.getTo();
  if (auto move = llvm::dyn_cast<AllReduceOp>(op))
    return move.getTo();
  if (auto move = llvm::dyn_cast<ReduceScatterOp>(op))
    return move.getTo();
  auto results = op->getAttrOfType<ArrayAttr>(PlanDialect::kResultsAttrName);
  unsigned number = llvm::cast<OpResult>(value).getResultNumber();
  if (!results || number >= results.size())
    return {};
  return llvm::dyn_cast<DistAttr>(results[number]);
}

/// Checks that every device a plan names exists.
static LogicalResult checkDevices(func::FuncOp func, unsigned numDevices) {
  auto check = [&](Operation *op, Attribute attr) -> LogicalResult {
    auto dist = llvm::dyn_cast_or_null<DistAttr>(attr);
    if (!dist)
      return success();
    for (int64_t device : dist.getDevices())
      if (device >= int64_t(numDevices))
        return op->emitError() << "plan places a tile on device " << device
                               << " but the hardware has " << numDevices
                               << " device" << (numDevices == 1 ? "" : "s");
    return success();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(check(func, func.getArgAttr(i, PlanDialect::kDistAttrName))))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto split = op->getAttrOfType<SplitAttr>(PlanDialect::kSplitAttrName);
        split && int64_t(split.getFirstDevice()) + split.getNumDevices() >
                     int64_t(numDevices)) {
      op->emitError() << "plan runs the operation on devices "
                      << split.getFirstDevice() << " to "
                      << int64_t(split.getFirstDevice()) +
                             split.getNumDevices() - 1
                      << " but the hardware has " << numDevices << " device"
                      << (numDevices == 1 ? "" : "s");
      return WalkResult::interrupt();
    }
    for (StringRef name :
         {PlanDialect::kOperandsAttrName, PlanDialect::kResultsAttrName})
      if (auto array = op->getAttrOfType<ArrayAttr>(name))
        for (Attribute attr : array)
          if (failed(check(op, attr)))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult plan::verifyPlan(func::FuncOp func) {
  if (auto count =
          func->getAttrOfType<IntegerAttr>(PlanDialect::kNumDevicesAttrName))
    if (failed(checkDevices(func, unsigned(count.getInt()))))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    auto wanted = op->getAttrOfType<ArrayAttr>(PlanDialect::kOperandsAttrName);
    if (!wanted)
      return WalkResult::advance();
    for (auto [k, attr] : llvm::enumerate(wanted)) {
      DistAttr have = getWrittenDist(op->getOperand(k));
      if (!have) {
        op->emitError() << "operand " << k
                        << " has no distribution: its producer is not planned";
        return WalkResult::interrupt();
      }
      if (have != attr) {
        op->emitError() << "operand " << k << " is written as " << have
                        << " but read as " << attr
                        << "; run tra-insert-repartitions";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  Operation *terminator = func.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands()))
    if (DistAttr dist = getWrittenDist(value); dist && dist.getPartial())
      return terminator->emitError()
             << "result " << i << " is returned as partial aggregates " << dist
             << "; run tra-insert-repartitions";
  return success();
}

/// Builds the moves of `conversion` before `before`; returns the new value.
static Value buildMoves(OpBuilder &builder, Location loc, Value value,
                        const Conversion &conversion) {
  MLIRContext *context = builder.getContext();
  Type type = value.getType();
  for (const MoveStep &step : conversion.steps) {
    DistAttr from = toAttr(context, step.from), to = toAttr(context, step.to);
    switch (step.kind) {
    case MoveStep::Kind::AllReduce:
      value = AllReduceOp::create(builder, loc, type, value, from, to);
      break;
    case MoveStep::Kind::ReduceScatter:
      value = ReduceScatterOp::create(builder, loc, type, value,
                                      builder.getI64IntegerAttr(step.dim), from,
                                      to);
      break;
    case MoveStep::Kind::Repartition:
      value = RepartitionOp::create(builder, loc, type, value, from, to);
      break;
    }
  }
  return value;
}

/// Combines partial aggregates before they are returned.
static void completeReturnedValues(func::FuncOp func, const CostModel &model) {
  Operation *terminator = func.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  for (OpOperand &operand : terminator->getOpOperands()) {
    DistAttr dist = getWrittenDist(operand.get());
    if (!dist || !dist.getPartial())
      continue;
    auto type = llvm::cast<RankedTensorType>(operand.get().getType());
    Conversion reduction =
        model.getReduction(fromAttr(dist), type.getShape(),
                           getElementBytes(type.getElementType()));
    operand.set(
        buildMoves(builder, terminator->getLoc(), operand.get(), reduction));
  }
}

LogicalResult plan::insertRepartitions(func::FuncOp func,
                                       const CostModel &model) {
  func.getContext()->getOrLoadDialect<PlanDialect>();
  if (failed(checkDevices(func, model.getNumDevices())))
    return failure();
  DenseMap<std::pair<Value, Attribute>, Value> converted;
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (op->hasAttr(PlanDialect::kOperandsAttrName))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto wanted = op->getAttrOfType<ArrayAttr>(PlanDialect::kOperandsAttrName);
    if (!wanted || wanted.size() != op->getNumOperands())
      continue;
    for (auto [k, attr] : llvm::enumerate(wanted)) {
      auto want = llvm::dyn_cast<DistAttr>(attr);
      Value value = op->getOperand(k);
      DistAttr have = getWrittenDist(value);
      if (!want || !have || want == have)
        continue;
      auto [it, inserted] = converted.try_emplace({value, want}, Value());
      if (inserted) {
        auto type = llvm::cast<RankedTensorType>(value.getType());
        Conversion conversion =
            model.getConversion(fromAttr(have), fromAttr(want), type.getShape(),
                                getElementBytes(type.getElementType()));
        OpBuilder builder(op);
        it->second = buildMoves(builder, op->getLoc(), value, conversion);
      }
      op->setOperand(k, it->second);
    }
  }
  completeReturnedValues(func, model);
  return success();
}
