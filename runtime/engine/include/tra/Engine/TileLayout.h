//===- TileLayout.h - Where the tiles of a tensor are over ranks -*- C++
//-*-===//
//
// A distributed program's descriptor (tra/Exec/ABI.h) lists, for each rank,
// the tiles of the entry's tensors it reads and writes. The engine keeps
// state (KV caches) across steps whose programs may cut a tensor
// differently; these types describe a tensor's tiles over the ranks and move
// a tensor from one layout to another (Redistribute.h). No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_TILELAYOUT_H
#define TRA_ENGINE_TILELAYOUT_H

#include "tra/Exec/ABI.h"
#include "tra/Runtime/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tra::engine {

/// A tile: where it starts in the whole tensor and its extents.
struct Box {
  std::vector<int64_t> offsets, sizes;
  bool operator==(const Box &other) const {
    return offsets == other.offsets && sizes == other.sizes;
  }
  bool operator!=(const Box &other) const { return !(*this == other); }
  /// The number of elements.
  int64_t volume() const;
};

/// Where the tiles of one tensor are: at most one per rank; for outputs,
/// `owner` marks the lowest rank holding each distinct tile.
struct Layout {
  std::vector<std::optional<Box>> tiles;
  std::vector<bool> owner;
  bool sameTiles(const Layout &other) const { return tiles == other.tiles; }
};

/// Returns the intersection of `a` and `b`, if not empty.
std::optional<Box> intersect(const Box &a, const Box &b);

/// `box`'s offsets relative to the tile `within`.
std::vector<int64_t> relativeOffsets(const Box &box, const Box &within);

/// The box of `tile`, a tile of a tensor of `rank` dimensions.
Box boxOf(const TraExecTile &tile, int64_t rank);

/// The layout of input (or output) `tensor` of the distributed `program`
/// over its ranks. Fails if a rank holds several tiles of it (not
/// supported).
rt::Result<Layout> layoutOf(const TraExecProgram &program, int64_t tensor,
                            bool output);

} // namespace tra::engine

#endif // TRA_ENGINE_TILELAYOUT_H
