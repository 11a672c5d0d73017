//===- TileLayout.cpp - Where the tiles of a tensor are over ranks --------===//

#include "tra/Engine/TileLayout.h"

#include <algorithm>
#include <string>

using namespace tra;
using namespace tra::engine;

int64_t Box::volume() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

std::optional<Box> tra::engine::intersect(const Box &a, const Box &b) {
  Box r;
  for (size_t d = 0; d < a.sizes.size(); ++d) {
    int64_t lo = std::max(a.offsets[d], b.offsets[d]);
    int64_t hi = std::min(a.offsets[d] + a.sizes[d], b.offsets[d] + b.sizes[d]);
    if (hi <= lo)
      return std::nullopt;
    r.offsets.push_back(lo);
    r.sizes.push_back(hi - lo);
  }
  return r;
}

std::vector<int64_t> tra::engine::relativeOffsets(const Box &box,
                                                  const Box &within) {
  std::vector<int64_t> offsets = box.offsets;
  for (size_t d = 0; d < offsets.size(); ++d)
    offsets[d] -= within.offsets[d];
  return offsets;
}

Box tra::engine::boxOf(const TraExecTile &tile, int64_t rank) {
  return Box{std::vector<int64_t>(tile.offsets, tile.offsets + rank),
             std::vector<int64_t>(tile.shape, tile.shape + rank)};
}

rt::Result<Layout> tra::engine::layoutOf(const TraExecProgram &program,
                                         int64_t tensor, bool output) {
  const TraExecTensorInfo &info =
      (output ? program.outputs : program.inputs)[tensor];
  Layout layout;
  size_t ranks = size_t(program.numRanks);
  layout.tiles.assign(ranks, std::nullopt);
  layout.owner.assign(ranks, false);
  for (int64_t r = 0; r < program.numRanks; ++r) {
    const TraExecRankProgram &rank = program.ranks[r];
    const TraExecTile *tiles = output ? rank.outputs : rank.inputs;
    int64_t count = output ? rank.numOutputs : rank.numInputs;
    for (int64_t i = 0; i < count; ++i) {
      if (tiles[i].tensor != tensor)
        continue;
      if (layout.tiles[size_t(r)])
        return rt::Error{"rank " + std::to_string(r) +
                         " holds several tiles of '" + info.name +
                         "' (not supported)"};
      layout.tiles[size_t(r)] = boxOf(tiles[i], info.rank);
      layout.owner[size_t(r)] = tiles[i].owner != 0;
    }
  }
  return layout;
}
