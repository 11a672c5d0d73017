//===- IndexSpace.cpp - The parallel structure of one operation -----------===//

#include "tra/Optimizer/IndexSpace.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

//===----------------------------------------------------------------------===//
// Building index spaces
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

/// An index space with one index per dimension of `shape`, named a, b, ...
static IndexSpace makeDenseSpace(ArrayRef<int64_t> shape) {
  IndexSpace space;
  for (auto [i, extent] : llvm::enumerate(shape)) {
    space.extents.push_back(extent);
    space.names.push_back(char('a' + i));
    space.splittable.push_back(extent > 1);
    space.reduced.push_back(false);
  }
  return space;
}

/// Dimension refs mapping dimension d to index d.
static SmallVector<DimRef, 4> identityRefs(unsigned rank) {
  SmallVector<DimRef, 4> refs;
  for (unsigned d = 0; d < rank; ++d)
    refs.push_back({int(d), 1});
  return refs;
}

static void addOperand(IndexSpace &space, Value value,
                       SmallVector<DimRef, 4> refs) {
  space.operands.push_back(std::move(refs));
  ArrayRef<int64_t> shape = shapeOf(value);
  space.operandShapes.emplace_back(shape.begin(), shape.end());
}

static void addResult(IndexSpace &space, Value value,
                      SmallVector<DimRef, 4> refs) {
  space.results.push_back(std::move(refs));
  ArrayRef<int64_t> shape = shapeOf(value);
  space.resultShapes.emplace_back(shape.begin(), shape.end());
  space.elementType =
      llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

/// Index spaces of einsum and map: one index per spec letter.
static std::optional<IndexSpace> getSpecSpace(Operation *op,
                                              const EinsumSpec &spec) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value input : op->getOperands())
    shapes.push_back(shapeOf(input));
  auto extents = inferIndexExtents(spec, shapes, shapeOf(op->getResult(0)));
  if (!extents) {
    llvm::consumeError(extents.takeError());
    return std::nullopt;
  }
  IndexSpace space;
  for (unsigned i = 0; i < spec.getNumIndices(); ++i) {
    space.extents.push_back((*extents)[i]);
    space.names.push_back(spec.getName(i));
    space.splittable.push_back((*extents)[i] > 1);
    space.reduced.push_back(!spec.isOutputIndex(i));
  }
  auto refsOf = [](ArrayRef<unsigned> term) {
    SmallVector<DimRef, 4> refs;
    for (unsigned index : term)
      refs.push_back({int(index), 1});
    return refs;
  };
  for (auto [k, input] : llvm::enumerate(op->getOperands()))
    addOperand(space, input, refsOf(spec.getInput(k)));
  addResult(space, op->getResult(0), refsOf(spec.getOutput()));
  return space;
}

static std::optional<IndexSpace> getEinsumSpace(EinsumOp op) {
  std::optional<IndexSpace> space = getSpecSpace(op, op.getParsedSpec());
  if (!space)
    return std::nullopt;
  unsigned inputs = op.getInputs().size();
  space->aggregation = op.getAggregation();
  space->flopsPerPoint = std::max(1u, inputs);
  space->contraction =
      inputs >= 2 && llvm::any_of(space->reduced, [](bool r) { return r; });
  return space;
}

/// Scalar operations in a map body (constants, indices and the terminator
/// are free).
static double countBodyOps(MapOp op) {
  double count = 0;
  op.getBody().walk([&](Operation *inner) {
    if (!llvm::isa<arith::ConstantOp, IndexOp, YieldOp>(inner))
      count += 1;
  });
  return std::max(1.0, count);
}

static std::optional<IndexSpace> getMapSpace(MapOp op) {
  std::optional<IndexSpace> space = getSpecSpace(op, op.getParsedSpec());
  if (space)
    space->flopsPerPoint = countBodyOps(op);
  return space;
}

/// A reshape is cut along the finer side of each group of dimensions: only
/// the outermost fine dimension of a group splits, and the coarse dimension
/// follows it with the inner fine dimensions' product as scale.
static IndexSpace getReshapeSpace(ReshapeOp op) {
  ArrayRef<int64_t> src = shapeOf(op.getInput()), dst = shapeOf(op);
  IndexSpace space;
  SmallVector<DimRef, 4> srcRefs(src.size()), dstRefs(dst.size());
  for (auto &[srcDims, dstDims] : op.getGroups()) {
    bool fineIsSource = srcDims.size() >= dstDims.size();
    ArrayRef<int64_t> fineDims = fineIsSource ? srcDims : dstDims;
    ArrayRef<int64_t> coarseDims = fineIsSource ? dstDims : srcDims;
    ArrayRef<int64_t> fineShape = fineIsSource ? src : dst;
    auto &fineRefs = fineIsSource ? srcRefs : dstRefs;
    auto &coarseRefs = fineIsSource ? dstRefs : srcRefs;
    int first = space.extents.size();
    int64_t inner = 1;
    for (auto [j, dim] : llvm::enumerate(fineDims)) {
      int64_t extent = fineShape[dim];
      space.extents.push_back(extent);
      space.names.push_back(char('a' + space.names.size()));
      space.splittable.push_back(j == 0 && extent > 1);
      space.reduced.push_back(false);
      fineRefs[dim] = {int(space.extents.size()) - 1, 1};
      if (j > 0)
        inner *= extent;
    }
    for (int64_t dim : coarseDims)
      coarseRefs[dim] = {fineDims.empty() ? -1 : first, inner};
  }
  addOperand(space, op.getInput(), srcRefs);
  addResult(space, op, dstRefs);
  space.traffic = Traffic::None;
  return space;
}

static IndexSpace getConvertSpace(ConvertOp op) {
  IndexSpace space = makeDenseSpace(shapeOf(op));
  addOperand(space, op.getInput(), identityRefs(space.extents.size()));
  addResult(space, op, identityRefs(space.extents.size()));
  space.flopsPerPoint = 1;
  return space;
}

static IndexSpace getSliceSpace(SliceOp op) {
  IndexSpace space = makeDenseSpace(shapeOf(op.getInput()));
  space.splittable[op.getDim()] = false;
  addOperand(space, op.getInput(), identityRefs(space.extents.size()));
  addResult(space, op, identityRefs(space.extents.size()));
  space.traffic = Traffic::ResultOnly;
  return space;
}

static IndexSpace getConcatSpace(ConcatOp op) {
  IndexSpace space = makeDenseSpace(shapeOf(op));
  space.splittable[op.getDim()] = false;
  for (Value input : op.getInputs())
    addOperand(space, input, identityRefs(space.extents.size()));
  addResult(space, op, identityRefs(space.extents.size()));
  space.traffic = Traffic::ResultOnly;
  return space;
}

/// gather: indices i..., the table rows V (aggregated: a device holding a
/// block of rows contributes the rows it has, zeros elsewhere), columns r...
static IndexSpace getGatherSpace(GatherOp op) {
  ArrayRef<int64_t> table = shapeOf(op.getTable());
  ArrayRef<int64_t> indices = shapeOf(op.getIndices());
  SmallVector<int64_t, 6> extents(indices.begin(), indices.end());
  extents.push_back(table[0]);
  extents.append(table.begin() + 1, table.end());
  IndexSpace space = makeDenseSpace(extents);
  unsigned rows = indices.size();
  space.reduced[rows] = true;
  SmallVector<DimRef, 4> tableRefs, indexRefs, resultRefs;
  for (unsigned d = 0; d < table.size(); ++d)
    tableRefs.push_back({int(rows + d), 1});
  for (unsigned d = 0; d < rows; ++d)
    indexRefs.push_back({int(d), 1});
  resultRefs = indexRefs;
  for (unsigned d = 1; d < table.size(); ++d)
    resultRefs.push_back({int(rows + d), 1});
  addOperand(space, op.getTable(), tableRefs);
  addOperand(space, op.getIndices(), indexRefs);
  addResult(space, op, resultRefs);
  space.traffic = Traffic::ResultOnly;
  return space;
}

/// update_slice writes in place: the result is cut like `dest`, except
/// along `dim`: the position is known only at run time, so which tile the
/// update lands in is too (the per-rank code of a split `dim` would need
/// run-time masking; KV caches are split by heads instead).
static IndexSpace getUpdateSliceSpace(UpdateSliceOp op) {
  IndexSpace space = makeDenseSpace(shapeOf(op.getDest()));
  space.splittable[op.getDim()] = false;
  SmallVector<DimRef, 4> updateRefs = identityRefs(space.extents.size());
  updateRefs[op.getDim()] = {-1, 1};
  addOperand(space, op.getUpdate(), updateRefs);
  addOperand(space, op.getDest(), identityRefs(space.extents.size()));
  addOperand(space, op.getPosition(), {});
  addResult(space, op, identityRefs(space.extents.size()));
  space.traffic = Traffic::UpdateOnly;
  return space;
}

static IndexSpace getFillSpace(FillOp op) {
  IndexSpace space = makeDenseSpace(shapeOf(op));
  addResult(space, op, identityRefs(space.extents.size()));
  space.traffic = Traffic::ResultOnly;
  return space;
}

std::optional<IndexSpace> plan::getIndexSpace(Operation *op) {
  if (op->getNumResults() != 1 ||
      !llvm::isa<RankedTensorType>(op->getResult(0).getType()))
    return std::nullopt;
  std::optional<IndexSpace> space =
      llvm::TypeSwitch<Operation *, std::optional<IndexSpace>>(op)
          .Case([](EinsumOp op) { return getEinsumSpace(op); })
          .Case([](MapOp op) { return getMapSpace(op); })
          .Case([](ReshapeOp op) { return getReshapeSpace(op); })
          .Case([](ConvertOp op) { return getConvertSpace(op); })
          .Case([](SliceOp op) { return getSliceSpace(op); })
          .Case([](ConcatOp op) { return getConcatSpace(op); })
          .Case([](GatherOp op) { return getGatherSpace(op); })
          .Case([](UpdateSliceOp op) { return getUpdateSliceSpace(op); })
          .Case([](FillOp op) { return getFillSpace(op); })
          .Default([](Operation *) { return std::nullopt; });
  if (space)
    space->units.assign(space->extents.size(), 1);
  return space;
}

//===----------------------------------------------------------------------===//
// Choices and layouts
//===----------------------------------------------------------------------===//

int64_t SplitChoice::getNumDevices() const {
  int64_t n = replicas;
  for (auto [index, parts] : splits)
    n *= parts;
  return n;
}

int64_t SplitChoice::getParts(unsigned index) const {
  for (auto [i, parts] : splits)
    if (i == index)
      return parts;
  return 1;
}

/// Coordinates of every index on device `device` (0 for unsplit indices).
static int64_t getIndexCoords(const IndexSpace &space,
                              const SplitChoice &choice, int64_t device,
                              SmallVectorImpl<int64_t> &coords) {
  coords.assign(space.getNumIndices(), 0);
  int64_t replica = 0;
  // Peel the axes innermost first; the replica axis sits before split
  // number `replicaPosition`.
  for (int position = int(choice.splits.size()); position >= 0; --position) {
    if (unsigned(position) == choice.replicaPosition) {
      replica = device % choice.replicas;
      device /= choice.replicas;
    }
    if (position == 0)
      break;
    auto [index, parts] = choice.splits[position - 1];
    coords[index] = device % parts;
    device /= parts;
  }
  return replica;
}

/// The distribution of one operand or result with dimension map `refs`.
static TensorDist layoutOf(const IndexSpace &space, const SplitChoice &choice,
                           ArrayRef<DimRef> refs, ArrayRef<int64_t> shape,
                           bool isResult) {
  TensorDist dist;
  bool uneven = false;
  for (const DimRef &ref : refs) {
    int64_t parts = ref.index >= 0 ? choice.getParts(ref.index) : 1;
    dist.grid.push_back(parts);
    dist.unit.push_back(parts > 1 ? space.units[ref.index] * ref.scale : 1);
    uneven |= ref.index >= 0 && !choice.getWeights(ref.index).empty();
  }
  // An uneven index cuts the dimensions it maps to by the same weights.
  if (uneven)
    for (auto [d, ref] : llvm::enumerate(refs)) {
      ArrayRef<int64_t> w =
          ref.index >= 0 ? choice.getWeights(ref.index) : ArrayRef<int64_t>();
      if (w.empty())
        dist.weights.append(size_t(dist.grid[d]), 1);
      else
        dist.weights.append(w.begin(), w.end());
    }
  int64_t devices = choice.getNumDevices(), tiles = dist.getNumTiles();
  dist.copies = devices / tiles;
  bool partial = isResult && dist.copies > 1 &&
                 llvm::any_of(choice.splits, [&](auto split) {
                   return space.reduced[split.first];
                 });
  // Per tile: (replica, device), so that partial groups (one per replica)
  // are listed one after the other.
  SmallVector<SmallVector<std::pair<int64_t, unsigned>, 8>> perTile(tiles);
  SmallVector<int64_t, 6> coords, tileCoords(refs.size());
  for (int64_t device = 0; device < devices; ++device) {
    int64_t replica = getIndexCoords(space, choice, device, coords);
    for (auto [d, ref] : llvm::enumerate(refs))
      tileCoords[d] = ref.index >= 0 ? coords[ref.index] : 0;
    perTile[dist.getTileIndex(tileCoords)].push_back(
        {partial ? replica : 0, unsigned(device)});
  }
  for (auto &list : perTile) {
    llvm::sort(list);
    for (auto [replica, device] : list)
      dist.devices.push_back(choice.firstDevice + device);
  }
  if (partial) {
    dist.partial = space.aggregation;
    dist.groups = choice.replicas;
  }
  dist.canonicalize(shape);
  return dist;
}

ChoiceLayout plan::getChoiceLayout(const IndexSpace &space,
                                   const SplitChoice &choice) {
  ChoiceLayout layout;
  for (auto [refs, shape] :
       llvm::zip_equal(space.operands, space.operandShapes))
    layout.operands.push_back(layoutOf(space, choice, refs, shape, false));
  for (auto [refs, shape] : llvm::zip_equal(space.results, space.resultShapes))
    layout.results.push_back(layoutOf(space, choice, refs, shape, true));
  return layout;
}

/// Elements of the tile of a tensor with map `refs` on a device whose index
/// tiles have extents `tileExtents`.
static double tileElements(const SplitChoice &choice, ArrayRef<DimRef> refs,
                           ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> tileExtents) {
  double n = 1;
  for (auto [ref, extent] : llvm::zip_equal(refs, shape)) {
    bool split = ref.index >= 0 && choice.getParts(ref.index) > 1;
    n *= split ? double(tileExtents[ref.index] * ref.scale) : double(extent);
  }
  return n;
}

double plan::getChoiceTime(const IndexSpace &space, const SplitChoice &choice,
                           const CostModel &model) {
  int64_t elementBytes = getElementBytes(space.elementType);
  ::tra::hw::DType dtype = getHardwareDType(space.elementType);
  SmallVector<int64_t, 6> coords, extents(space.getNumIndices());
  double slowest = 0;
  for (int64_t device = 0, e = choice.getNumDevices(); device < e; ++device) {
    getIndexCoords(space, choice, device, coords);
    double points = 1;
    for (unsigned i = 0; i < space.getNumIndices(); ++i) {
      int64_t parts = choice.getParts(i);
      ArrayRef<int64_t> weights = choice.getWeights(i);
      if (!weights.empty())
        extents[i] = weightedTileSize(space.extents[i], space.units[i], weights,
                                      coords[i]);
      else
        extents[i] = parts > 1 ? tileSize(space.extents[i], parts,
                                          space.units[i], coords[i])
                               : space.extents[i];
      points *= double(extents[i]);
    }
    double resultBytes =
        tileElements(choice, space.results[0], space.resultShapes[0], extents) *
        elementBytes;
    double bytes = 0;
    switch (space.traffic) {
    case Traffic::None:
      break;
    case Traffic::ResultOnly:
      bytes = 2 * resultBytes;
      break;
    case Traffic::UpdateOnly:
      bytes = 2 * elementBytes *
              tileElements(choice, space.operands[0], space.operandShapes[0],
                           extents);
      break;
    case Traffic::Tiles:
      bytes = resultBytes;
      for (auto [refs, shape] :
           llvm::zip_equal(space.operands, space.operandShapes))
        bytes += elementBytes * tileElements(choice, refs, shape, extents);
      break;
    }
    double flops = points * space.flopsPerPoint;
    slowest = std::max(
        slowest, model.getKernelTime(choice.firstDevice + unsigned(device),
                                     dtype, flops, bytes, space.contraction));
  }
  return slowest;
}

//===----------------------------------------------------------------------===//
// Enumeration
//===----------------------------------------------------------------------===//

/// Devices per node when every node has the same number; 0 otherwise.
static unsigned getDevicesPerNode(const CostModel &model) {
  const auto &hardware = model.getHardware();
  unsigned per = hardware.getNode(0).numDevices;
  for (const auto &node : hardware.getNodes())
    if (node.numDevices != per)
      return 0;
  return hardware.numNodes() > 1 ? per : 0;
}

namespace {
/// Enumerates ordered splits of several indices whose parts multiply to the
/// device count.
struct MultiSplitEnumerator {
  const IndexSpace &space;
  unsigned numDevices;
  unsigned devicesPerNode;
  unsigned depth;
  SmallVectorImpl<SplitChoice> &choices;
  SplitChoice current;

  bool innerFitsNodes() const {
    if (!devicesPerNode)
      return true;
    int64_t inner = 1;
    for (size_t i = 1; i < current.splits.size(); ++i)
      inner *= current.splits[i].second;
    return devicesPerNode % inner == 0 || inner % devicesPerNode == 0;
  }

  void run(int64_t remaining) {
    if (current.splits.size() == depth) {
      if (remaining == 1 && innerFitsNodes())
        choices.push_back(current);
      return;
    }
    for (unsigned index = 0; index < space.getNumIndices(); ++index) {
      if (!space.splittable[index] ||
          llvm::any_of(current.splits,
                       [&](auto split) { return split.first == index; }))
        continue;
      for (int64_t parts = 2; parts <= remaining; ++parts) {
        if (remaining % parts || parts > space.getMaxParts(index))
          continue;
        current.splits.push_back({index, parts});
        run(remaining / parts);
        current.splits.pop_back();
      }
    }
  }
};
} // namespace

/// The largest multiplier of the speed ratios tried for integer weights.
static constexpr int64_t kWeightSteps = 16;

/// Small integer weights in proportion to `speeds`: the speeds relative to
/// the slowest, times the least multiplier up to kWeightSteps that rounds
/// every one to within 2% (else the best of them); empty when the speeds
/// are about equal.
static SmallVector<int64_t, 4> getWeights(ArrayRef<double> speeds) {
  double fastest = *llvm::max_element(speeds),
         slowest = *llvm::min_element(speeds);
  if (!(slowest > 0) || fastest <= slowest * 1.01)
    return {};
  SmallVector<int64_t, 4> best;
  double bestError = std::numeric_limits<double>::infinity();
  for (int64_t scale = 1; scale <= kWeightSteps; ++scale) {
    SmallVector<int64_t, 4> weights;
    double error = 0;
    for (double speed : speeds) {
      double exact = scale * speed / slowest;
      int64_t w = std::clamp<int64_t>(std::llround(exact), 1, kMaxTileWeight);
      weights.push_back(w);
      error = std::max(error, std::abs(double(w) - exact) / exact);
    }
    if (error < bestError) {
      bestError = error;
      best = std::move(weights);
    }
    if (bestError <= 0.02)
      break;
  }
  reduceWeights(best);
  if (llvm::all_equal(best))
    return {};
  return best;
}

/// On devices [first, first + count) of different speeds, one index split
/// into `count` parts in proportion to the devices' peak flop/s for the
/// operation's element type, and one in proportion to their memory
/// bandwidths (what decides a memory-bound operation), for every index
/// that has a unit for each part. Every operation gets the same weights
/// on the same devices, so a chain of uneven operations needs no moves.
static void addUnevenChoices(const IndexSpace &space, const CostModel &model,
                             unsigned first, unsigned count,
                             SmallVectorImpl<SplitChoice> &choices) {
  if (count < 2)
    return;
  const auto &hardware = model.getHardware();
  ::tra::hw::DType dtype = getHardwareDType(space.elementType);
  SmallVector<double, 8> flops, bandwidths;
  for (unsigned d = first; d < first + count; ++d) {
    flops.push_back(hardware.getDevice(d).getPeakFlops(dtype));
    bandwidths.push_back(hardware.getDevice(d).memoryBandwidth);
  }
  SmallVector<SmallVector<int64_t, 4>, 2> weightings;
  for (ArrayRef<double> speeds :
       {ArrayRef<double>(flops), ArrayRef<double>(bandwidths)}) {
    SmallVector<int64_t, 4> weights = getWeights(speeds);
    if (!weights.empty() && !llvm::is_contained(weightings, weights))
      weightings.push_back(std::move(weights));
  }
  for (const SmallVector<int64_t, 4> &weights : weightings)
    for (unsigned index = 0; index < space.getNumIndices(); ++index) {
      if (!space.splittable[index] || space.getMaxParts(index) < count)
        continue;
      // Every part gets at least one unit.
      bool fits = true;
      for (unsigned i = 0; i < count && fits; ++i)
        fits = weightedTileSize(space.extents[index], space.units[index],
                                weights, i) > 0;
      if (!fits)
        continue;
      SplitChoice choice;
      choice.splits.push_back({index, int64_t(count)});
      choice.weights = weights;
      choices.push_back(choice);
    }
}

void plan::enumerateChoices(const IndexSpace &space, const CostModel &model,
                            const ChoiceOptions &options,
                            SmallVectorImpl<SplitChoice> &choices,
                            DeviceBlock block) {
  size_t begin = choices.size();
  unsigned numDevices = block.count ? block.count : model.getNumDevices();
  // Every choice of a block starts at its first device.
  auto placeInBlock = llvm::make_scope_exit([&] {
    for (size_t i = begin; i < choices.size(); ++i)
      choices[i].firstDevice = block.first;
  });
  choices.push_back(SplitChoice());
  if (numDevices == 1)
    return;
  SplitChoice replicated;
  replicated.replicas = numDevices;
  choices.push_back(replicated);
  for (unsigned index = 0; index < space.getNumIndices(); ++index) {
    if (!space.splittable[index])
      continue;
    for (unsigned parts = 2; parts <= numDevices; ++parts) {
      if (numDevices % parts || parts > space.getMaxParts(index))
        continue;
      SplitChoice choice;
      choice.splits.push_back({index, parts});
      choices.push_back(choice);
      if (parts < numDevices) {
        choice.replicas = numDevices / parts;
        choices.push_back(choice);
        choice.replicaPosition = 1;
        choices.push_back(choice);
      }
    }
  }
  for (unsigned depth = 2; depth <= options.maxSplitIndices; ++depth) {
    MultiSplitEnumerator enumerator{space, numDevices, getDevicesPerNode(model),
                                    depth, choices,    SplitChoice()};
    enumerator.run(numDevices);
  }
  if (options.uneven)
    addUnevenChoices(space, model, block.first, numDevices, choices);
}

SplitAttr plan::toAttr(MLIRContext *context, const IndexSpace &space,
                       const SplitChoice &choice) {
  std::string names;
  SmallVector<int64_t, 3> counts;
  for (auto [index, parts] : choice.splits) {
    names.push_back(space.names[index]);
    counts.push_back(parts);
  }
  return SplitAttr::get(context, names, counts, choice.replicas,
                        choice.replicaPosition, choice.firstDevice,
                        choice.weights);
}

std::optional<SplitChoice> plan::fromAttr(const IndexSpace &space,
                                          SplitAttr attr) {
  SplitChoice choice;
  choice.replicas = attr.getReplicas();
  choice.replicaPosition = attr.getReplicaPosition();
  choice.firstDevice = attr.getFirstDevice();
  choice.weights.assign(attr.getWeights().begin(), attr.getWeights().end());
  for (auto [name, parts] :
       llvm::zip_equal(attr.getIndices(), attr.getCounts())) {
    auto *it = llvm::find(space.names, name);
    if (it == space.names.end())
      return std::nullopt;
    choice.splits.push_back({unsigned(it - space.names.begin()), parts});
  }
  return choice;
}
