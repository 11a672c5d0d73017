//===- SearchTest.cpp - The search against exhaustive enumeration ---------===//

#include "TestHardware.h"

#include "tra/Optimizer/PlanProblem.h"
#include "tra/Optimizer/Planner.h"
#include "tra/Optimizer/Search.h"

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

namespace {

/// Builds random small graphs of einsums: joins, broadcasts, contractions,
/// reductions (sum and max), values read by several operations.
class RandomGraph {
public:
  RandomGraph(MLIRContext &context, std::mt19937 &rng)
      : context(context), rng(rng) {}

  OwningOpRef<ModuleOp> build() {
    const char *letters = "abcde";
    const int64_t sizes[] = {2, 3, 4, 6, 8, 12};
    extents.clear();
    for (int i = 0; i < 5; ++i)
      extents[letters[i]] = sizes[pick(6)];
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    unsigned numArgs = 2 + pick(2);
    std::vector<std::string> argLabels;
    SmallVector<Type> argTypes;
    for (unsigned i = 0; i < numArgs; ++i) {
      argLabels.push_back(randomLabels(1 + pick(2)));
      argTypes.push_back(typeOf(argLabels.back()));
    }
    auto func =
        func::FuncOp::create(b, loc, "random", b.getFunctionType(argTypes, {}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    std::vector<std::pair<Value, std::string>> values;
    for (unsigned i = 0; i < numArgs; ++i)
      values.push_back({entry->getArgument(i), argLabels[i]});
    unsigned numOps = 3 + pick(2);
    for (unsigned i = 0; i < numOps; ++i)
      values.push_back(addEinsum(b, loc, values));
    SmallVector<Value> results = {values.back().first};
    if (pick(2))
      results.push_back(values[numArgs + pick(numOps - 1)].first);
    // Half of the graphs return an argument's next value (a training
    // step's update), carried back to it.
    std::optional<unsigned> carried;
    if (pick(2)) {
      carried = pick(numArgs);
      const std::string &labels = argLabels[*carried];
      auto [last, lastLabels] = values.back();
      Value next = EinsumOp::create(
          b, loc, typeOf(labels), labels + "," + lastLabels + "->" + labels,
          CombinerKind::add, AggregationKind::sum,
          ValueRange{entry->getArgument(*carried), last});
      results.push_back(next);
    }
    func::ReturnOp::create(b, loc, results);
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    func.setType(b.getFunctionType(argTypes, resultTypes));
    if (carried)
      func.setResultAttr(results.size() - 1, "tra.carries",
                         b.getI64IntegerAttr(*carried));
    EXPECT_TRUE(succeeded(verify(*module)));
    return module;
  }

private:
  unsigned pick(unsigned n) {
    return std::uniform_int_distribution<unsigned>(0, n - 1)(rng);
  }

  std::string randomLabels(unsigned count) {
    std::string all = "abcde";
    std::shuffle(all.begin(), all.end(), rng);
    return all.substr(0, count);
  }

  RankedTensorType typeOf(const std::string &labels) {
    SmallVector<int64_t> shape;
    for (char c : labels)
      shape.push_back(extents[c]);
    return RankedTensorType::get(shape, Float32Type::get(&context));
  }

  std::pair<Value, std::string>
  addEinsum(OpBuilder &b, Location loc,
            const std::vector<std::pair<Value, std::string>> &values) {
    unsigned numInputs = 1 + pick(2);
    SmallVector<Value> inputs;
    std::vector<std::string> terms;
    std::string all;
    for (unsigned i = 0; i < numInputs; ++i) {
      // Prefer recent values, so that the graph is deep as well as wide.
      unsigned index =
          values.size() - 1 - pick(std::min<size_t>(3, values.size()));
      inputs.push_back(values[index].first);
      terms.push_back(values[index].second);
      for (char c : terms.back())
        if (all.find(c) == std::string::npos)
          all.push_back(c);
    }
    std::string output;
    for (char c : all)
      if (pick(3) != 0 && output.size() < 3)
        output.push_back(c);
    if (output.empty())
      output.push_back(all[pick(all.size())]);
    std::string spec;
    for (unsigned i = 0; i < numInputs; ++i)
      spec += (i ? "," : "") + terms[i];
    spec += "->" + output;
    CombinerKind combiner =
        numInputs == 2 ? (pick(2) ? CombinerKind::mul : CombinerKind::add)
                       : (pick(2) ? CombinerKind::id : CombinerKind::square);
    AggregationKind aggregation =
        pick(4) ? AggregationKind::sum : AggregationKind::max;
    Value result = EinsumOp::create(b, loc, typeOf(output), spec, combiner,
                                    aggregation, inputs);
    return {result, output};
  }

  MLIRContext &context;
  std::mt19937 &rng;
  std::map<char, int64_t> extents;
};

/// Hardware with 1 to 4 devices in 1 or 2 nodes and random figures.
::tra::hw::HardwareDescription randomHardware(std::mt19937 &rng) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  unsigned nodes = 1 + std::uniform_int_distribution<unsigned>(0, 1)(rng);
  unsigned perNode =
      1 + std::uniform_int_distribution<unsigned>(0, nodes == 1 ? 3 : 1)(rng);
  return tra_test::makeHardware(nodes, perNode, uniform(1e9, 1e11),
                                uniform(1e8, 1e10));
}

class SearchTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<TRADialect, func::FuncDialect>();
  }
  MLIRContext context;
};

// The dynamic program without a beam finds the optimum that enumerating
// every combination of choices finds, on random graphs and hardware; with
// the default beam it does too on graphs this small.
TEST_F(SearchTest, MatchesExhaustiveEnumeration) {
  std::mt19937 rng(2024);
  unsigned compared = 0, beamOptimal = 0;
  for (int trial = 0; trial < 120; ++trial) {
    RandomGraph generator(context, rng);
    OwningOpRef<ModuleOp> module = generator.build();
    CostModel model(randomHardware(rng));
    auto func = *module->getOps<func::FuncOp>().begin();
    auto problem = PlanProblem::build(func, model);
    ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
    std::optional<SearchResult> best = searchExhaustive(**problem, 0.0, 2e6);
    if (!best)
      continue;
    ++compared;
    SearchResult exact = searchPlan(**problem, {/*beam=*/0, /*lambda=*/0});
    EXPECT_FALSE(exact.pruned);
    EXPECT_NEAR(exact.cost, best->cost, 1e-9 * best->cost + 1e-15)
        << "trial " << trial << " on " << model.getHardware().summary();
    EXPECT_NEAR((*problem)->evaluate(exact.plan, 0.0), exact.cost,
                1e-9 * exact.cost + 1e-15);
    SearchResult beam = searchPlan(**problem, {/*beam=*/32, /*lambda=*/0});
    if (beam.cost <= best->cost * (1 + 1e-9) + 1e-15)
      ++beamOptimal;
  }
  EXPECT_GE(compared, 100u);
  EXPECT_EQ(beamOptimal, compared);
}

/// Checks the exact search against enumeration on `problem`; false when
/// there are too many combinations to enumerate.
bool matchesEnumeration(PlanProblem &problem, int trial) {
  std::optional<SearchResult> best = searchExhaustive(problem, 0.0, 2e6);
  if (!best)
    return false;
  SearchResult exact = searchPlan(problem, {/*beam=*/0, /*lambda=*/0});
  EXPECT_NEAR(exact.cost, best->cost, 1e-9 * best->cost + 1e-15)
      << "trial " << trial;
  return true;
}

// With pipeline stages (each operation restricted to the devices of one
// node, the first half of the operations on node 0 and the rest on node 1),
// the search is still exact; every choice of a stage lies on its devices.
TEST_F(SearchTest, StagesMatchExhaustiveEnumeration) {
  std::mt19937 rng(77);
  unsigned compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    RandomGraph generator(context, rng);
    OwningOpRef<ModuleOp> module = generator.build();
    unsigned perNode = 1 + std::uniform_int_distribution<unsigned>(0, 1)(rng);
    CostModel model(tra_test::makeHardware(2, perNode, 1e10, 1e9));
    auto func = *module->getOps<func::FuncOp>().begin();
    ProblemOptions options;
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (auto [i, op] : llvm::enumerate(ops))
      options.blocks[op] = i < ops.size() / 2 ? DeviceBlock{0, perNode}
                                              : DeviceBlock{perNode, perNode};
    auto problem = PlanProblem::build(func, model, options);
    ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
    for (const ProblemNode &node : (*problem)->getNodes()) {
      if (node.kind != ProblemNode::Kind::Operation)
        continue;
      DeviceBlock block = options.blocks.lookup(node.op);
      for (const ProblemChoice &choice : node.choices)
        for (unsigned id : choice.results)
          for (unsigned device : (*problem)->getDist(id).devices) {
            EXPECT_GE(device, block.first);
            EXPECT_LT(device, block.first + block.count);
          }
    }
    compared += matchesEnumeration(**problem, trial);
  }
  EXPECT_GE(compared, 40u);
}

// On devices of different speeds (uneven choices in every operation), the
// search is still exact, and the uneven choices are the devices' speeds.
TEST_F(SearchTest, UnevenSplitsMatchExhaustiveEnumeration) {
  std::mt19937 rng(99);
  unsigned compared = 0, uneven = 0;
  for (int trial = 0; trial < 60; ++trial) {
    RandomGraph generator(context, rng);
    OwningOpRef<ModuleOp> module = generator.build();
    CostModel model(tra_test::makeMixedHardware(1, 1, trial % 2 ? 3.0 : 2.0));
    auto func = *module->getOps<func::FuncOp>().begin();
    auto problem = PlanProblem::build(func, model);
    ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
    for (const ProblemNode &node : (*problem)->getNodes())
      for (const SplitChoice &split : node.splits)
        if (!split.weights.empty()) {
          ++uneven;
          EXPECT_EQ(split.weights,
                    (SmallVector<int64_t, 4>{trial % 2 ? 3 : 2, 1}));
        }
    compared += matchesEnumeration(**problem, trial);
  }
  EXPECT_GE(compared, 40u);
  EXPECT_GT(uneven, 0u);
}

// A graph with a long chain keeps one state per distribution of its newest
// value: exact with any beam.
TEST_F(SearchTest, ChainsAreExactWithABeam) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto type = RankedTensorType::get({64, 64}, b.getF32Type());
  auto func = func::FuncOp::create(
      b, loc, "chain", b.getFunctionType({type, type, type}, {type}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value x = entry->getArgument(0);
  for (int i = 0; i < 6; ++i)
    x = EinsumOp::create(b, loc, type, i % 2 ? "ij,jk->ik" : "ij,kj->ik",
                         CombinerKind::mul, AggregationKind::sum,
                         ValueRange{x, entry->getArgument(1 + i % 2)});
  func::ReturnOp::create(b, loc, x);
  CostModel model(tra_test::makeHardware(1, 4));
  auto problem = PlanProblem::build(func, model);
  ASSERT_TRUE(bool(problem));
  SearchResult exact = searchPlan(**problem, {0, 0});
  SearchResult narrow = searchPlan(**problem, {1, 0});
  EXPECT_NEAR(narrow.cost, exact.cost, 1e-12);
}

/// An MLP over a small batch whose weights, replicated for data
/// parallelism, do not fit: the planner raises the memory penalty until the
/// weights are cut.
TEST_F(SearchTest, MemoryConstraintCutsWeights) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto act = RankedTensorType::get({512, 4096}, b.getF32Type());
  auto weight = RankedTensorType::get({4096, 4096}, b.getF32Type());
  auto func = func::FuncOp::create(
      b, loc, "mlp", b.getFunctionType({act, weight, weight}, {act}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value h = EinsumOp::create(
      b, loc, act, "bd,de->be", CombinerKind::mul, AggregationKind::sum,
      ValueRange{entry->getArgument(0), entry->getArgument(1)});
  Value y = EinsumOp::create(b, loc, act, "bd,de->be", CombinerKind::mul,
                             AggregationKind::sum,
                             ValueRange{h, entry->getArgument(2)});
  func::ReturnOp::create(b, loc, y);

  // Plenty of memory: data parallel, weights replicated.
  CostModel roomy(tra_test::makeHardware(1, 4));
  auto fast = assignPartitions(func, roomy, {});
  ASSERT_TRUE(bool(fast)) << llvm::toString(fast.takeError());
  EXPECT_EQ(fast->lambda, 0);

  // 100 MiB per device: the two 64 MiB weights cannot both sit on every
  // device.
  CostModel tight(tra_test::makeHardware(1, 4, 100e9, 10e9, 100ull << 20));
  auto fitting = assignPartitions(func, tight, {});
  ASSERT_TRUE(bool(fitting)) << llvm::toString(fitting.takeError());
  EXPECT_GT(fitting->lambda, 0);
  EXPECT_GT(fitting->estimatedTime, fast->estimatedTime);
  for (unsigned d = 0; d < 4; ++d)
    EXPECT_LE(fitting->memory.getPeak(d), double(100ull << 20));
}

} // namespace
