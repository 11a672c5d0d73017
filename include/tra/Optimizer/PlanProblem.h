//===- PlanProblem.h - A function as a decomposition problem ----*- C++ -*-===//
//
// The search problem of one function: a node per operation (in program
// order) with its choices, a value per tensor, and the cost of converting a
// value between the distribution its producer writes and the one a consumer
// reads. The objective of a plan (one choice per node) is
//
//   sum over nodes of   time(choice) + lambda * memoryBytes(choice)
//   + sum over uses of  conversionTime(producer's dist -> consumer's dist)
//
// Function arguments and tra.fill values are sources: the loader (or the
// fill) writes them in any distribution for free. A source with one use is
// bound to exactly what that use reads; one with several uses becomes a node
// whose choices are the distributions its uses may read.
//
// A result marked `tra.carries = N` is the next call's argument N (a
// training step's updated weights and optimizer states): the objective also
// charges converting it from the distribution its producer writes to the
// one argument N is read in, so that a plan does not update a weight in
// shards that the next step must gather first.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_PLANPROBLEM_H
#define TRA_OPTIMIZER_PLANPROBLEM_H

#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/IndexSpace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace mlir {
namespace tra {
namespace plan {

/// One choice of one node.
struct ProblemChoice {
  /// Seconds of compute (and of writing bound fills).
  double time = 0;
  /// The memory this choice asks for: the worst device's bytes of the
  /// activations it writes and of the arguments it places (bound arguments,
  /// or the argument itself for a source node).
  double memoryBytes = 0;
  /// Distribution ids of the results / of what each operand is read as.
  llvm::SmallVector<unsigned, 1> results;
  llvm::SmallVector<unsigned, 4> operands;
  /// Index into ProblemNode::splits (operation nodes).
  unsigned split = 0;
};

/// One node of the graph.
struct ProblemNode {
  enum class Kind { Operation, Source, Opaque };
  Kind kind = Kind::Operation;
  /// The operation (Operation, Opaque, or a fill Source).
  Operation *op = nullptr;
  /// The value a Source node stands for.
  Value source;
  std::optional<IndexSpace> space;
  /// Value id of each operand; -1 for operands the plan does not track.
  llvm::SmallVector<int, 4> operandValues;
  llvm::SmallVector<int, 1> resultValues;
  std::vector<SplitChoice> splits;
  std::vector<ProblemChoice> choices;
};

/// One tensor value.
struct ProblemValue {
  Value value;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t elementBytes = 4;
  /// Producing node; -1 for a bound source.
  int producer = -1;
  unsigned resultIndex = 0;
  /// (node, operand number) of every use by a node.
  llvm::SmallVector<std::pair<unsigned, unsigned>, 2> uses;
  /// An argument kept in a memory tier and streamed (ProblemOptions).
  bool isStreamed = false;
  /// A function argument / a fill / returned by the function.
  bool isArgument = false;
  bool isFill = false;
  bool isReturned = false;
  /// A view of another value (reshape, in-place update): no memory of its
  /// own; the viewed value lives as long as the view.
  int aliasOf = -1;
  /// Node of the last use, after views are taken into account.
  unsigned lastUse = 0;
  /// A returned value the caller passes back as an argument of the next
  /// call (result attribute `tra.carries`: a training step's updated
  /// weights and optimizer states): that argument's value id, else -1. Its
  /// producer pays for moving it to the argument's distribution.
  int carriedTo = -1;
  /// An argument some result is carried to: a source node even with one
  /// use, kept in the search's frontier until that result is made.
  bool isCarryTarget = false;
  /// An argument read only by the producer of the result carried to it
  /// (an optimizer state): that result's value id, else -1. It stays a bound
  /// source; each choice of the producer pays for the carry.
  int carriedFrom = -1;

  double getBytes() const;
};

/// Options of problem construction.
struct ProblemOptions {
  ChoiceOptions choices;
  /// Arguments (weights) whose tiles live in their nodes' memory tier and
  /// are moved to the devices before the operations that read them: no
  /// device memory between uses, a transfer every step.
  llvm::DenseSet<Value> streamed;
  /// Pipeline stages: operations listed here run on their block of devices
  /// only (the others anywhere).
  llvm::DenseMap<Operation *, DeviceBlock> blocks;
};

/// Memory per device of a plan.
struct MemoryUse {
  /// Bytes of arguments, held for the whole step.
  std::vector<double> resident;
  /// Peak bytes of everything else (with the buffers of streamed arguments:
  /// the one an operation reads and the next one, arriving meanwhile).
  std::vector<double> peakActivations;
  /// Bytes of streamed arguments each device receives per step.
  std::vector<double> streamed;
  double getPeak(unsigned device) const {
    return resident[device] + peakActivations[device];
  }
};

/// The streamed arguments' buffers over a program: per operation that
/// reads some (its position in program order), the bytes each device
/// receives. Shared by the planner's and the report's memory accounting.
class StreamedBuffers {
public:
  /// Reads must be added in ascending position.
  void addRead(unsigned position, std::vector<double> bytes) {
    reads.push_back({position, std::move(bytes)});
  }
  bool empty() const { return reads.empty(); }
  /// Per device, the bytes of every read.
  std::vector<double> getTotal(unsigned numDevices) const;
  /// Adds to `step` the buffers that exist at `position`: those of the next
  /// read at or after it, and when `position` is a read, also those of the
  /// one after (arriving meanwhile). Positions must be visited in
  /// ascending order.
  void addLive(unsigned position, llvm::MutableArrayRef<double> step);

private:
  std::vector<std::pair<unsigned, std::vector<double>>> reads;
  size_t next = 0;
};

class PlanProblem {
public:
  /// Builds the problem of `func` for the hardware of `model`. Fails on
  /// functions the optimizer cannot plan (calls, several blocks).
  static llvm::Expected<std::unique_ptr<PlanProblem>>
  build(func::FuncOp func, const CostModel &model,
        const ProblemOptions &options = ProblemOptions());

  const CostModel &getCostModel() const { return model; }
  llvm::ArrayRef<ProblemNode> getNodes() const { return nodes; }
  llvm::ArrayRef<ProblemValue> getValues() const { return values; }
  const TensorDist &getDist(unsigned id) const { return dists[id]; }
  unsigned getNumDists() const { return dists.size(); }

  /// Seconds to convert value `value` from distribution `from` to `to`
  /// (memoized per shape and pair of distributions).
  double getEdgeCost(unsigned value, unsigned from, unsigned to);

  /// The distribution a value has under `plan` (one choice per node).
  unsigned getValueDist(unsigned value, llvm::ArrayRef<unsigned> plan) const;
  /// The objective of `plan`.
  double evaluate(llvm::ArrayRef<unsigned> plan, double lambda);
  /// Memory per device of `plan` (see docs/CostModel.md).
  MemoryUse getMemoryUse(llvm::ArrayRef<unsigned> plan) const;
  /// A lower bound of the total memory any plan needs: every argument once
  /// plus the peak of the activations alive at once, each once.
  std::pair<double, double> getMinimumBytes() const;

  /// Interns a distribution.
  unsigned intern(const TensorDist &dist);

private:
  explicit PlanProblem(const CostModel &model) : model(model) {}

  struct DistHash {
    size_t operator()(const TensorDist &dist) const {
      return size_t(hash_value(dist));
    }
  };
  friend class ProblemBuilder;

  const CostModel &model;
  std::vector<ProblemNode> nodes;
  std::vector<ProblemValue> values;
  std::vector<TensorDist> dists;
  std::unordered_map<TensorDist, unsigned, DistHash> distIds;
  /// Shape keys of values, and the memo of edge costs by (shape, from, to).
  std::vector<unsigned> shapeKeys;
  llvm::DenseMap<uint64_t, double> edgeCosts;
  /// Moves between distributions that cut a shape into equal tiles, by
  /// (from, to): shared by every such shape (CostModel::getMoveScaling).
  llvm::DenseMap<uint64_t, CostModel::MoveScaling> moveScalings;
  /// The ways to complete a partial distribution, by (shape, from): each
  /// option's time and the distribution it leaves (an interned id); the
  /// same for every distribution the conversion then moves to.
  llvm::DenseMap<uint64_t, llvm::SmallVector<std::pair<double, unsigned>, 4>>
      reductions;
};

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_PLANPROBLEM_H
