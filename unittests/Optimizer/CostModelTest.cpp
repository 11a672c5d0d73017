//===- CostModelTest.cpp - Arithmetic of the cost model -------------------===//

#include "TestHardware.h"

#include "tra/Optimizer/CostModel.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;
namespace hw = ::tra::hw;

namespace {

TEST(CostModelTest, KernelRoofline) {
  CostModel model(tra_test::loadShipped("dgx-8"));
  const CostModelOptions &o = model.getOptions();
  // Compute bound: 1 Gflop of bf16 at 312 Tflop/s x efficiency.
  EXPECT_DOUBLE_EQ(model.getKernelTime(0, hw::DType::BF16, 1e12, 1, true),
                   1e12 / (312e12 * o.contractionEfficiency));
  // Memory bound: 1 GB at 2039 GB/s x efficiency.
  EXPECT_DOUBLE_EQ(model.getKernelTime(3, hw::DType::F32, 1, 1e9, false),
                   1e9 / (2039e9 * o.memoryEfficiency));
  // The f32 rate when the file gives no separate figure.
  CostModel cpu(tra_test::loadShipped("cpu-8nodes"));
  EXPECT_DOUBLE_EQ(cpu.getKernelTime(0, hw::DType::BF16, 1e12, 0, true),
                   cpu.getKernelTime(0, hw::DType::F32, 1e12, 0, true));
}

TEST(CostModelTest, PointToPoint) {
  CostModel model(tra_test::makeHardware(2, 2, 100e9, 10e9));
  // Within a node: (steps + 1) latencies plus bytes over the link.
  EXPECT_DOUBLE_EQ(model.getTransferTime({{0, 1, 1e9, 1}}),
                   2 * 1e-6 + 1e9 / 100e9);
  // Between nodes.
  EXPECT_DOUBLE_EQ(model.getTransferTime({{0, 2, 1e9, 1}}),
                   2 * 1e-6 + 1e9 / 10e9);
  // A device sends one transfer after the other.
  EXPECT_DOUBLE_EQ(model.getTransferTime({{0, 1, 1e9, 1}, {0, 2, 1e9, 1}}),
                   2 * 1e-6 + 1e9 / 100e9 + 1e9 / 10e9);
  // Two devices of one node share its network interface.
  EXPECT_DOUBLE_EQ(model.getTransferTime({{0, 2, 1e9, 1}, {1, 3, 1e9, 1}}),
                   2 * 1e-6 + 2e9 / 10e9);
  // Data that stays on its device is free.
  EXPECT_DOUBLE_EQ(model.getTransferTime({{1, 1, 1e9, 1}}), 0);
  TrafficBytes bytes =
      model.getTrafficBytes({{0, 1, 5, 1}, {0, 2, 7, 1}, {3, 3, 11, 1}});
  EXPECT_EQ(bytes.intraNode, 5);
  EXPECT_EQ(bytes.interNode, 7);
}

TensorDist replicatedPartial(unsigned rank, unsigned devices) {
  SmallVector<unsigned> all;
  for (unsigned d = 0; d < devices; ++d)
    all.push_back(d);
  TensorDist dist = TensorDist::replicated(rank, all);
  dist.partial = AggregationKind::sum;
  return dist;
}

TEST(CostModelTest, AllReduce) {
  CostModel model(tra_test::loadShipped("dgx-8"));
  const double bytes = 64.0 * 8192 * 2;
  SmallVector<Flow> flows;
  model.addAllReduceFlows(replicatedPartial(2, 8), {64, 8192}, 2, flows);
  // Every device sends and receives 2 (p-1)/p of the tile; the latency is
  // 2 log2(p) steps plus the start.
  EXPECT_DOUBLE_EQ(model.getTrafficBytes(flows).total(), 2 * 7 * bytes);
  EXPECT_NEAR(model.getTransferTime(flows),
              7 * 3e-6 + 2.0 * 7 / 8 * bytes / 300e9, 1e-12);
  // A reduce-scatter moves half as much, in half the steps.
  flows.clear();
  model.addReduceScatterFlows(replicatedPartial(2, 8), {64, 8192}, 2, flows);
  EXPECT_DOUBLE_EQ(model.getTrafficBytes(flows).total(), 7 * bytes);
  EXPECT_NEAR(model.getTransferTime(flows), 4 * 3e-6 + 7.0 / 8 * bytes / 300e9,
              1e-12);
}

TEST(CostModelTest, AllReduceInGroups) {
  CostModel model(tra_test::loadShipped("gpu-6x4"));
  // Six groups of four partial sums, one group per server: nothing crosses
  // the network.
  TensorDist dist = replicatedPartial(1, 24);
  dist.groups = 6;
  SmallVector<Flow> flows;
  model.addAllReduceFlows(dist, {1024}, 4, flows);
  EXPECT_EQ(model.getTrafficBytes(flows).interNode, 0);
  EXPECT_DOUBLE_EQ(model.getTrafficBytes(flows).intraNode, 6 * 2 * 3 * 4096.0);
}

TEST(CostModelTest, ReduceScatterResult) {
  CostModel model(tra_test::makeHardware(1, 4));
  TensorDist from = replicatedPartial(2, 4);
  std::optional<TensorDist> rows =
      model.getReduceScatterResult(from, {8, 3}, 0);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->grid, (SmallVector<int64_t, 4>{4, 1}));
  EXPECT_EQ(rows->devices, (SmallVector<unsigned, 8>{0, 1, 2, 3}));
  EXPECT_FALSE(rows->partial);
  // Three columns cannot be cut in four.
  EXPECT_FALSE(model.getReduceScatterResult(from, {8, 3}, 1));
}

TEST(CostModelTest, ConversionChoosesCollective) {
  CostModel model(tra_test::loadShipped("dgx-8"));
  TensorDist partial = replicatedPartial(2, 8);
  // Read whole everywhere: an all-reduce and nothing else.
  Conversion whole =
      model.getConversion(partial, partial.withoutPartial(), {64, 8192}, 2);
  ASSERT_EQ(whole.steps.size(), 1u);
  EXPECT_EQ(whole.steps[0].kind, MoveStep::Kind::AllReduce);
  // Read as row tiles: a reduce-scatter leaves exactly those.
  TensorDist rows;
  rows.grid = {8, 1};
  rows.unit = {1, 1};
  rows.devices = {0, 1, 2, 3, 4, 5, 6, 7};
  Conversion scattered = model.getConversion(partial, rows, {64, 8192}, 2);
  ASSERT_EQ(scattered.steps.size(), 1u);
  EXPECT_EQ(scattered.steps[0].kind, MoveStep::Kind::ReduceScatter);
  EXPECT_EQ(scattered.steps[0].dim, 0u);
  EXPECT_LT(scattered.time, whole.time);
  // Nothing to do.
  EXPECT_TRUE(model.getConversion(rows, rows, {64, 8192}, 2).steps.empty());
}

/// A random distribution of `shape` over `numDevices` devices.
TensorDist randomDist(std::mt19937 &rng, ArrayRef<int64_t> shape,
                      unsigned numDevices) {
  TensorDist dist;
  int64_t tiles = 1;
  for (int64_t extent : shape) {
    int64_t unit = std::uniform_int_distribution<int64_t>(1, 2)(rng);
    int64_t units = (extent + unit - 1) / unit;
    int64_t parts = std::uniform_int_distribution<int64_t>(
        1, std::min<int64_t>(units, 3))(rng);
    dist.grid.push_back(parts);
    dist.unit.push_back(unit);
    tiles *= parts;
  }
  dist.copies = std::uniform_int_distribution<unsigned>(
      1, std::min<unsigned>(2, numDevices))(rng);
  std::vector<unsigned> all(numDevices);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t t = 0; t < tiles; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    dist.devices.append(all.begin(), all.begin() + dist.copies);
  }
  dist.canonicalize(shape);
  return dist;
}

/// Whether device `device` holds element `index` (row-major) in `dist`.
bool holds(const TensorDist &dist, ArrayRef<int64_t> shape, int64_t index,
           unsigned device) {
  SmallVector<int64_t> coords(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    int64_t element = index % shape[d];
    index /= shape[d];
    int64_t c = 0;
    while (dist.getTileRange(shape, d, c).second <= element)
      ++c;
    coords[d] = c;
  }
  return llvm::is_contained(dist.getTileDevices(dist.getTileIndex(coords)),
                            device);
}

// Every device receives exactly the elements of its new tiles it did not
// hold, whatever the two distributions.
TEST(CostModelTest, MovesDeliverExactlyWhatIsMissing) {
  CostModel model(tra_test::makeHardware(2, 2));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    SmallVector<int64_t> shape;
    unsigned rank = std::uniform_int_distribution<unsigned>(1, 3)(rng);
    for (unsigned d = 0; d < rank; ++d)
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 7)(rng));
    TensorDist from = randomDist(rng, shape, 4);
    TensorDist to = randomDist(rng, shape, 4);
    SmallVector<Flow> flows;
    model.addMoveFlows(from, to, shape, 1, flows);
    std::vector<double> received(4, 0.0), expected(4, 0.0);
    for (const Flow &flow : flows)
      received[flow.dst] += flow.bytes;
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    for (int64_t i = 0; i < elements; ++i)
      for (unsigned device = 0; device < 4; ++device)
        if (holds(to, shape, i, device) && !holds(from, shape, i, device))
          expected[device] += 1;
    EXPECT_EQ(received, expected)
        << "trial " << trial << ": " << from.str() << " -> " << to.str();
  }
}

// getLink answers from tables per device class; they must agree with the
// description for every pair, with several node groups and device kinds.
TEST(CostModelTest, LinksComeFromTheDescription) {
  auto description = hw::parseHardwareJSON(R"({
    "version": 1, "name": "mixed",
    "nodes": [
      { "name": "a", "count": 2,
        "devices": [
          { "kind": "cpu", "count": 1, "cores": 8, "memory_bytes": 1000000000,
            "memory_bandwidth": 1e11, "peak_flops": { "f32": 1e12 } },
          { "kind": "gpu", "count": 3, "memory_bytes": 1000000000,
            "memory_bandwidth": 1e12, "peak_flops": { "f32": 1e13 } } ],
        "links": [
          { "kind": "pcie", "between": ["cpu", "gpu"], "bandwidth": 2e10,
            "latency": 2e-6 },
          { "kind": "nvlink", "between": ["gpu", "gpu"], "bandwidth": 3e11,
            "latency": 1e-6 } ] },
      { "name": "b", "count": 1,
        "devices": [
          { "kind": "gpu", "count": 2, "memory_bytes": 1000000000,
            "memory_bandwidth": 1e12, "peak_flops": { "f32": 1e13 } } ],
        "links": [ { "kind": "pcie", "bandwidth": 1e10, "latency": 4e-6 } ] }
    ],
    "network": { "kind": "infiniband", "bandwidth": 5e10, "latency": 5e-6 }
  })",
                                           "mixed.json");
  ASSERT_TRUE(bool(description)) << llvm::toString(description.takeError());
  CostModel model(*description);
  ASSERT_EQ(model.getNumDevices(), 10u);
  for (unsigned src = 0; src < 10; ++src)
    for (unsigned dst = 0; dst < 10; ++dst) {
      hw::LinkInfo expected = description->link(src, dst);
      hw::LinkInfo got = model.getLink(src, dst);
      EXPECT_EQ(got.linkClass, expected.linkClass) << src << " -> " << dst;
      EXPECT_EQ(got.kind, expected.kind) << src << " -> " << dst;
      EXPECT_EQ(got.bandwidth, expected.bandwidth) << src << " -> " << dst;
      EXPECT_EQ(got.latency, expected.latency) << src << " -> " << dst;
    }
}

// Moves accumulated directly (the planner's path) and through the list of
// flows (EXPLAIN's and the tests' path) take the same time and bytes.
TEST(CostModelTest, AccumulatedMovesMatchTheirFlows) {
  CostModel model(tra_test::makeHardware(3, 2, 100e9, 10e9));
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    SmallVector<int64_t> shape;
    unsigned rank = std::uniform_int_distribution<unsigned>(1, 3)(rng);
    for (unsigned d = 0; d < rank; ++d)
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 9)(rng));
    TensorDist from = randomDist(rng, shape, 6);
    TensorDist to = randomDist(rng, shape, 6);
    SmallVector<Flow> flows;
    model.addMoveFlows(from, to, shape, 2, flows);
    TransferAccumulator direct(model);
    model.addMoveFlows(from, to, shape, 2, direct);
    EXPECT_EQ(direct.getTime(), model.getTransferTime(flows))
        << "trial " << trial << ": " << from.str() << " -> " << to.str();
    EXPECT_EQ(direct.getBytes().interNode,
              model.getTrafficBytes(flows).interNode);
    EXPECT_EQ(direct.getBytes().intraNode,
              model.getTrafficBytes(flows).intraNode);
  }
}

} // namespace
