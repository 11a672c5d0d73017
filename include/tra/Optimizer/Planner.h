//===- Planner.h - Planning functions and applying plans --------*- C++ -*-===//
//
// The optimizer's entry points on IR:
//
//   * assignPartitions searches the cheapest plan of a function that fits in
//     every device's memory and records it as tra_plan attributes;
//   * insertRepartitions makes a recorded plan explicit by inserting the
//     tra_plan moves between producers and consumers that disagree;
//   * analyzePlan / printExplain / printPlanDot read a planned function back
//     (see Report.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_PLANNER_H
#define TRA_OPTIMIZER_PLANNER_H

#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/PlanProblem.h"
#include "tra/Optimizer/Search.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace tra {
namespace plan {

struct PlannerOptions {
  /// See SearchOptions::beam.
  unsigned beam = 32;
  ChoiceOptions choices;
  /// When storing every activation does not fit (or fits only with a
  /// memory penalty), also plan with elementwise activations recomputed
  /// where the backward pass reads them (Recompute.h) and keep the faster.
  bool recompute = true;
  /// When the devices cannot hold the model and every node states a memory
  /// tier (host memory or disk), keep the largest weights there, as few as
  /// make the plan fit, and stream them to the devices before the
  /// operations that read them (tra_plan.tier on those arguments).
  bool stream = true;
  /// On hardware of 2 to kMaxPipelineNodes nodes, also plan with the
  /// operations cut into pipeline stages, consecutive runs of about equal
  /// compute (in proportion to each stage's peak flop/s) placed on
  /// consecutive groups of nodes, and keep such a plan when it is faster:
  /// one activation crosses the network per stage instead of every
  /// collective of a layer split across nodes.
  bool pipeline = true;
};

/// Most nodes the planner tries pipeline stages on (each stage count is a
/// search of its own).
inline constexpr unsigned kMaxPipelineNodes = 8;

/// One pipeline stage of a plan: devices [firstDevice, firstDevice +
/// numDevices) run the operations from position firstOp (in program order,
/// counting every operation of the body) to lastOp.
struct PipelineStage {
  unsigned firstDevice = 0, numDevices = 0;
  unsigned firstOp = 0, lastOp = 0;
  /// The stage's devices for messages: "0,1", "4-7".
  std::string getDevicesText() const;
};

/// What planning one function found.
struct PlanSummary {
  /// The objective of the plan without memory penalty: estimated seconds.
  double estimatedTime = 0;
  /// Seconds charged per byte of arguments to make the plan fit (0 when the
  /// fastest plan fits).
  double lambda = 0;
  /// Number of searches run (one per lambda tried).
  unsigned searches = 0;
  size_t numNodes = 0;
  size_t numChoices = 0;
  size_t maxStates = 0;
  bool pruned = false;
  MemoryUse memory;
  /// Operations the plan computes twice rather than keep their results
  /// (Recompute.h); 0 when it stores every activation.
  unsigned recomputed = 0;
  /// Arguments kept in a memory tier and streamed to the devices; 0 when
  /// the devices hold every weight.
  unsigned streamed = 0;
  /// The pipeline stages of the plan; empty when every operation may use
  /// every device.
  std::vector<PipelineStage> stages;
  /// Wall-clock seconds spent planning.
  double planningSeconds = 0;
};

/// Finds the plan of `func` and records it: tra_plan.split,
/// tra_plan.operands and tra_plan.results on operations, tra_plan.dist on
/// arguments, tra_plan.hardware and tra_plan.num_devices on the function.
/// Fails, leaving `func` unchanged, when the function cannot be planned or
/// does not fit (the message states the bytes needed and available).
llvm::Expected<PlanSummary> assignPartitions(func::FuncOp func,
                                             const CostModel &model,
                                             const PlannerOptions &options);

/// Inserts tra_plan.all_reduce / reduce_scatter / repartition wherever an
/// operand's producer writes another distribution than the operand is read
/// in. Emits a diagnostic and fails on annotations that do not match the
/// hardware (devices out of range).
LogicalResult insertRepartitions(func::FuncOp func, const CostModel &model);

/// Checks that a planned function is consistent: every operand of an
/// operation with tra_plan.operands is read in the distribution its producer
/// writes, and no distribution names a device at or past the function's
/// tra_plan.num_devices. Emits an error at the first violation.
LogicalResult verifyPlan(func::FuncOp func);

/// The distribution `value` is written in by a planned function: its
/// argument's tra_plan.dist, its producer's tra_plan.results entry or a move
/// op's `to`; null when it has none.
DistAttr getWrittenDist(Value value);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_PLANNER_H
