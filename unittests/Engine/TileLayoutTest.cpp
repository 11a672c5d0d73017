//===- TileLayoutTest.cpp - Tile geometry of distributed programs ---------===//

#include "tra/Engine/TileLayout.h"

#include <gtest/gtest.h>

using namespace tra;
using namespace tra::engine;

TEST(TileLayout, Intersect) {
  Box a{{0, 0}, {4, 6}}, b{{2, 3}, {4, 4}};
  std::optional<Box> both = intersect(a, b);
  ASSERT_TRUE(both);
  EXPECT_EQ(*both, (Box{{2, 3}, {2, 3}}));
  EXPECT_EQ(both->volume(), 6);
  EXPECT_EQ(relativeOffsets(*both, b), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(relativeOffsets(*both, a), (std::vector<int64_t>{2, 3}));
  // Touching boxes do not intersect.
  EXPECT_FALSE(intersect(Box{{0}, {4}}, Box{{4}, {4}}));
  EXPECT_EQ((Box{{}, {}}).volume(), 1);
}

namespace {
// A [4, 6] output split in two row halves over ranks 0 and 1, replicated on
// rank 2 (which holds rank 0's half too).
const int64_t shape[] = {4, 6};
const TraExecTensorInfo outputs[] = {{"logits", TRA_EXEC_F32, 2, shape}};
const int64_t top[] = {0, 0}, bottom[] = {2, 0}, half[] = {2, 6};
const TraExecTile rank0[] = {{0, top, half, 1}};
const TraExecTile rank1[] = {{0, bottom, half, 1}};
const TraExecTile rank2[] = {{0, top, half, 0}};
const TraExecTile twice[] = {{0, top, half, 1}, {0, bottom, half, 1}};

TraExecProgram program(const TraExecRankProgram *ranks) {
  TraExecProgram p{};
  p.abiVersion = TRA_EXEC_ABI_VERSION;
  p.entryName = "forward";
  p.numOutputs = 1;
  p.outputs = outputs;
  p.numRanks = 3;
  p.ranks = ranks;
  return p;
}
} // namespace

TEST(TileLayout, LayoutOf) {
  const TraExecRankProgram ranks[] = {
      {0, nullptr, 1, rank0, nullptr},
      {0, nullptr, 1, rank1, nullptr},
      {0, nullptr, 1, rank2, nullptr},
  };
  TraExecProgram p = program(ranks);
  rt::Result<Layout> layout = layoutOf(p, 0, /*output=*/true);
  ASSERT_TRUE(layout.ok()) << layout.message();
  ASSERT_EQ(layout->tiles.size(), 3u);
  EXPECT_EQ(*layout->tiles[0], (Box{{0, 0}, {2, 6}}));
  EXPECT_EQ(*layout->tiles[1], (Box{{2, 0}, {2, 6}}));
  EXPECT_EQ(*layout->tiles[2], *layout->tiles[0]);
  EXPECT_EQ(layout->owner, (std::vector<bool>{true, true, false}));
  EXPECT_TRUE(layout->sameTiles(*layout));
}

TEST(TileLayout, SeveralTilesOnOneRankAreRefused) {
  const TraExecRankProgram ranks[] = {
      {0, nullptr, 2, twice, nullptr},
      {0, nullptr, 0, nullptr, nullptr},
      {0, nullptr, 0, nullptr, nullptr},
  };
  TraExecProgram p = program(ranks);
  rt::Result<Layout> layout = layoutOf(p, 0, /*output=*/true);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.message(),
            "rank 0 holds several tiles of 'logits' (not supported)");
}
