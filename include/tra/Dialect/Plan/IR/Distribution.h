//===- Distribution.h - Tile grids and placements of tensors ----*- C++ -*-===//
//
// TensorDist is the optimizer's value type for a distribution: the tile grid
// of a tensor, the devices of each tile and whether the tiles are partial
// aggregates. It mirrors #tra_plan.dist (toAttr / fromAttr convert) but is
// cheap to build, compare and hash inside the search.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_PLAN_IR_DISTRIBUTION_H
#define TRA_DIALECT_PLAN_IR_DISTRIBUTION_H

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir {
namespace tra {
namespace plan {

class DistAttr;

/// First element of tile `i` when `extent` elements are cut into `parts`
/// balanced tiles in multiples of `unit` elements: the first
/// `ceil(extent / unit) mod parts` tiles get one unit more.
int64_t tileStart(int64_t extent, int64_t parts, int64_t unit, int64_t i);

/// Number of elements of tile `i` (see tileStart).
inline int64_t tileSize(int64_t extent, int64_t parts, int64_t unit,
                        int64_t i) {
  return tileStart(extent, parts, unit, i + 1) -
         tileStart(extent, parts, unit, i);
}

/// Largest tile weight a distribution may state (keeps units * weights
/// far from overflow).
inline constexpr int64_t kMaxTileWeight = 1024;

/// First element of tile `i` when `extent` elements are cut into
/// `weights.size()` tiles in multiples of `unit` elements, tile j getting
/// about weights[j] / sum(weights) of the units (tile i starts at
/// floor(units * sum(weights[0..i)) / sum(weights)) units). Equal weights
/// give the same boundaries as tileStart only when the units divide evenly.
int64_t weightedTileStart(int64_t extent, int64_t unit,
                          llvm::ArrayRef<int64_t> weights, int64_t i);

/// Number of elements of tile `i` (see weightedTileStart).
inline int64_t weightedTileSize(int64_t extent, int64_t unit,
                                llvm::ArrayRef<int64_t> weights, int64_t i) {
  return weightedTileStart(extent, unit, weights, i + 1) -
         weightedTileStart(extent, unit, weights, i);
}

/// Divides `weights` by their greatest common divisor (the boundaries of
/// weightedTileStart stay the same).
void reduceWeights(llvm::MutableArrayRef<int64_t> weights);

/// Size of the largest tile of a dimension (tile 0 is never smaller).
inline int64_t maxTileSize(int64_t extent, int64_t parts, int64_t unit) {
  return tileSize(extent, parts, unit, 0);
}

/// How a tensor is cut into tiles and where the tiles are.
struct TensorDist {
  /// Tiles per dimension.
  llvm::SmallVector<int64_t, 4> grid;
  /// Split granularity per dimension, in elements.
  llvm::SmallVector<int64_t, 4> unit;
  /// Copies of every tile: replicas, or partial aggregates if `partial`.
  unsigned copies = 1;
  /// Set when the copies of a tile are partial aggregates of this kind.
  std::optional<AggregationKind> partial;
  /// With `partial`: the copies of a tile form this many independent groups
  /// of copies/groups devices (listed group after group), each of which
  /// aggregates to the whole tile. 1 otherwise.
  unsigned groups = 1;
  /// Devices of the copies, tile by tile (row-major), `copies` per tile.
  llvm::SmallVector<unsigned, 8> devices;
  /// Uneven tiles (devices of different speeds): empty when every dimension
  /// is cut evenly (tileStart); else, dimension after dimension, one
  /// positive weight per tile coordinate (grid[d] entries for dimension d,
  /// equal for a dimension cut evenly), the dimension cut by
  /// weightedTileStart where they differ.
  llvm::SmallVector<int64_t, 4> weights;

  /// The weights of dimension `dim` (empty when it is cut evenly).
  llvm::ArrayRef<int64_t> getDimWeights(unsigned dim) const;

  /// The whole tensor of rank `rank` on `devices` (one replica each).
  static TensorDist replicated(unsigned rank, llvm::ArrayRef<unsigned> devices);

  unsigned getRank() const { return grid.size(); }
  int64_t getNumTiles() const;
  llvm::ArrayRef<unsigned> getTileDevices(int64_t tile) const {
    return llvm::ArrayRef<unsigned>(devices).slice(tile * copies, copies);
  }
  /// Devices per partial group.
  unsigned getGroupSize() const { return copies / groups; }
  /// The devices of partial group `group` of tile `tile`.
  llvm::ArrayRef<unsigned> getGroupDevices(int64_t tile, unsigned group) const {
    return getTileDevices(tile).slice(group * getGroupSize(), getGroupSize());
  }
  /// Row-major grid coordinates of tile `tile`.
  void getTileCoords(int64_t tile,
                     llvm::SmallVectorImpl<int64_t> &coords) const;
  /// Row-major tile number of grid coordinates.
  int64_t getTileIndex(llvm::ArrayRef<int64_t> coords) const;
  /// [begin, end) of tile coordinate `coord` along `dim` of `shape`.
  std::pair<int64_t, int64_t> getTileRange(llvm::ArrayRef<int64_t> shape,
                                           unsigned dim, int64_t coord) const;
  /// Number of elements of tile `tile` of a tensor of `shape`.
  int64_t getTileElements(llvm::ArrayRef<int64_t> shape, int64_t tile) const;
  /// Number of distinct devices holding some tile.
  unsigned getNumDevicesUsed() const;

  /// Puts the distribution in canonical form for `shape`: devices sorted
  /// within each tile (partial: within each group, groups by first device);
  /// unit 1 where the grid is 1 or where unit 1 gives the same tile
  /// boundaries. Equal distributions compare equal afterwards.
  void canonicalize(llvm::ArrayRef<int64_t> shape);

  /// Adds the bytes each device holds to `bytes` (indexed by device).
  void addBytesPerDevice(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                         llvm::MutableArrayRef<double> bytes) const;
  /// The largest number of bytes any one device holds.
  double getMaxBytesPerDevice(llvm::ArrayRef<int64_t> shape,
                              int64_t elementBytes, unsigned numDevices) const;

  /// The same tiles and devices without `partial` (in canonical order).
  TensorDist withoutPartial() const;

  /// Short form for plans and logs: "[1, 8] unit [1, 128] on 0-7",
  /// "[2, 1] weights [3, 1, 1] on 0,1".
  std::string str() const;

  bool operator==(const TensorDist &other) const {
    return grid == other.grid && unit == other.unit && copies == other.copies &&
           partial == other.partial && groups == other.groups &&
           devices == other.devices && weights == other.weights;
  }
  bool operator!=(const TensorDist &other) const { return !(*this == other); }
};

llvm::hash_code hash_value(const TensorDist &dist);

/// Converts to and from the attribute form.
DistAttr toAttr(MLIRContext *context, const TensorDist &dist);
TensorDist fromAttr(DistAttr attr);

/// Compresses a device list for printing: "0-7", "0,2,4", "0-3,8-11".
std::string formatDeviceSet(llvm::ArrayRef<unsigned> devices);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_DIALECT_PLAN_IR_DISTRIBUTION_H
