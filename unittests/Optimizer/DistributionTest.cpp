//===- DistributionTest.cpp - Tile geometry of distributions --------------===//

#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

namespace {

std::vector<int64_t> sizes(int64_t extent, int64_t parts, int64_t unit) {
  std::vector<int64_t> result;
  for (int64_t i = 0; i < parts; ++i)
    result.push_back(tileSize(extent, parts, unit, i));
  return result;
}

TEST(DistributionTest, BalancedSplits) {
  EXPECT_EQ(sizes(16, 4, 1), (std::vector<int64_t>{4, 4, 4, 4}));
  EXPECT_EQ(sizes(10, 4, 1), (std::vector<int64_t>{3, 3, 2, 2}));
  // 11008 = 2^8 * 43 on 24 devices.
  std::vector<int64_t> ffn = sizes(11008, 24, 1);
  EXPECT_EQ(ffn.front(), 459);
  EXPECT_EQ(ffn.back(), 458);
  EXPECT_EQ(std::accumulate(ffn.begin(), ffn.end(), int64_t(0)), 11008);
}

TEST(DistributionTest, SplitsInUnits) {
  // 52 heads of 128 on 8 devices: 7, 7, 7, 7, 6, 6, 6, 6 heads.
  EXPECT_EQ(sizes(52 * 128, 8, 128),
            (std::vector<int64_t>{896, 896, 896, 896, 768, 768, 768, 768}));
  // 64 heads on 24 devices: 16 devices with 3 heads, 8 with 2.
  std::vector<int64_t> heads = sizes(64 * 128, 24, 128);
  EXPECT_EQ(std::count(heads.begin(), heads.end(), 3 * 128), 16);
  EXPECT_EQ(std::count(heads.begin(), heads.end(), 2 * 128), 8);
  // A short last unit.
  EXPECT_EQ(sizes(10, 2, 4), (std::vector<int64_t>{8, 2}));
}

TEST(DistributionTest, WeightedSplits) {
  auto weighted = [](int64_t extent, int64_t unit,
                     std::vector<int64_t> weights) {
    std::vector<int64_t> result;
    for (int64_t i = 0; i < int64_t(weights.size()); ++i)
      result.push_back(weightedTileStart(extent, unit, weights, i + 1) -
                       weightedTileStart(extent, unit, weights, i));
    return result;
  };
  EXPECT_EQ(weighted(300, 1, {2, 1}), (std::vector<int64_t>{200, 100}));
  // 512 columns 4:1: 409 and 103 (starts round down).
  EXPECT_EQ(weighted(512, 1, {4, 1}), (std::vector<int64_t>{409, 103}));
  // In whole heads of 128: 10 heads 3:1:1 -> 6, 2, 2.
  EXPECT_EQ(weighted(1280, 128, {3, 1, 1}),
            (std::vector<int64_t>{768, 256, 256}));
  // Huge extents do not overflow.
  EXPECT_EQ(weightedTileStart(int64_t(1) << 62, 1, {1, 1023}, 1),
            (int64_t(1) << 62) / 1024);

  // A distribution cut 2:1 along rows: ranges, elements, bytes per device;
  // the canonical form divides the weights and drops even ones.
  TensorDist dist;
  dist.grid = {2, 1};
  dist.unit = {1, 1};
  dist.devices = {0, 1};
  dist.weights = {4, 2, 3};
  dist.canonicalize({6, 4});
  EXPECT_EQ(dist.weights, (SmallVector<int64_t, 4>{2, 1, 1}));
  EXPECT_EQ(dist.getTileRange({6, 4}, 0, 0),
            std::make_pair(int64_t(0), int64_t(4)));
  EXPECT_EQ(dist.getTileRange({6, 4}, 0, 1),
            std::make_pair(int64_t(4), int64_t(6)));
  EXPECT_EQ(dist.getTileElements({6, 4}, 0), 16);
  EXPECT_EQ(dist.getTileElements({6, 4}, 1), 8);
  EXPECT_EQ(dist.getMaxBytesPerDevice({6, 4}, 4, 2), 64.0);
  TensorDist even = dist;
  even.weights = {3, 3, 7};
  even.canonicalize({6, 4});
  EXPECT_TRUE(even.weights.empty());
  EXPECT_NE(dist, even);
  MLIRContext context;
  context.loadDialect<PlanDialect>();
  EXPECT_EQ(fromAttr(toAttr(&context, dist)), dist);
  EXPECT_EQ(dist.str(), "[2, 1] weights [2, 1, 1] on 0,1");
}

TEST(DistributionTest, TileCoordinates) {
  TensorDist dist;
  dist.grid = {2, 3};
  dist.unit = {1, 1};
  dist.devices = {0, 1, 2, 3, 4, 5};
  SmallVector<int64_t> coords;
  dist.getTileCoords(4, coords);
  EXPECT_EQ(coords, (SmallVector<int64_t>{1, 1}));
  EXPECT_EQ(dist.getTileIndex(coords), 4);
  EXPECT_EQ(dist.getTileRange({10, 7}, 1, 2),
            std::make_pair(int64_t(5), int64_t(7)));
  EXPECT_EQ(dist.getTileElements({10, 7}, 5), 5 * 2);
}

TEST(DistributionTest, CanonicalForm) {
  TensorDist a;
  a.grid = {1, 4};
  a.unit = {7, 128};
  a.copies = 2;
  a.devices = {1, 0, 3, 2, 5, 4, 7, 6};
  a.canonicalize({16, 512});
  // Unit 128 cuts 512 like unit 1 does; the grid-1 unit does not matter.
  EXPECT_EQ(a.unit, (SmallVector<int64_t, 4>{1, 1}));
  EXPECT_EQ(a.devices, (SmallVector<unsigned, 8>{0, 1, 2, 3, 4, 5, 6, 7}));

  TensorDist b = a;
  b.unit = {1, 128};
  b.canonicalize({16, 640}); // 5 heads in 4 tiles: 2, 1, 1, 1.
  EXPECT_EQ(b.unit, (SmallVector<int64_t, 4>{1, 128}));
}

TEST(DistributionTest, PartialGroups) {
  TensorDist dist;
  dist.grid = {1};
  dist.unit = {1};
  dist.copies = 4;
  dist.partial = AggregationKind::sum;
  dist.groups = 2;
  dist.devices = {3, 1, 2, 0};
  dist.canonicalize({8});
  EXPECT_EQ(dist.devices, (SmallVector<unsigned, 8>{0, 2, 1, 3}));
  EXPECT_EQ(dist.getGroupDevices(0, 1), (ArrayRef<unsigned>{1, 3}));
  TensorDist whole = dist.withoutPartial();
  EXPECT_FALSE(whole.partial);
  EXPECT_EQ(whole.groups, 1u);
  EXPECT_EQ(whole.devices, (SmallVector<unsigned, 8>{0, 1, 2, 3}));
}

TEST(DistributionTest, BytesPerDevice) {
  TensorDist dist;
  dist.grid = {2, 1};
  dist.unit = {1, 1};
  dist.copies = 2;
  dist.devices = {0, 1, 2, 3};
  SmallVector<double> bytes(4, 0.0);
  dist.addBytesPerDevice({3, 4}, 4, bytes);
  EXPECT_EQ(bytes, (SmallVector<double>{32, 32, 16, 16}));
  EXPECT_EQ(dist.getMaxBytesPerDevice({3, 4}, 4, 4), 32);
}

TEST(DistributionTest, DeviceSets) {
  EXPECT_EQ(formatDeviceSet({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(formatDeviceSet({4, 0, 2}), "0,2,4");
  EXPECT_EQ(formatDeviceSet({0, 1, 8, 9, 10, 3}), "0,1,3,8-10");
}

TEST(DistributionTest, AttributeRoundTrip) {
  MLIRContext context;
  context.loadDialect<PlanDialect>();
  TensorDist dist;
  dist.grid = {2, 1};
  dist.unit = {128, 1};
  dist.copies = 2;
  dist.partial = AggregationKind::max;
  dist.devices = {0, 1, 2, 3};
  EXPECT_EQ(fromAttr(toAttr(&context, dist)), dist);
}

} // namespace
