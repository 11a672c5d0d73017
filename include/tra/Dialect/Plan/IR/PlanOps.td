//===- PlanOps.td - tra_plan operations --------------------*- tablegen -*-===//

#ifndef TRA_DIALECT_PLAN_IR_PLANOPS_TD
#define TRA_DIALECT_PLAN_IR_PLANOPS_TD

include "mlir/Interfaces/SideEffectInterfaces.td"
include "tra/Dialect/Plan/IR/PlanDialect.td"
include "tra/Dialect/Plan/IR/PlanAttrs.td"

class Plan_MoveOp<string mnemonic, list<Trait> traits = []>
    : Plan_Op<mnemonic, !listconcat(traits, [Pure,
        AllTypesMatch<["input", "result"]>])> {
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
}

def Plan_RepartitionOp : Plan_MoveOp<"repartition"> {
  let summary = "re-tile and move a tensor from one distribution to another";
  let description = [{
    The same tensor value, moved from distribution `from` (its producer's) to
    distribution `to` (what its consumer reads): a re-keying of the tile
    relation plus the point-to-point and broadcast moves that take every
    part of a new tile from a device holding it to the new tile's devices.
    Neither distribution may be partial (use `tra_plan.all_reduce` or
    `tra_plan.reduce_scatter` first).

    ```mlir
    // Gather 8 column tiles onto every device.
    %r = tra_plan.repartition %x
        from <[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>
        to <[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]>
        : tensor<16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Plan_DistAttr:$from,
                       Plan_DistAttr:$to);
  let assemblyFormat = [{
    $input `from` $from `to` $to attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

def Plan_AllReduceOp : Plan_MoveOp<"all_reduce"> {
  let summary = "combine partial tiles; every holder gets the whole tile";
  let description = [{
    Each tile of `from` is held as partial aggregates on several devices
    (in one group, or in several independent groups); combining each group
    with the aggregation of `from` leaves the complete tile on every one of
    those devices. `to` is `from` without `partial`: same grid and devices,
    the copies now replicas.

    ```mlir
    %r = tra_plan.all_reduce %p
        from <[1, 1] partial sum on [[0, 1, 2, 3]]>
        to <[1, 1] on [[0, 1, 2, 3]]>
        : tensor<16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Plan_DistAttr:$from,
                       Plan_DistAttr:$to);
  let assemblyFormat = [{
    $input `from` $from `to` $to attr-dict `:` type($input)
  }];
}

def Plan_ReduceScatterOp : Plan_MoveOp<"reduce_scatter"> {
  let summary = "combine partial tiles; each holder keeps one slice";
  let description = [{
    Each tile of `from` is held as `q` partial aggregates on `q` devices (in
    each of its groups); the reduce-scatter combines them so that the `j`-th
    device of each group (in the order `from` lists them) holds the `j`-th
    of `q` slices of the complete tile along dimension `dim`. `to` has
    `grid[dim]` multiplied by `q`, one copy per tile and group, and its
    slices must be exactly the balanced tiles of that grid.

    ```mlir
    %r = tra_plan.reduce_scatter %p dim 0
        from <[1, 1] partial sum on [[0, 1, 2, 3]]>
        to <[4, 1] on [0, 1, 2, 3]>
        : tensor<16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       Plan_DistAttr:$from, Plan_DistAttr:$to);
  let assemblyFormat = [{
    $input `dim` $dim `from` $from `to` $to attr-dict `:` type($input)
  }];
}

#endif // TRA_DIALECT_PLAN_IR_PLANOPS_TD
