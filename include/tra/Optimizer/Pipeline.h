//===- Pipeline.h - The planning pipeline -----------------------*- C++ -*-===//
//
// The sequence that turns a model-level tra module into a planned one, for
// every client (tra-compile, tra-llama, tra-opt, Python):
//
//   1. inline every call and remove the functions left unused (inliner,
//      symbol-dce);
//   2. plan every function with a body: assignPartitions, insertRepartitions,
//      verifyPlan (planFunction);
//   3. verify the module.
//
// planModule runs it from C++ and returns what the search found;
// buildPlanningPipeline adds the same steps to a pass manager, and
// registerPlanningPipeline makes them `tra-opt --tra-plan-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_PIPELINE_H
#define TRA_OPTIMIZER_PIPELINE_H

#include "tra/Optimizer/Planner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tra {
namespace hw {
class HardwareDescription;
} // namespace hw
} // namespace tra

namespace mlir {
class OpPassManager;

namespace tra {
namespace plan {

/// Options of planModule.
struct PlanOptions {
  /// Plan only this function (default: every function with a body).
  std::string entry;
  /// Options of the search.
  PlannerOptions planner;
};

/// Plans one function for the hardware of `model`: assignPartitions, then
/// insertRepartitions and verifyPlan. On failure returns the search's error
/// (the function cannot be planned, or does not fit), or an internal error
/// when the plan it made is inconsistent (after the diagnostics of
/// insertRepartitions / verifyPlan).
/// The most devices the planner plans for. Hardware descriptions may hold
/// up to 2^20; the planner's memory is linear in the devices, but its time
/// grows faster (a repartition between two grids of n tiles enumerates up
/// to n^2 tile pairs), so larger files are refused rather than planned for
/// hours.
inline constexpr unsigned kMaxPlannedDevices = 4096;

llvm::Expected<PlanSummary> planFunction(func::FuncOp func,
                                         const CostModel &model,
                                         const PlannerOptions &options);

/// Plans `module` for `hardware`: inlines every call and removes the
/// functions left unused, plans every function with a body (only
/// `options.entry` when set) with planFunction, and verifies the module. A
/// function planned already (a plan edited by hand) is kept as it is if it
/// is consistent and made for as many devices as `hardware` has. Returns the
/// summary of every function it planned, by name; on failure, an error
/// naming the function (the module may then be partly planned).
llvm::Expected<llvm::StringMap<PlanSummary>>
planModule(ModuleOp module, const ::tra::hw::HardwareDescription &hardware,
           const PlanOptions &options);

/// When a plan of `planned` (a planned copy of `module` for one device)
/// recomputes activations (`summaries`), `module` takes its body without
/// the plan attributes, so that the program compiled from `module`
/// recomputes them too; otherwise leaves both alone.
llvm::Error takeRecomputation(ModuleOp module, ModuleOp planned,
                              const llvm::StringMap<PlanSummary> &summaries);

/// Gives the arguments of `module`'s functions the memory tiers
/// (`tra_plan.tier`) of the same arguments in `planned` (a planned copy of
/// it), so that the program compiled from `module` fetches them from their
/// tiers as the plan does (tra-fetch-tiers).
void takeTiers(ModuleOp module, ModuleOp planned);

/// Plans a copy of `module` for the one device of `hardware`, which checks
/// that it fits the device's memory (a plan for one device keeps every
/// tensor whole, so `module` itself is compiled unpartitioned, with the
/// plan's memory tiers: takeTiers). When a plan recomputes activations to
/// fit (Recompute.h), `module` becomes the planned copy without its plan
/// attributes but the tiers, so that the program recomputes them too.
/// Returns the summaries, or planModule's error.
llvm::Expected<llvm::StringMap<PlanSummary>>
planForOneDevice(ModuleOp module,
                 const ::tra::hw::HardwareDescription &hardware,
                 const PlanOptions &options);

/// Options of the `tra-plan-pipeline` pass pipeline (those of
/// tra-decompose).
struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions> {
  PassOptions::Option<std::string> hw{
      *this, "hw",
      llvm::cl::desc("Hardware description: a JSON file (see "
                     "docs/HardwareDescription.md) or `local` to detect this "
                     "machine"),
      llvm::cl::init("local")};
  PassOptions::Option<unsigned> beam{
      *this, "beam",
      llvm::cl::desc("States the search keeps per step besides the best "
                     "state for every distribution of the values just "
                     "produced (0: keep all, exact)"),
      llvm::cl::init(32)};
  PassOptions::Option<unsigned> maxSplitIndices{
      *this, "max-split-indices",
      llvm::cl::desc("Largest number of indices one operation may be split "
                     "along"),
      llvm::cl::init(2)};
};

/// Adds the planning sequence to `pm` (on builtin.module): inline,
/// symbol-dce, then tra-decompose, which runs planFunction on every function
/// with a body.
void buildPlanningPipeline(OpPassManager &pm,
                           const PlanPipelineOptions &options);

/// Registers `tra-plan-pipeline` with the pass pipeline registry.
void registerPlanningPipeline();

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_PIPELINE_H
