//===- PlanDialect.td - tra_plan dialect definition --------*- tablegen -*-===//

#ifndef TRA_DIALECT_PLAN_IR_PLANDIALECT_TD
#define TRA_DIALECT_PLAN_IR_PLANDIALECT_TD

include "mlir/IR/OpBase.td"

def Plan_Dialect : Dialect {
  let name = "tra_plan";
  let cppNamespace = "::mlir::tra::plan";
  let summary = "Decomposition plans: tile grids, placements and tile moves";
  let description = [{
    The `tra_plan` dialect records what the decomposition optimizer decided
    for a model-level `tra` program on one piece of hardware, in the terms of
    the tensor relational algebra:

    * `#tra_plan.dist` is the distribution of one tensor value: its tile grid
      (the relation's keys), the device of every tile (the implementation
      algebra's placement), and whether the tiles are partial aggregates that
      still have to be combined across devices.
    * `#tra_plan.split` says how one operation's index space was cut: how
      many parts each index is split into (outermost first, in the order
      the parts are laid out on devices) and how many replicas run it.
    * `tra_plan.repartition`, `tra_plan.all_reduce` and
      `tra_plan.reduce_scatter` are the explicit tile movements between a
      producer's distribution and a consumer's.

    Discardable attributes attach a plan to model-level operations:
    `tra_plan.split` (an operation's cut), `tra_plan.operands` and
    `tra_plan.results` (arrays of `#tra_plan.dist`, one per tensor operand and
    result: the distribution the operation reads and writes). Function
    arguments carry `tra_plan.dist`, the distribution the loader places them
    in, and `tra_plan.tier` (`"host"` or `"disk"`) when its tiles live in
    a node's memory tier and are streamed to the devices that read them;
    functions carry `tra_plan.hardware` (a name) and
    `tra_plan.num_devices`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = ["::mlir::tra::TRADialect"];
  let extraClassDeclaration = [{
    /// Names of the discardable attributes of a plan.
    static constexpr ::llvm::StringLiteral kSplitAttrName = "tra_plan.split";
    static constexpr ::llvm::StringLiteral kOperandsAttrName =
        "tra_plan.operands";
    static constexpr ::llvm::StringLiteral kResultsAttrName =
        "tra_plan.results";
    static constexpr ::llvm::StringLiteral kDistAttrName = "tra_plan.dist";
    /// On an argument whose tiles live in a node's memory tier ("host" or
    /// "disk") and move to the devices before the operations that read
    /// them, instead of staying on the devices.
    static constexpr ::llvm::StringLiteral kTierAttrName = "tra_plan.tier";
    static constexpr ::llvm::StringLiteral kHardwareAttrName =
        "tra_plan.hardware";
    static constexpr ::llvm::StringLiteral kNumDevicesAttrName =
        "tra_plan.num_devices";
  }];
}

class Plan_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plan_Dialect, mnemonic, traits>;

#endif // TRA_DIALECT_PLAN_IR_PLANDIALECT_TD
