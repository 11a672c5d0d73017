//===- Passes.td - Decomposition optimizer passes ----------*- tablegen -*-===//

#ifndef TRA_OPTIMIZER_PASSES_TD
#define TRA_OPTIMIZER_PASSES_TD

include "mlir/Pass/PassBase.td"

defvar PlanHardwareOption =
    Option<"hw", "hw", "std::string", /*default=*/"\"local\"",
           "Hardware description: a JSON file (see docs/HardwareDescription.md) "
           "or `local` to detect this machine">;
defvar PlanBeamOption =
    Option<"beam", "beam", "unsigned", /*default=*/"32",
           "States the search keeps per step besides the best state for "
           "every distribution of the values just produced (0: keep all, "
           "exact)">;
defvar PlanMaxSplitOption =
    Option<"maxSplitIndices", "max-split-indices", "unsigned",
           /*default=*/"2",
           "Largest number of indices one operation may be split along">;
defvar PlanRecomputeOption =
    Option<"recompute", "recompute", "bool", /*default=*/"true",
           "When keeping every activation does not fit (or fits only by "
           "cutting weights), also plan with elementwise activations "
           "recomputed where they are read again, and keep the faster plan "
           "(marked tra.recomputed)">;
defvar PlanStreamOption =
    Option<"stream", "stream", "bool", /*default=*/"true",
           "When the devices cannot hold the model and every node states a "
           "memory tier (host_memory or disk), keep the largest weights "
           "there, as few as make it fit, and stream them to the devices "
           "before the operations that read them (tra_plan.tier)">;
defvar PlanUnevenOption =
    Option<"uneven", "uneven", "bool", /*default=*/"true",
           "On devices of different speeds, also split an index unevenly, "
           "in proportion to the devices' peak flop/s or memory bandwidths "
           "(weights in tra_plan.split and tra_plan.dist)">;
defvar PlanPipelineOption =
    Option<"pipeline", "pipeline", "bool", /*default=*/"true",
           "On hardware of 2 to 8 nodes, also plan with the operations cut "
           "into pipeline stages on consecutive groups of nodes "
           "(first_device in tra_plan.split) and keep that plan when it is "
           "faster">;

def AssignPartitions : Pass<"tra-assign-partitions", "::mlir::ModuleOp"> {
  let summary = "choose a distribution for every tensor with the cost model";
  let description = [{
    For every function with a body, searches for the decomposition with the
    least estimated step time on the hardware `hw` that fits every device's
    memory (see docs/CostModel.md): for each operation, how many parts each
    of its indices is split into and on which devices the parts run. The
    decision is recorded as attributes: `tra_plan.split` (the cut of the
    operation), `tra_plan.operands` (the distribution it reads each tensor
    operand in) and `tra_plan.results` (the distribution it writes) on every
    operation, `tra_plan.dist` on every tensor argument. Where a producer's
    distribution differs from what a consumer reads, the IR is not yet
    consistent: `tra-insert-repartitions` inserts the moves.

    Functions must not contain calls (run `--inline` first). A model that
    does not fit in the memory of the hardware is an error that states the
    bytes needed and available. Before giving up (and whenever the plan fits
    only with a memory penalty), the planner also plans the function with
    elementwise activations that are read again much later (a training
    step's backward pass) computed again there instead of kept, and keeps
    the faster plan that fits; the copies carry `tra.recomputed`. When that
    still does not fit and every node of the hardware states a memory tier
    (`host_memory` or `disk`), the largest read-only weights, as few as make
    the plan fit, live in the tier instead (`tra_plan.tier` on the
    argument): each step moves them to the devices just before the
    operation that reads them, which the estimate charges on the tier's
    link, overlapped with the compute before.

    Before, on 2 devices:
    ```mlir
    func.func @mlp(%x: tensor<1024x64xf32>, %w: tensor<64x64xf32>) -> tensor<1024x64xf32> {
      %y = tra.einsum "bd,de->be" mul (%x, %w) : (tensor<1024x64xf32>, tensor<64x64xf32>) -> tensor<1024x64xf32>
      return %y : tensor<1024x64xf32>
    }
    ```
    After:
    ```mlir
    func.func @mlp(%x: tensor<1024x64xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>},
                   %w: tensor<64x64xf32> {tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1]]>})
        -> tensor<1024x64xf32> attributes {tra_plan.hardware = "gpu-2", tra_plan.num_devices = 2 : i64} {
      %y = tra.einsum "bd,de->be" mul (%x, %w) {
          tra_plan.operands = [#tra_plan.dist<[2, 1] on [0, 1]>, #tra_plan.dist<[1, 1] on [[0, 1]]>],
          tra_plan.results = [#tra_plan.dist<[2, 1] on [0, 1]>],
          tra_plan.split = #tra_plan.split<b = 2>} : ...
      return %y : tensor<1024x64xf32>
    }
    ```
  }];
  let options = [PlanHardwareOption, PlanBeamOption, PlanMaxSplitOption,
                 PlanRecomputeOption, PlanStreamOption, PlanPipelineOption,
                 PlanUnevenOption];
  let dependentDialects = ["::mlir::tra::plan::PlanDialect"];
}

def InsertRepartitions
    : Pass<"tra-insert-repartitions", "::mlir::ModuleOp"> {
  let summary = "insert the tile moves a plan needs between operations";
  let description = [{
    For every operand of a planned operation (one with `tra_plan.operands`)
    whose producer writes a different distribution (the producer's
    `tra_plan.results`, or the argument's `tra_plan.dist`), inserts the
    conversion: `tra_plan.all_reduce` or `tra_plan.reduce_scatter` for
    partial aggregates (whichever the cost model finds faster for the
    consumer), then `tra_plan.repartition` if the tiles or devices still
    differ. Equal conversions of one value are shared. `hw` must be the
    hardware the plan was made for.

    Before:
    ```mlir
    %p = tra.einsum "sf,df->sd" mul (%g, %w2) {tra_plan.results = [#tra_plan.dist<[1, 1] partial sum on [[0, 1]]>], ...}
    %o = tra.einsum "sd,sd->sd" add (%x, %p) {tra_plan.operands = [#tra_plan.dist<[1, 1] on [[0, 1]]>, #tra_plan.dist<[1, 1] on [[0, 1]]>], ...}
    ```
    After:
    ```mlir
    %p = tra.einsum "sf,df->sd" mul (%g, %w2) {...}
    %r = tra_plan.all_reduce %p from <[1, 1] partial sum on [[0, 1]]> to <[1, 1] on [[0, 1]]> : tensor<4x64xf32>
    %o = tra.einsum "sd,sd->sd" add (%x, %r) {...}
    ```
  }];
  let options = [PlanHardwareOption];
  let dependentDialects = ["::mlir::tra::plan::PlanDialect"];
}

def Decompose : Pass<"tra-decompose", "::mlir::ModuleOp"> {
  let summary = "plan the decomposition and insert the tile moves";
  let description = [{
    `tra-assign-partitions` followed by `tra-insert-repartitions` with the
    same hardware, then the checks of `tra-verify-plan`, on every function
    with a body: the model-level program becomes a planned program in which
    every tensor value has a distribution, every operation reads its
    operands in the distribution their producers write, and all movement of
    tiles between devices is explicit.

    The `tra-plan-pipeline` pass pipeline (`plan::buildPlanningPipeline`,
    the sequence tra-compile and tra-llama plan with) runs `inline` and
    `symbol-dce` first:

    ```
    tra-opt --tra-plan-pipeline="hw=hw/dgx-8.json" model.mlir
    tra-opt --inline --tra-decompose="hw=hw/dgx-8.json" model.mlir
    ```
  }];
  let options = [PlanHardwareOption, PlanBeamOption, PlanMaxSplitOption,
                 PlanRecomputeOption, PlanStreamOption, PlanPipelineOption,
                 PlanUnevenOption];
  let dependentDialects = ["::mlir::tra::plan::PlanDialect"];
}

def VerifyPlan : Pass<"tra-verify-plan", "::mlir::ModuleOp"> {
  let summary = "check that a plan is complete and consistent";
  let description = [{
    Fails with a diagnostic unless every planned function is consistent:
    every operand of an operation with `tra_plan.operands` is read in the
    distribution its producer writes (the producer's `tra_plan.results`, the
    argument's `tra_plan.dist` or a move's `to`), and no distribution names
    a device at or past the function's `tra_plan.num_devices`. Useful after
    editing a plan by hand, before lowering it. The IR is not changed.

    ```mlir
    // error: operand 0 is written as #tra_plan.dist<[1, 8] ...> but read as
    // #tra_plan.dist<[1, 1] ...>; run tra-insert-repartitions
    %y = tra.einsum "sd,ed->se" mul (%x, %w) {tra_plan.operands = [...]} ...
    ```
  }];
}

#endif // TRA_OPTIMIZER_PASSES_TD
