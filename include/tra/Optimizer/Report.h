//===- Report.h - Reading plans back: EXPLAIN and Graphviz ------*- C++ -*-===//
//
// analyzePlan estimates a planned function from its IR alone (the
// tra_plan attributes and move operations) with the cost model: the time of
// every operation and move, the bytes every move sends over each class of
// link, and the memory every device needs. printExplain prints that as a
// database prints EXPLAIN; printPlanDot draws it for Graphviz with every
// tile coloured by its device.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_REPORT_H
#define TRA_OPTIMIZER_REPORT_H

#include "tra/Optimizer/CostModel.h"
#include "tra/Optimizer/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir {
namespace tra {
namespace plan {

/// One line of the plan: an argument, an operation or a move.
struct ReportRow {
  /// "%12", or the argument's tra.name.
  std::string name;
  /// "tra.einsum \"sd,fd->sf\"", "tra_plan.all_reduce sum", "argument".
  std::string operation;
  std::string type;
  /// The cut of the operation ("f=8", "s=2 e=4 x3") or the move's kind.
  std::string split;
  /// The distribution written.
  std::string dist;
  std::string devices;
  /// Estimated seconds (compute for operations, transfer for moves).
  double time = 0;
  bool isMove = false;
  TrafficBytes bytes;
  /// Seconds to bring the streamed arguments it reads from their tier onto
  /// the devices (the busiest device); 0 when it reads none.
  double streamTime = 0;
  /// Their bytes on the busiest device.
  double streamBytes = 0;
};

/// Estimates of a planned function.
struct PlanReport {
  std::vector<ReportRow> rows;
  double computeTime = 0;
  double communicationTime = 0;
  TrafficBytes bytes;
  unsigned allReduces = 0;
  unsigned reduceScatters = 0;
  unsigned repartitions = 0;
  /// Results moved to their `tra.carries` argument's distribution for the
  /// next call.
  unsigned carries = 0;
  /// Operations computed again instead of keeping their results
  /// (Recompute.h), and their estimated seconds (part of computeTime).
  unsigned recomputed = 0;
  double recomputeTime = 0;
  /// Operations without a plan (run whole on device 0).
  unsigned unplanned = 0;
  /// Arguments kept in a memory tier (tra_plan.tier) and streamed to the
  /// devices each step: how many, their bytes by tier, the seconds the
  /// busiest device's tier link is busy, and the part of that the compute
  /// before each reading operation does not hide (a transfer starts when
  /// the previous streamed operation starts: two buffers).
  unsigned streamed = 0;
  double hostBytes = 0, diskBytes = 0;
  double streamTime = 0;
  double streamStall = 0;
  MemoryUse memory;

  double getStepTime() const {
    return computeTime + communicationTime + streamStall;
  }
};

/// Estimates `func` (after insertRepartitions) on the hardware of `model`.
PlanReport analyzePlan(func::FuncOp func, const CostModel &model);

/// Prints the EXPLAIN report of `func`; `summary`, when given, adds the
/// search statistics.
void printExplain(func::FuncOp func, const CostModel &model,
                  llvm::raw_ostream &os, const PlanSummary *summary = nullptr);

/// Writes a Graphviz digraph of the planned functions of `module`: one node
/// per argument, operation and move, with the tiles of its result coloured
/// by device.
void printPlanDot(ModuleOp module, const CostModel &model,
                  llvm::raw_ostream &os);

/// "1.50 GiB", "512 B", "3.2 KiB".
std::string formatBytes(double bytes);
/// "1.234 ms", "12.0 us", "2.50 s".
std::string formatSeconds(double seconds);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_REPORT_H
