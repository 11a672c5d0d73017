//===- IndexSpace.h - The parallel structure of one operation ---*- C++ -*-===//
//
// The optimizer sees every model-level operation as an index space (an
// einsum's indices; the dimensions of elementwise and data-movement ops)
// whose indices may be split into parts, and a map from each operand and
// result dimension to the index it follows. Splitting an index that an
// operand lacks replicates that operand; splitting an aggregated index makes
// the result partial. A SplitChoice picks the parts of each index and the
// replicas; getChoiceLayout lays the parts out on devices and derives every
// operand's and result's distribution.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_INDEXSPACE_H
#define TRA_OPTIMIZER_INDEXSPACE_H

#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Optimizer/CostModel.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace tra {
namespace plan {

class SplitAttr;

/// Where one dimension of an operand or result sits in the index space.
struct DimRef {
  /// The index the dimension follows; -1 when this operation never splits
  /// the dimension.
  int index = -1;
  /// The dimension's tiles are the index's tiles times `scale` elements (a
  /// reshape's coarse dimension over its outermost fine one).
  int64_t scale = 1;
};

/// Which bytes a kernel streams through memory, for the roofline.
enum class Traffic {
  /// Every operand tile and the result tile.
  Tiles,
  /// Nothing (a view: reshape).
  None,
  /// Operand 0's tile, read and written (an in-place slice update).
  UpdateOnly,
  /// The result tile, read and written (copies: slice, concat, gather).
  ResultOnly,
};

/// The index space of one operation.
struct IndexSpace {
  llvm::SmallVector<int64_t, 6> extents;
  /// Split granularity of each index (set by the unit analysis; 1 by
  /// default).
  llvm::SmallVector<int64_t, 6> units;
  /// One letter per index, for plans and explanations.
  llvm::SmallVector<char, 6> names;
  llvm::SmallVector<bool, 6> splittable;
  /// Indices aggregated away (absent from the result).
  llvm::SmallVector<bool, 6> reduced;
  /// Per operand / result: the map of each dimension, and its shape.
  llvm::SmallVector<llvm::SmallVector<DimRef, 4>, 4> operands;
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>, 4> operandShapes;
  llvm::SmallVector<llvm::SmallVector<DimRef, 4>, 1> results;
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>, 1> resultShapes;
  AggregationKind aggregation = AggregationKind::sum;
  /// Scalar operations per point of the index space.
  double flopsPerPoint = 0;
  /// Whether the kernel is a contraction (for the efficiency factor).
  bool contraction = false;
  Traffic traffic = Traffic::Tiles;
  /// The element type the kernel computes in, and its size.
  Type elementType;

  unsigned getNumIndices() const { return extents.size(); }
  /// Number of parts index `index` can be cut into.
  int64_t getMaxParts(unsigned index) const {
    return (extents[index] + units[index] - 1) / units[index];
  }
};

/// The index space of `op`; std::nullopt for operations the optimizer does
/// not look into (they run whole on device 0).
std::optional<IndexSpace> getIndexSpace(Operation *op);

/// How an operation is cut: parts per split index, outermost first, and
/// replicas. Devices firstDevice .. firstDevice + getNumDevices() - 1 run
/// it, numbered row-major over the axes `parts...` with the replica axis
/// inserted before split number `replicaPosition` (0: outermost). A
/// `firstDevice` past 0 places the operation on a later block of devices
/// (a pipeline stage on another node).
struct SplitChoice {
  llvm::SmallVector<std::pair<unsigned, int64_t>, 3> splits;
  int64_t replicas = 1;
  unsigned replicaPosition = 0;
  unsigned firstDevice = 0;
  /// An uneven cut of the one split index (no replicas): part i gets about
  /// weights[i] / sum(weights) of it (weightedTileStart); empty: even.
  llvm::SmallVector<int64_t, 4> weights;

  int64_t getNumDevices() const;
  /// Parts of `index` (1 when not split).
  int64_t getParts(unsigned index) const;
  /// The weights of `index`'s parts (empty when it is cut evenly).
  llvm::ArrayRef<int64_t> getWeights(unsigned index) const {
    if (weights.empty() || splits.empty() || splits[0].first != index)
      return {};
    return weights;
  }
  bool operator==(const SplitChoice &other) const {
    return splits == other.splits && replicas == other.replicas &&
           replicaPosition == other.replicaPosition &&
           firstDevice == other.firstDevice && weights == other.weights;
  }
};

/// Distributions of every operand and result under a choice.
struct ChoiceLayout {
  llvm::SmallVector<TensorDist, 4> operands;
  llvm::SmallVector<TensorDist, 1> results;
};

ChoiceLayout getChoiceLayout(const IndexSpace &space,
                             const SplitChoice &choice);

/// Seconds the operation takes under `choice`: the slowest device's kernel.
double getChoiceTime(const IndexSpace &space, const SplitChoice &choice,
                     const CostModel &model);

/// Limits of the enumeration.
struct ChoiceOptions {
  /// Largest number of indices split at once.
  unsigned maxSplitIndices = 2;
  /// On devices of different speeds, also split one index in proportion to
  /// their speeds (SplitChoice::weights).
  bool uneven = true;
};

/// A block of consecutive devices an operation may run on (a pipeline
/// stage): devices first .. first + count - 1. A count of 0 means every
/// device of the hardware.
struct DeviceBlock {
  unsigned first = 0;
  unsigned count = 0;
  bool operator==(const DeviceBlock &other) const {
    return first == other.first && count == other.count;
  }
};

/// The choices the search considers for `space` on the hardware of `model`
/// (or, with a `block`, on those devices only, as if they were all the
/// hardware had):
/// nothing split (on one device, or replicated on all); one index split into
/// any divisor of the device count of parts (alone, or replicated to use all
/// devices, with the replicas outside or inside the parts); several indices
/// split with a product of parts equal to the device count, where on multi-node
/// hardware the parts of the inner indices divide or are a multiple of the
/// devices per node.
void enumerateChoices(const IndexSpace &space, const CostModel &model,
                      const ChoiceOptions &options,
                      llvm::SmallVectorImpl<SplitChoice> &choices,
                      DeviceBlock block = {});

/// The attribute form of a choice.
SplitAttr toAttr(MLIRContext *context, const IndexSpace &space,
                 const SplitChoice &choice);
/// Reads a choice back; std::nullopt if `attr` names unknown indices.
std::optional<SplitChoice> fromAttr(const IndexSpace &space, SplitAttr attr);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_INDEXSPACE_H
