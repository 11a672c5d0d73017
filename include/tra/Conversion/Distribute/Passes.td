//===- Passes.td - Distributed code generation passes -------*- tablegen -*-===//

#ifndef TRA_CONVERSION_DISTRIBUTE_PASSES_TD
#define TRA_CONVERSION_DISTRIBUTE_PASSES_TD

include "mlir/Pass/PassBase.td"

def Localize : Pass<"tra-localize", "::mlir::ModuleOp"> {
  let summary = "split a planned function into one program per MPI rank";
  let description = [{
    For every planned function `@f` (one with `tra_plan.num_devices = N`,
    after `tra-decompose`), writes `N` functions `@f.rank0` ...
    `@f.rank<N-1>`: the program device `r` runs as MPI rank `r`, and erases
    `@f`. Every tensor value becomes the one tile of it that rank `r` holds
    (its `#tra_plan.dist` gives the tile), or disappears on ranks that hold
    none:

    * model-level ops run on local tiles with local shapes; `tra.index` in a
      `tra.map` body is shifted by the tile's offset; a `tra.gather` whose
      table rows are split gathers the rows the rank holds and zeros
      elsewhere (a partial sum, as the plan says);
    * `tra_plan.repartition` becomes the local copies and the messages of
      the tile regions that change device, enumerated in one global order
      shared by all ranks. By default the messages are non-blocking and
      overlap computation: each `tra_comm.isend` is posted right after the
      sent value is computed, the matching `tra_comm.irecv` at the same
      point of the receiver's program, the `tra_comm.wait` of a receive
      right before the first use of the repartitioned tile, and the waits
      of sends before the return. With `blocking-moves`, each rank emits
      blocking `tra_comm.send` / `tra_comm.recv` at the repartition, in the
      global order. Either way the moves cannot deadlock (see
      Localize.cpp);
      `tra_plan.all_reduce` / `tra_plan.reduce_scatter` become
      `tra_comm.all_reduce` / `tra_comm.reduce_scatter` over each group;
    * arguments are the tiles the rank holds, results the tiles of the
      function's results it holds (partial results are all-reduced first).
      Each carries `tra.name` (the global name), `tra_comm.global_shape`
      and `tra_comm.offsets` (where the tile sits in the global tensor);
      results also carry `tra_comm.owner` (whether this rank is the one that
      reports the tile: the lowest rank holding it).

    The module gets the DLTI entry `"MPI:Implementation" = "OpenMPI"` that
    the mpi dialect's lowering reads.

    ```mlir
    // Before (2 devices): rows of x split, w replicated.
    func.func @mm(%x: tensor<4x8xf32> {tra_plan.dist = #tra_plan.dist<[2, 1] on [0, 1]>}, ...)
    // After, rank 1:
    func.func @mm.rank1(%x: tensor<2x8xf32> {tra.name = "x", tra_comm.global_shape = array<i64: 4, 8>, tra_comm.offsets = array<i64: 2, 0>}, ...)
        attributes {tra_comm.num_ranks = 2 : i64, tra_comm.rank = 1 : i64}
    ```
  }];
  let options = [
    Option<"blockingMoves", "blocking-moves", "bool", /*default=*/"false",
           "emit blocking tra_comm.send/recv at each repartition instead of "
           "non-blocking moves that overlap computation (for comparison and "
           "debugging)">
  ];
  let dependentDialects = [
    "::mlir::tra::comm::CommDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::DLTIDialect"
  ];
}

def ConvertMPIToLLVM : Pass<"tra-convert-mpi-to-llvm", "::mlir::ModuleOp"> {
  let summary = "lower the upstream mpi dialect to calls of the MPI library";
  let description = [{
    Applies the upstream MPI-to-LLVM patterns (`mpi.comm_world`,
    `mpi.send`, `mpi.recv`, `mpi.allreduce`, ...), which choose the MPI ABI
    from the module's DLTI entry `"MPI:Implementation"` (Open MPI for tra).
    Memref operands are bridged with unrealized casts that the memref
    lowering later resolves.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TRA_CONVERSION_DISTRIBUTE_PASSES_TD
