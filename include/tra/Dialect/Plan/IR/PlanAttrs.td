//===- PlanAttrs.td - tra_plan attributes ------------------*- tablegen -*-===//

#ifndef TRA_DIALECT_PLAN_IR_PLANATTRS_TD
#define TRA_DIALECT_PLAN_IR_PLANATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "tra/Dialect/Plan/IR/PlanDialect.td"

def Plan_DistAttr : AttrDef<Plan_Dialect, "Dist"> {
  let mnemonic = "dist";
  let summary = "distribution of a tensor: tile grid, tile devices, partiality";
  let description = [{
    A tensor of rank `r` is cut into a grid of `grid[0] x ... x grid[r-1]`
    tiles. Dimension `d` of extent `n` is cut into `grid[d]` balanced parts in
    multiples of `unit[d]` elements (default 1): with `u = ceil(n / unit)`
    units, the first `u mod grid` tiles get one unit more than the others.
    52 heads of 128 elements on 8 devices (`[8] unit [128]` of 6656) are
    tiles of 7, 7, 7, 7, 6, 6, 6, 6 heads.

    `weights` cuts dimensions unevenly, for devices of different speeds:
    one positive weight per tile coordinate of every dimension (`grid[0]`
    entries, then `grid[1]`, ...); a dimension whose weights differ gives
    tile `i` the units from `floor(u * W(i) / W)` to
    `floor(u * W(i + 1) / W)`, `W(i)` the sum of its first `i` weights and
    `W` of all. `[2, 1] weights [2, 1, 1]` gives the first row tile of a
    300-row tensor 200 rows and the second 100.

    Tiles are numbered row-major by grid coordinates. `on` lists the devices
    of each tile: a flat list when each tile has one copy, or one inner list
    per tile when every tile has the same number of copies (replicas).

    `partial KIND` marks the copies of each tile as partial aggregates of one
    tile (a sum, max, min or product still to be combined across devices):
    the result of an einsum whose aggregated index was split. With
    `groups N`, the copies of a tile form N independent groups (listed one
    after the other) that each combine into the whole tile: the result of
    an einsum split along an aggregated index and replicated N times.

    ```mlir
    // A 2048x8192 activation split by columns over 8 devices, in whole heads.
    #tra_plan.dist<[1, 8] unit [1, 128] on [0, 1, 2, 3, 4, 5, 6, 7]>
    // Replicated on devices 0..3.
    #tra_plan.dist<[1, 1] on [[0, 1, 2, 3]]>
    // Partial sums of two row tiles, each spread over two devices.
    #tra_plan.dist<[2, 1] partial sum on [[0, 1], [2, 3]]>
    // Two replicas of a 4-way split aggregation: {0..3} and {4..7} each sum.
    #tra_plan.dist<[1, 1] partial sum groups 2 on [[0, 1, 2, 3, 4, 5, 6, 7]]>
    // Columns cut 3:1 between a fast device 0 and a slow device 1.
    #tra_plan.dist<[1, 2] weights [1, 3, 1] on [0, 1]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "tiles per dimension">:$grid,
    ArrayRefParameter<"int64_t", "split granularity per dimension">:$unit,
    "unsigned":$copies,
    "std::optional<::mlir::tra::AggregationKind>":$partial,
    "unsigned":$groups,
    ArrayRefParameter<"int64_t", "devices, tile-major">:$devices,
    OptionalArrayRefParameter<"int64_t",
                              "tile weights per dimension (uneven tiles)">:$weights
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getGrid().size(); }
    /// Number of tiles: the product of the grid.
    int64_t getNumTiles() const;
    /// Devices holding tile `tile` (row-major number).
    ::llvm::ArrayRef<int64_t> getTileDevices(int64_t tile) const;
    /// Devices of partial group `group` of tile `tile`.
    ::llvm::ArrayRef<int64_t> getGroupDevices(int64_t tile,
                                              unsigned group) const;
    /// Checks that this distribution fits a tensor of type `type`.
    ::mlir::LogicalResult
    verifyForType(::mlir::ShapedType type,
                  ::llvm::function_ref<::mlir::InFlightDiagnostic()>
                      emitError) const;
  }];
}

def Plan_SplitAttr : AttrDef<Plan_Dialect, "Split"> {
  let mnemonic = "split";
  let summary = "how an operation's index space is cut over devices";
  let description = [{
    Lists the axes of the device grid an operation runs on, outermost
    first: its split indices, each with its number of parts, and (anywhere
    in the list, default outermost) the number of replicas that each compute
    their part of the operation redundantly. Devices are numbered by
    row-major position in that grid: the last axis varies fastest, so its
    parts sit on neighbouring devices (within one node). Indices are named by
    letters: an einsum's or map's index letters, and `a`, `b`, ... for the
    dimensions of other operations.

    ```mlir
    // Batch split in two, then the hidden index in four: 8 devices.
    #tra_plan.split<b = 2, f = 4>
    // Nothing split; four replicas compute the whole operation.
    #tra_plan.split<replicas = 4>
    // Rows split in two; each half computed on four neighbouring devices.
    #tra_plan.split<s = 2, replicas = 4>
    // A pipeline stage: the hidden index in four on devices 4 .. 7 (the
    // second node of a two-node machine).
    #tra_plan.split<f = 4, first_device = 4>
    ```

    The grid's devices are `first_device` (default 0) onwards: an
    operation may run on a later block of devices than the first, so that
    consecutive layers sit on different nodes (pipeline stages).

    `weights` (one split index, no replicas) cuts the index unevenly, part
    `i` getting about `weights[i] / sum(weights)` of it (as the `weights`
    of `#tra_plan.dist`): on devices of different speeds each gets work in
    proportion to its speed.

    ```mlir
    // The hidden index cut 3:1 between a fast device 0 and a slow device 1.
    #tra_plan.split<f = 2, weights = [3, 1]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"split index names, outermost first">:$indices,
    ArrayRefParameter<"int64_t", "parts per split index">:$counts,
    "int64_t":$replicas,
    "unsigned":$replicaPosition,
    DefaultValuedParameter<"unsigned", "0">:$firstDevice,
    OptionalArrayRefParameter<"int64_t",
                              "weights of the parts (uneven split)">:$weights
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Devices the operation runs on: replicas times the product of counts.
    int64_t getNumDevices() const;
  }];
}

#endif // TRA_DIALECT_PLAN_IR_PLANATTRS_TD
