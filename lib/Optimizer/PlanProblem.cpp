//===- PlanProblem.cpp - A function as a decomposition problem ------------===//

#include "tra/Optimizer/PlanProblem.h"

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>
#include <numeric>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

double ProblemValue::getBytes() const {
  double n = elementBytes;
  for (int64_t extent : shape)
    n *= double(extent);
  return n;
}

//===----------------------------------------------------------------------===//
// Unit analysis
//===----------------------------------------------------------------------===//

namespace {
/// Split granularities of every value dimension, agreed between the
/// operations that share an index: a dimension that a reshape ungroups into
/// (heads, head_dim) is split in whole heads everywhere it flows, so that
/// the tiles of producers and consumers line up.
class UnitAnalysis {
public:
  void run(ArrayRef<std::pair<Operation *, IndexSpace *>> ops) {
    for (int iteration = 0; iteration < 4; ++iteration) {
      bool changed = false;
      for (auto [op, space] : ops)
        changed |= visit(op, *space);
      if (!changed)
        break;
    }
    for (auto [op, space] : ops)
      collect(op, *space);
  }

private:
  int64_t &unitOf(Value value, unsigned dim) { return units[{value, dim}]; }

  /// Every (value, dimension, scale) of `space`'s index `index`.
  template <typename Fn>
  void forEachDim(Operation *op, const IndexSpace &space, unsigned index,
                  Fn fn) {
    for (auto [k, refs] : llvm::enumerate(space.operands))
      for (auto [d, ref] : llvm::enumerate(refs))
        if (ref.index == int(index))
          fn(op->getOperand(k), unsigned(d), ref.scale,
             space.operandShapes[k][d]);
    for (auto [d, ref] : llvm::enumerate(space.results[0]))
      if (ref.index == int(index))
        fn(op->getResult(0), unsigned(d), ref.scale, space.resultShapes[0][d]);
  }

  bool visit(Operation *op, const IndexSpace &space) {
    bool changed = false;
    for (unsigned i = 0; i < space.getNumIndices(); ++i) {
      if (!space.splittable[i])
        continue;
      int64_t unit = 1;
      forEachDim(op, space, i,
                 [&](Value v, unsigned d, int64_t scale, int64_t) {
                   int64_t u = std::max<int64_t>(1, unitOf(v, d));
                   if (u % scale == 0) {
                     int64_t merged = std::lcm(unit, u / scale);
                     if (space.extents[i] % merged == 0)
                       unit = merged;
                   }
                 });
      forEachDim(op, space, i,
                 [&](Value v, unsigned d, int64_t scale, int64_t extent) {
                   int64_t &u = unitOf(v, d);
                   int64_t merged =
                       std::lcm(std::max<int64_t>(1, u), unit * scale);
                   if (extent % merged == 0 && merged != u) {
                     u = merged;
                     changed = true;
                   }
                 });
    }
    return changed;
  }

  void collect(Operation *op, IndexSpace &space) {
    for (unsigned i = 0; i < space.getNumIndices(); ++i) {
      int64_t unit = 1;
      forEachDim(op, space, i,
                 [&](Value v, unsigned d, int64_t scale, int64_t) {
                   int64_t u = std::max<int64_t>(1, unitOf(v, d));
                   if (u % scale == 0 &&
                       space.extents[i] % std::lcm(unit, u / scale) == 0)
                     unit = std::lcm(unit, u / scale);
                 });
      space.units[i] = unit;
    }
  }

  llvm::DenseMap<std::pair<Value, unsigned>, int64_t> units;
};
} // namespace

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

namespace mlir::tra::plan {
/// Builds a PlanProblem from a function.
class ProblemBuilder {
public:
  ProblemBuilder(PlanProblem &problem, const ProblemOptions &options)
      : problem(problem), model(problem.model), options(options) {}

  llvm::Error build(func::FuncOp func);

private:
  llvm::Error collect(func::FuncOp func);
  int addValue(Value value);
  void buildOperationChoices(ProblemNode &node);
  void buildSourceChoices(ProblemNode &node, unsigned value);
  void addBoundSourceCosts(ProblemNode &node, ProblemChoice &choice);
  void addReturnCosts(ProblemNode &node, ProblemChoice &choice);
  void dedupChoices(ProblemNode &node);
  void order();

  PlanProblem &problem;
  const CostModel &model;
  const ProblemOptions &options;
  llvm::DenseMap<Value, int> valueIds;
  /// Nodes of operations in program order, before sources are placed.
  std::vector<ProblemNode> opNodes;
  /// Cache of raw choices of identical index spaces (identical layers).
  std::unordered_map<std::string, std::pair<std::vector<SplitChoice>,
                                            std::vector<ProblemChoice>>>
      cache;
};
} // namespace mlir::tra::plan

int ProblemBuilder::addValue(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return -1;
  ProblemValue v;
  v.value = value;
  v.shape.assign(type.getShape().begin(), type.getShape().end());
  v.elementBytes = getElementBytes(type.getElementType());
  int id = problem.values.size();
  problem.values.push_back(std::move(v));
  valueIds[value] = id;
  return id;
}

llvm::Error ProblemBuilder::collect(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return llvm::createStringError("@" + func.getSymName().str() +
                                   ": only single-block functions can be "
                                   "planned");
  Block &block = func.getBody().front();
  for (BlockArgument arg : block.getArguments()) {
    int id = addValue(arg);
    if (id >= 0) {
      problem.values[id].isArgument = true;
      problem.values[id].isStreamed = options.streamed.contains(arg);
    }
  }
  for (Operation &op : block.without_terminator()) {
    if (auto call = llvm::dyn_cast<CallOpInterface>(op)) {
      std::string callee;
      llvm::raw_string_ostream os(callee);
      if (auto symbol = llvm::dyn_cast_if_present<SymbolRefAttr>(
              call.getCallableForCallee()))
        os << symbol;
      else
        os << "a function value";
      return llvm::createStringError("@" + func.getSymName().str() + " calls " +
                                     callee +
                                     "; inline the model first (--inline)");
    }
    if (llvm::isa<FillOp>(op)) {
      int id = addValue(op.getResult(0));
      if (id >= 0)
        problem.values[id].isFill = true;
      continue;
    }
    ProblemNode node;
    node.op = &op;
    node.space = getIndexSpace(&op);
    node.kind =
        node.space ? ProblemNode::Kind::Operation : ProblemNode::Kind::Opaque;
    for (Value operand : op.getOperands())
      node.operandValues.push_back(valueIds.lookup_or(operand, -1));
    for (Value result : op.getResults()) {
      int id = addValue(result);
      node.resultValues.push_back(id);
    }
    unsigned n = opNodes.size();
    for (auto [k, v] : llvm::enumerate(node.operandValues))
      if (v >= 0)
        problem.values[v].uses.push_back({n, unsigned(k)});
    for (auto [r, v] : llvm::enumerate(node.resultValues))
      if (v >= 0) {
        problem.values[v].producer = n;
        problem.values[v].resultIndex = r;
      }
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(op))
      problem.values[node.resultValues[0]].aliasOf = node.operandValues[0];
    if (auto update = llvm::dyn_cast<UpdateSliceOp>(op))
      problem.values[node.resultValues[0]].aliasOf = node.operandValues[1];
    opNodes.push_back(std::move(node));
  }
  for (auto [i, returned] :
       llvm::enumerate(block.getTerminator()->getOperands())) {
    int id = valueIds.lookup_or(returned, -1);
    if (id < 0)
      continue;
    ProblemValue &v = problem.values[id];
    v.isReturned = true;
    // A carried result: its argument must exist, be read, and have its
    // shape; a result that is an argument itself carries nothing.
    auto carries = func.getResultAttrOfType<IntegerAttr>(i, "tra.carries");
    if (!carries || v.producer < 0 || v.carriedTo >= 0 ||
        carries.getInt() < 0 ||
        carries.getInt() >= int64_t(block.getNumArguments()))
      continue;
    int arg = valueIds.lookup_or(block.getArgument(carries.getInt()), -1);
    if (arg < 0 || problem.values[arg].uses.empty() ||
        problem.values[arg].shape != v.shape ||
        problem.values[arg].elementBytes != v.elementBytes)
      continue;
    // Read only by the operation that makes its next value (an optimizer
    // state's update): that operation's choices pay for the carry, and the
    // argument stays bound to what it reads.
    ProblemValue &target = problem.values[arg];
    if (target.uses.size() == 1 &&
        int(target.uses.front().first) == v.producer) {
      target.carriedFrom = id;
      continue;
    }
    v.carriedTo = arg;
    target.isCarryTarget = true;
  }
  return llvm::Error::success();
}

/// A key for index spaces that yield the same choices.
static std::string getSpaceKey(const IndexSpace &space) {
  std::string key;
  llvm::raw_string_ostream os(key);
  auto list = [&](auto range) {
    for (auto x : range)
      os << x << ",";
    os << ";";
  };
  list(space.extents);
  list(space.units);
  list(space.splittable);
  list(space.reduced);
  for (auto [refs, shape] :
       llvm::zip_equal(space.operands, space.operandShapes)) {
    for (const DimRef &ref : refs)
      os << ref.index << "*" << ref.scale << ",";
    list(shape);
  }
  for (const DimRef &ref : space.results[0])
    os << ref.index << "*" << ref.scale << ",";
  list(space.resultShapes[0]);
  os << int(space.aggregation) << ";" << space.flopsPerPoint << ";"
     << space.contraction << ";" << int(space.traffic) << ";"
     << space.elementType;
  return key;
}

void ProblemBuilder::buildOperationChoices(ProblemNode &node) {
  const IndexSpace &space = *node.space;
  DeviceBlock block = options.blocks.lookup(node.op);
  std::string key = getSpaceKey(space);
  if (block.count)
    key += ";on " + std::to_string(block.first) + "+" +
           std::to_string(block.count);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::vector<SplitChoice> splits;
    SmallVector<SplitChoice, 64> enumerated;
    enumerateChoices(space, model, options.choices, enumerated, block);
    std::vector<ProblemChoice> choices;
    for (const SplitChoice &split : enumerated) {
      ChoiceLayout layout = getChoiceLayout(space, split);
      ProblemChoice choice;
      choice.time = getChoiceTime(space, split, model);
      // The activation it writes (views write nothing new).
      if (!llvm::isa<ReshapeOp, UpdateSliceOp>(node.op))
        for (auto [dist, shape] :
             llvm::zip_equal(layout.results, space.resultShapes))
          choice.memoryBytes += dist.getMaxBytesPerDevice(
              shape, getElementBytes(space.elementType), model.getNumDevices());
      for (const TensorDist &dist : layout.operands)
        choice.operands.push_back(problem.intern(dist));
      for (const TensorDist &dist : layout.results)
        choice.results.push_back(problem.intern(dist));
      choice.split = splits.size();
      splits.push_back(split);
      choices.push_back(std::move(choice));
    }
    it =
        cache
            .emplace(key, std::make_pair(std::move(splits), std::move(choices)))
            .first;
  }
  node.splits = it->second.first;
  node.choices = it->second.second;
  for (ProblemChoice &choice : node.choices) {
    addBoundSourceCosts(node, choice);
    addReturnCosts(node, choice);
  }
}

/// A returned value must be complete: a choice that leaves it partial pays
/// for the cheapest reduction.
void ProblemBuilder::addReturnCosts(ProblemNode &node, ProblemChoice &choice) {
  for (auto [r, v] : llvm::enumerate(node.resultValues)) {
    if (v < 0 || !problem.values[v].isReturned)
      continue;
    const TensorDist &dist = problem.dists[choice.results[r]];
    if (dist.partial)
      choice.time += model
                         .getReduction(dist, problem.values[v].shape,
                                       problem.values[v].elementBytes)
                         .time;
  }
}

/// Time to write a fill in `dist`, and the worst device's bytes.
static std::pair<double, double> getSourceCosts(const CostModel &model,
                                                const ProblemValue &value,
                                                const TensorDist &dist) {
  if (value.isStreamed) {
    // No device memory between uses; every step, each device receives its
    // tiles from its node's tier.
    std::vector<double> perDevice(model.getNumDevices(), 0.0);
    dist.addBytesPerDevice(value.shape, value.elementBytes, perDevice);
    double time = 0;
    for (auto [device, bytes] : llvm::enumerate(perDevice))
      if (bytes > 0)
        time = std::max(time, model.getStreamTime(device, bytes));
    return {time, 0.0};
  }
  double bytes = dist.getMaxBytesPerDevice(value.shape, value.elementBytes,
                                           model.getNumDevices());
  if (value.isFill) {
    double bandwidth = model.getHardware().getDevice(0).memoryBandwidth *
                       model.getOptions().memoryEfficiency;
    return {bytes / bandwidth, 0.0};
  }
  return {0.0, bytes};
}

void ProblemBuilder::addBoundSourceCosts(ProblemNode &node,
                                         ProblemChoice &choice) {
  for (auto [k, v] : llvm::enumerate(node.operandValues)) {
    if (v < 0 || problem.values[v].producer >= 0 ||
        problem.values[v].uses.size() != 1 || problem.values[v].isCarryTarget)
      continue;
    auto [time, bytes] = getSourceCosts(model, problem.values[v],
                                        problem.dists[choice.operands[k]]);
    choice.time += time;
    choice.memoryBytes += bytes;
    if (int from = problem.values[v].carriedFrom; from >= 0) {
      const ProblemValue &carried = problem.values[from];
      choice.time +=
          model
              .getConversion(problem.dists[choice.results[carried.resultIndex]],
                             problem.dists[choice.operands[k]], carried.shape,
                             carried.elementBytes)
              .time;
    }
  }
}

void ProblemBuilder::buildSourceChoices(ProblemNode &node, unsigned value) {
  ProblemValue &v = problem.values[value];
  SmallVector<unsigned, 32> candidates;
  for (auto [n, k] : v.uses)
    for (const ProblemChoice &choice : opNodes[n].choices)
      if (!llvm::is_contained(candidates, choice.operands[k]))
        candidates.push_back(choice.operands[k]);
  for (unsigned dist : candidates) {
    ProblemChoice choice;
    std::tie(choice.time, choice.memoryBytes) =
        getSourceCosts(model, v, problem.dists[dist]);
    choice.results.push_back(dist);
    node.choices.push_back(std::move(choice));
  }
}

/// Drops choices that read and write the same distributions as a cheaper
/// one: they can never be better.
void ProblemBuilder::dedupChoices(ProblemNode &node) {
  std::map<std::pair<SmallVector<unsigned, 1>, SmallVector<unsigned, 4>>,
           unsigned>
      best;
  std::vector<ProblemChoice> kept;
  for (ProblemChoice &choice : node.choices) {
    auto key = std::make_pair(choice.results, choice.operands);
    auto [it, inserted] = best.try_emplace(key, kept.size());
    if (inserted) {
      kept.push_back(std::move(choice));
      continue;
    }
    ProblemChoice &other = kept[it->second];
    if (choice.time + choice.memoryBytes * 1e-30 <
        other.time + other.memoryBytes * 1e-30)
      other = std::move(choice);
  }
  node.choices = std::move(kept);
}

/// Places multi-use sources just before their first use and renumbers.
void ProblemBuilder::order() {
  unsigned numOps = opNodes.size();
  std::vector<std::vector<unsigned>> sourcesBefore(numOps + 1);
  // The op node before which each carried argument must be known: the
  // first producer of a result carried to it.
  std::vector<unsigned> carryNeededAt(problem.values.size(), numOps);
  for (const ProblemValue &v : problem.values)
    if (v.carriedTo >= 0)
      carryNeededAt[v.carriedTo] =
          std::min(carryNeededAt[v.carriedTo], unsigned(v.producer));
  for (auto [id, v] : llvm::enumerate(problem.values))
    if (v.producer < 0 && (v.uses.size() > 1 || v.isCarryTarget))
      sourcesBefore[std::min(v.uses.front().first, carryNeededAt[id])]
          .push_back(id);
  std::vector<unsigned> newIndex(numOps);
  std::vector<ProblemNode> &nodes = problem.nodes;
  for (unsigned n = 0; n < numOps; ++n) {
    for (unsigned id : sourcesBefore[n]) {
      ProblemNode source;
      source.kind = ProblemNode::Kind::Source;
      source.source = problem.values[id].value;
      source.op = problem.values[id].value.getDefiningOp();
      source.resultValues.push_back(id);
      buildSourceChoices(source, id);
      dedupChoices(source);
      problem.values[id].producer = nodes.size();
      nodes.push_back(std::move(source));
    }
    newIndex[n] = nodes.size();
    nodes.push_back(std::move(opNodes[n]));
  }
  for (ProblemValue &v : problem.values) {
    for (auto &use : v.uses)
      use.first = newIndex[use.first];
    bool isSource = v.isArgument || v.isFill;
    if (v.producer >= 0 && !isSource)
      v.producer = newIndex[v.producer];
    v.lastUse = 0;
    for (auto &use : v.uses)
      v.lastUse = std::max(v.lastUse, use.first);
  }
  // A carried argument stays known until its result is made.
  for (const ProblemValue &v : problem.values)
    if (v.carriedTo >= 0)
      problem.values[v.carriedTo].lastUse =
          std::max(problem.values[v.carriedTo].lastUse, unsigned(v.producer));
}

llvm::Error ProblemBuilder::build(func::FuncOp func) {
  if (llvm::Error error = collect(func))
    return error;
  SmallVector<std::pair<Operation *, IndexSpace *>> spaces;
  for (ProblemNode &node : opNodes)
    if (node.space)
      spaces.push_back({node.op, &*node.space});
  UnitAnalysis().run(spaces);
  for (ProblemNode &node : opNodes) {
    if (node.kind == ProblemNode::Kind::Operation) {
      buildOperationChoices(node);
    } else {
      ProblemChoice choice;
      for (Value operand : node.op->getOperands())
        if (auto type = llvm::dyn_cast<RankedTensorType>(operand.getType()))
          choice.operands.push_back(
              problem.intern(TensorDist::replicated(type.getRank(), {0})));
        else
          choice.operands.push_back(0);
      for (Value result : node.op->getResults())
        if (auto type = llvm::dyn_cast<RankedTensorType>(result.getType()))
          choice.results.push_back(
              problem.intern(TensorDist::replicated(type.getRank(), {0})));
        else
          choice.results.push_back(0);
      node.splits.push_back(SplitChoice());
      node.choices.push_back(std::move(choice));
      addBoundSourceCosts(node, node.choices.back());
    }
    dedupChoices(node);
  }
  order();
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<PlanProblem>>
PlanProblem::build(func::FuncOp func, const CostModel &model,
                   const ProblemOptions &options) {
  std::unique_ptr<PlanProblem> problem(new PlanProblem(model));
  // Distribution 0 is a placeholder for untracked operands.
  problem->intern(TensorDist::replicated(0, {0}));
  ProblemBuilder builder(*problem, options);
  if (llvm::Error error = builder.build(func))
    return std::move(error);
  // A value no operation reads or writes (an argument that is only returned
  // or not used at all) stays whole on device 0 (getValueDist).
  for (const ProblemValue &v : problem->values)
    if (v.producer < 0 && v.uses.empty())
      problem->intern(TensorDist::replicated(v.shape.size(), {0}));
  // Shape keys for the memo of conversion costs.
  std::map<std::pair<SmallVector<int64_t, 4>, int64_t>, unsigned> keys;
  for (const ProblemValue &v : problem->values)
    problem->shapeKeys.push_back(
        keys.try_emplace({v.shape, v.elementBytes}, keys.size()).first->second);
  return std::move(problem);
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

unsigned PlanProblem::intern(const TensorDist &dist) {
  auto [it, inserted] = distIds.try_emplace(dist, dists.size());
  if (inserted)
    dists.push_back(dist);
  return it->second;
}

/// Whether every dimension of `dist` cuts `shape` into equal tiles.
static bool cutsEvenly(const TensorDist &dist, ArrayRef<int64_t> shape) {
  if (!dist.weights.empty())
    return false;
  for (auto [d, extent] : llvm::enumerate(shape))
    if (extent <= 0 || extent % (dist.grid[d] * dist.unit[d]) != 0)
      return false;
  return true;
}

double PlanProblem::getEdgeCost(unsigned value, unsigned from, unsigned to) {
  if (from == to)
    return 0;
  uint64_t key = (uint64_t(shapeKeys[value]) << 44) | (uint64_t(from) << 22) |
                 uint64_t(to);
  auto [it, inserted] = edgeCosts.try_emplace(key, 0.0);
  if (!inserted)
    return it->second;
  const ProblemValue &v = values[value];
  const TensorDist &source = dists[from], &target = dists[to];
  // A plain move between even cuts: its time scales with the bytes, so one
  // computation serves every shape (the layers of a model share few pairs
  // of distributions but many shapes).
  if (!source.partial && cutsEvenly(source, v.shape) &&
      cutsEvenly(target, v.shape)) {
    auto [scaling, fresh] =
        moveScalings.try_emplace((uint64_t(from) << 32) | uint64_t(to));
    if (fresh)
      scaling->second =
          model.getMoveScaling(source, target, v.shape, v.elementBytes);
    return it->second = scaling->second.latency +
                        scaling->second.secondsPerByte * v.getBytes();
  }
  if (!source.partial)
    return it->second =
               model.getConversion(source, target, v.shape, v.elementBytes)
                   .time;
  // Partial: the cheapest reduction followed by a move, where the
  // reductions depend on the source alone (CostModel::getConversion).
  uint64_t reductionKey = (uint64_t(shapeKeys[value]) << 32) | uint64_t(from);
  if (!reductions.count(reductionKey)) {
    SmallVector<std::pair<double, unsigned>, 4> options;
    for (const MoveStep &step :
         model.getReductionOptions(source, v.shape, v.elementBytes))
      options.push_back({step.time, intern(step.to)});
    reductions[reductionKey] = std::move(options);
  }
  double best = std::numeric_limits<double>::infinity();
  // getEdgeCost may intern distributions and grow the memos: copied.
  SmallVector<std::pair<double, unsigned>, 4> options =
      reductions.lookup(reductionKey);
  for (auto [time, mid] : options)
    best = std::min(best, time + getEdgeCost(value, mid, to));
  edgeCosts[key] = best;
  return best;
}

unsigned PlanProblem::getValueDist(unsigned value,
                                   ArrayRef<unsigned> plan) const {
  const ProblemValue &v = values[value];
  if (v.producer >= 0) {
    const ProblemNode &node = nodes[v.producer];
    return node.choices[plan[v.producer]].results[v.resultIndex];
  }
  if (!v.uses.empty()) {
    auto [n, k] = v.uses.front();
    return nodes[n].choices[plan[n]].operands[k];
  }
  auto it = distIds.find(TensorDist::replicated(v.shape.size(), {0}));
  return it == distIds.end() ? 0 : it->second;
}

double PlanProblem::evaluate(ArrayRef<unsigned> plan, double lambda) {
  double total = 0;
  for (auto [n, node] : llvm::enumerate(nodes)) {
    const ProblemChoice &choice = node.choices[plan[n]];
    total += choice.time + lambda * choice.memoryBytes;
  }
  for (auto [id, v] : llvm::enumerate(values)) {
    if (v.producer < 0)
      continue;
    unsigned from = getValueDist(id, plan);
    for (auto [n, k] : v.uses)
      total += getEdgeCost(id, from, nodes[n].choices[plan[n]].operands[k]);
    if (v.carriedTo >= 0)
      total += getEdgeCost(id, from, getValueDist(v.carriedTo, plan));
  }
  return total;
}

/// The value a view ultimately shows.
static unsigned getStorage(ArrayRef<ProblemValue> values, unsigned id) {
  while (values[id].aliasOf >= 0)
    id = values[id].aliasOf;
  return id;
}

/// For every storage value, the node after which it can be freed (~0u: never).
static std::vector<unsigned> getFreePoints(ArrayRef<ProblemValue> values) {
  std::vector<unsigned> freeAt(values.size(), 0);
  for (auto [id, v] : llvm::enumerate(values)) {
    unsigned storage = getStorage(values, id);
    unsigned end = v.isReturned     ? ~0u
                   : v.uses.empty() ? unsigned(std::max(v.producer, 0))
                                    : v.lastUse;
    freeAt[storage] = std::max(freeAt[storage], end);
  }
  return freeAt;
}

std::vector<double> StreamedBuffers::getTotal(unsigned numDevices) const {
  std::vector<double> total(numDevices, 0.0);
  for (const auto &[position, bytes] : reads)
    for (unsigned d = 0; d < numDevices && d < bytes.size(); ++d)
      total[d] += bytes[d];
  return total;
}

void StreamedBuffers::addLive(unsigned position, MutableArrayRef<double> step) {
  while (next < reads.size() && reads[next].first < position)
    ++next;
  size_t live = next < reads.size() && reads[next].first == position ? 2 : 1;
  for (size_t r = next; r < std::min(next + live, reads.size()); ++r)
    for (unsigned d = 0; d < step.size() && d < reads[r].second.size(); ++d)
      step[d] += reads[r].second[d];
}

MemoryUse PlanProblem::getMemoryUse(ArrayRef<unsigned> plan) const {
  unsigned numDevices = model.getNumDevices();
  MemoryUse use;
  use.resident.assign(numDevices, 0.0);
  use.peakActivations.assign(numDevices, 0.0);
  std::vector<double> current(numDevices, 0.0), step(numDevices);
  std::vector<unsigned> freeAt = getFreePoints(values);
  std::vector<std::vector<unsigned>> freedAfter(nodes.size());
  // Streamed arguments: per operation that reads some, the bytes each
  // device receives for it; its buffers and the next such operation's are
  // allocated while it runs.
  StreamedBuffers streamed;
  for (auto [n, node] : llvm::enumerate(nodes)) {
    if (node.kind == ProblemNode::Kind::Source)
      continue;
    std::vector<double> bytes;
    for (int v : node.operandValues) {
      if (v < 0 || !values[v].isStreamed)
        continue;
      if (bytes.empty())
        bytes.assign(numDevices, 0.0);
      dists[getValueDist(v, plan)].addBytesPerDevice(
          values[v].shape, values[v].elementBytes, bytes);
    }
    if (!bytes.empty())
      streamed.addRead(unsigned(n), std::move(bytes));
  }
  use.streamed = streamed.getTotal(numDevices);
  for (auto [id, v] : llvm::enumerate(values)) {
    if (v.isStreamed)
      continue;
    if (v.isArgument || v.isFill) {
      dists[getValueDist(id, plan)].addBytesPerDevice(v.shape, v.elementBytes,
                                                      use.resident);
      continue;
    }
    if (v.aliasOf < 0 && freeAt[id] != ~0u && freeAt[id] < nodes.size())
      freedAfter[freeAt[id]].push_back(id);
  }
  for (auto [n, node] : llvm::enumerate(nodes)) {
    if (node.kind == ProblemNode::Kind::Source)
      continue;
    const ProblemChoice &choice = node.choices[plan[n]];
    step = current;
    for (auto [k, v] : llvm::enumerate(node.operandValues)) {
      if (v < 0 || values[v].producer < 0)
        continue;
      unsigned from = getValueDist(v, plan);
      if (from != choice.operands[k])
        dists[choice.operands[k]].addBytesPerDevice(
            values[v].shape, values[v].elementBytes, step);
    }
    for (auto [r, v] : llvm::enumerate(node.resultValues)) {
      if (v < 0 || values[v].aliasOf >= 0)
        continue;
      dists[choice.results[r]].addBytesPerDevice(
          values[v].shape, values[v].elementBytes, current);
      dists[choice.results[r]].addBytesPerDevice(values[v].shape,
                                                 values[v].elementBytes, step);
    }
    streamed.addLive(unsigned(n), step);
    for (unsigned d = 0; d < numDevices; ++d)
      use.peakActivations[d] = std::max(use.peakActivations[d], step[d]);
    for (unsigned id : freedAfter[n]) {
      std::vector<double> bytes(numDevices, 0.0);
      dists[getValueDist(id, plan)].addBytesPerDevice(
          values[id].shape, values[id].elementBytes, bytes);
      for (unsigned d = 0; d < numDevices; ++d)
        current[d] -= bytes[d];
    }
  }
  return use;
}

std::pair<double, double> PlanProblem::getMinimumBytes() const {
  double arguments = 0, current = 0, peak = 0;
  std::vector<unsigned> freeAt = getFreePoints(values);
  std::vector<double> freedAfter(nodes.size() + 1, 0.0);
  std::vector<double> allocatedAt(nodes.size() + 1, 0.0);
  for (auto [id, v] : llvm::enumerate(values)) {
    if (v.isStreamed)
      continue;
    if (v.isArgument || v.isFill) {
      arguments += v.getBytes();
      continue;
    }
    if (v.aliasOf >= 0 || v.producer < 0)
      continue;
    allocatedAt[v.producer] += v.getBytes();
    if (freeAt[id] != ~0u && freeAt[id] < nodes.size())
      freedAfter[freeAt[id]] += v.getBytes();
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    current += allocatedAt[n];
    peak = std::max(peak, current);
    current -= freedAfter[n];
  }
  return {arguments, peak};
}
