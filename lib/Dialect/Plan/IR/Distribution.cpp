//===- Distribution.cpp - Tile grids and placements of tensors ------------===//

#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

int64_t plan::tileStart(int64_t extent, int64_t parts, int64_t unit,
                        int64_t i) {
  if (i <= 0)
    return 0;
  if (i >= parts)
    return extent;
  int64_t units = (extent + unit - 1) / unit;
  int64_t base = units / parts, extra = units % parts;
  int64_t startUnits = i * base + std::min(i, extra);
  return std::min(extent, startUnits * unit);
}

int64_t plan::weightedTileStart(int64_t extent, int64_t unit,
                                ArrayRef<int64_t> weights, int64_t i) {
  int64_t parts = weights.size();
  if (i <= 0)
    return 0;
  if (i >= parts)
    return extent;
  int64_t units = (extent + unit - 1) / unit;
  int64_t total = 0, before = 0;
  for (int64_t j = 0; j < parts; ++j) {
    total += weights[j];
    if (j < i)
      before += weights[j];
  }
  if (total <= 0)
    return 0;
  // floor(units * before / total) without forming units * before.
  int64_t startUnits =
      (units / total) * before + (units % total) * before / total;
  return std::min(extent, startUnits * unit);
}

void plan::reduceWeights(MutableArrayRef<int64_t> weights) {
  int64_t divisor = 0;
  for (int64_t w : weights)
    divisor = std::gcd(divisor, w);
  if (divisor > 1)
    for (int64_t &w : weights)
      w /= divisor;
}

ArrayRef<int64_t> TensorDist::getDimWeights(unsigned dim) const {
  if (weights.empty())
    return {};
  size_t offset = 0;
  for (unsigned d = 0; d < dim; ++d)
    offset += grid[d];
  ArrayRef<int64_t> mine = ArrayRef<int64_t>(weights).slice(offset, grid[dim]);
  if (llvm::all_equal(mine))
    return {};
  return mine;
}

TensorDist TensorDist::replicated(unsigned rank, ArrayRef<unsigned> devices) {
  TensorDist dist;
  dist.grid.assign(rank, 1);
  dist.unit.assign(rank, 1);
  dist.copies = devices.size();
  dist.devices.assign(devices.begin(), devices.end());
  llvm::sort(dist.devices);
  return dist;
}

int64_t TensorDist::getNumTiles() const {
  int64_t n = 1;
  for (int64_t g : grid)
    n *= g;
  return n;
}

void TensorDist::getTileCoords(int64_t tile,
                               SmallVectorImpl<int64_t> &coords) const {
  coords.assign(grid.size(), 0);
  for (int d = int(grid.size()) - 1; d >= 0; --d) {
    coords[d] = tile % grid[d];
    tile /= grid[d];
  }
}

int64_t TensorDist::getTileIndex(ArrayRef<int64_t> coords) const {
  int64_t tile = 0;
  for (auto [c, g] : llvm::zip_equal(coords, grid))
    tile = tile * g + c;
  return tile;
}

std::pair<int64_t, int64_t> TensorDist::getTileRange(ArrayRef<int64_t> shape,
                                                     unsigned dim,
                                                     int64_t coord) const {
  if (ArrayRef<int64_t> w = getDimWeights(dim); !w.empty())
    return {weightedTileStart(shape[dim], unit[dim], w, coord),
            weightedTileStart(shape[dim], unit[dim], w, coord + 1)};
  return {tileStart(shape[dim], grid[dim], unit[dim], coord),
          tileStart(shape[dim], grid[dim], unit[dim], coord + 1)};
}

int64_t TensorDist::getTileElements(ArrayRef<int64_t> shape,
                                    int64_t tile) const {
  SmallVector<int64_t, 4> coords;
  getTileCoords(tile, coords);
  int64_t n = 1;
  for (unsigned d = 0; d < grid.size(); ++d) {
    auto [begin, end] = getTileRange(shape, d, coords[d]);
    n *= end - begin;
  }
  return n;
}

unsigned TensorDist::getNumDevicesUsed() const {
  llvm::SmallSet<unsigned, 16> used;
  for (unsigned d : devices)
    used.insert(d);
  return used.size();
}

/// Sorts the devices of one tile: within groups of `size`, then the groups
/// by their first device.
static void sortTileDevices(MutableArrayRef<unsigned> tile, unsigned size) {
  for (unsigned g = 0; g < tile.size(); g += size)
    std::sort(tile.begin() + g, tile.begin() + g + size);
  if (size == tile.size())
    return;
  SmallVector<ArrayRef<unsigned>, 8> groupList;
  SmallVector<unsigned, 16> copy(tile.begin(), tile.end());
  for (unsigned g = 0; g < copy.size(); g += size)
    groupList.push_back(ArrayRef<unsigned>(copy).slice(g, size));
  llvm::sort(groupList, [](ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
    return a.front() < b.front();
  });
  unsigned i = 0;
  for (ArrayRef<unsigned> group : groupList)
    for (unsigned d : group)
      tile[i++] = d;
}

void TensorDist::canonicalize(ArrayRef<int64_t> shape) {
  if (!partial)
    groups = 1;
  for (int64_t t = 0, e = getNumTiles(); t < e; ++t)
    sortTileDevices(
        MutableArrayRef<unsigned>(devices).slice(t * copies, copies),
        copies / groups);
  // Weights: divided by their greatest common divisor per dimension, and
  // dropped when every dimension is even.
  if (!weights.empty()) {
    size_t offset = 0;
    bool uneven = false;
    for (unsigned d = 0; d < grid.size(); ++d) {
      MutableArrayRef<int64_t> mine =
          MutableArrayRef<int64_t>(weights).slice(offset, grid[d]);
      offset += grid[d];
      if (llvm::all_equal(ArrayRef<int64_t>(mine))) {
        std::fill(mine.begin(), mine.end(), 1);
        continue;
      }
      reduceWeights(mine);
      uneven = true;
    }
    if (!uneven)
      weights.clear();
  }
  for (unsigned d = 0; d < grid.size(); ++d) {
    if (grid[d] == 1 || unit[d] == 1 || !getDimWeights(d).empty()) {
      if (getDimWeights(d).empty())
        unit[d] = 1;
      continue;
    }
    bool same = true;
    for (int64_t i = 1; i < grid[d] && same; ++i)
      same = tileStart(shape[d], grid[d], unit[d], i) ==
             tileStart(shape[d], grid[d], 1, i);
    if (same)
      unit[d] = 1;
  }
  if (copies == groups) {
    partial.reset();
    groups = 1;
  }
}

void TensorDist::addBytesPerDevice(ArrayRef<int64_t> shape,
                                   int64_t elementBytes,
                                   MutableArrayRef<double> bytes) const {
  for (int64_t t = 0, e = getNumTiles(); t < e; ++t) {
    double tileBytes = double(getTileElements(shape, t)) * elementBytes;
    for (unsigned device : getTileDevices(t))
      if (device < bytes.size())
        bytes[device] += tileBytes;
  }
}

double TensorDist::getMaxBytesPerDevice(ArrayRef<int64_t> shape,
                                        int64_t elementBytes,
                                        unsigned numDevices) const {
  SmallVector<double, 32> bytes(numDevices, 0.0);
  addBytesPerDevice(shape, elementBytes, bytes);
  double best = 0;
  for (double b : bytes)
    best = std::max(best, b);
  return best;
}

TensorDist TensorDist::withoutPartial() const {
  TensorDist dist = *this;
  dist.partial.reset();
  dist.groups = 1;
  for (int64_t t = 0, e = getNumTiles(); t < e; ++t)
    sortTileDevices(
        MutableArrayRef<unsigned>(dist.devices).slice(t * copies, copies),
        copies);
  return dist;
}

std::string plan::formatDeviceSet(ArrayRef<unsigned> devices) {
  SmallVector<unsigned, 16> sorted(devices.begin(), devices.end());
  llvm::sort(sorted);
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1)
      ++j;
    if (i)
      os << ",";
    os << sorted[i];
    if (j > i)
      os << (j == i + 1 ? "," : "-") << sorted[j];
    i = j + 1;
  }
  return text;
}

std::string TensorDist::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(grid, os);
  os << "]";
  if (llvm::any_of(unit, [](int64_t u) { return u != 1; })) {
    os << " unit [";
    llvm::interleaveComma(unit, os);
    os << "]";
  }
  if (!weights.empty()) {
    os << " weights [";
    llvm::interleaveComma(weights, os);
    os << "]";
  }
  if (partial) {
    os << " partial " << stringifyAggregationKind(*partial);
    if (groups > 1)
      os << " in " << groups << " groups";
  }
  os << " on " << formatDeviceSet(devices);
  if (copies > 1 && !partial)
    os << " x" << copies;
  return text;
}

llvm::hash_code plan::hash_value(const TensorDist &dist) {
  return llvm::hash_combine(
      llvm::hash_combine_range(dist.grid.begin(), dist.grid.end()),
      llvm::hash_combine_range(dist.unit.begin(), dist.unit.end()), dist.copies,
      dist.partial, dist.groups,
      llvm::hash_combine_range(dist.devices.begin(), dist.devices.end()),
      llvm::hash_combine_range(dist.weights.begin(), dist.weights.end()));
}

DistAttr plan::toAttr(MLIRContext *context, const TensorDist &dist) {
  SmallVector<int64_t, 16> devices(dist.devices.begin(), dist.devices.end());
  return DistAttr::get(context, dist.grid, dist.unit, dist.copies, dist.partial,
                       dist.groups, devices, dist.weights);
}

TensorDist plan::fromAttr(DistAttr attr) {
  TensorDist dist;
  dist.grid.assign(attr.getGrid().begin(), attr.getGrid().end());
  dist.unit.assign(attr.getUnit().begin(), attr.getUnit().end());
  dist.copies = attr.getCopies();
  dist.partial = attr.getPartial();
  dist.groups = attr.getGroups();
  for (int64_t d : attr.getDevices())
    dist.devices.push_back(unsigned(d));
  dist.weights.assign(attr.getWeights().begin(), attr.getWeights().end());
  return dist;
}
