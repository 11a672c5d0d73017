//===- Passes.td - tra conversion passes -------------------*- tablegen -*-===//
//
// Passes that convert between dialects: model-level tra to linalg, linalg
// contractions to BLAS calls, planned tra (tra_plan) to per-rank programs
// with tra_comm moves, and the mpi dialect to LLVM calls. The order they run
// in is set by the `tra-lower-to-llvm` pipeline (tra/Pipeline/Pipeline.h,
// docs/Lowering.md) and the distributed code generation (tra/Target).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_PASSES_TD
#define TRA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// TRAToLinalg
//===----------------------------------------------------------------------===//

def ConvertTRAToLinalgPass : Pass<"tra-convert-to-linalg"> {
  let summary = "Lower model-level tra ops to linalg, tensor, arith and cf";
  let description = [{
    Rewrites every model-level `tra` operation into upstream dialects on
    tensors, so that the rest of the pipeline (bufferization, loops, LLVM) is
    upstream MLIR:

    * `tra.einsum` becomes a `linalg.generic` whose iteration space is the
      spec's indices (output indices first, `parallel`; aggregated indices
      after, `reduction`), whose body applies the combiner and the
      aggregation, and whose init is the aggregation's identity
      (`linalg.fill`). A two-input `mul` einsum with a `sum` aggregation in
      which every index occurs in at least two of the three terms is a
      contraction (a matmul, possibly transposed or batched): it becomes a
      `linalg.contract`, which `tra-linalg-to-blas` can turn into a BLAS call.
    * `tra.map` becomes a `linalg.generic` with the body cloned (`tra.index`
      becomes `linalg.index`, `tra.yield` becomes `linalg.yield`).
    * `tra.slice`, `tra.concat` and `tra.update_slice` become
      `tensor.extract_slice` / `tensor.insert_slice`; the dynamic position of
      `tra.update_slice` is read with `tensor.extract` and checked at run time
      with `cf.assert`.
    * `tra.gather` becomes a `linalg.generic` reading the table with
      `tensor.extract`, with a run-time bounds check.
    * `tra.reshape` becomes `tensor.collapse_shape` and/or
      `tensor.expand_shape` (from `ReshapeOp::getGroups`).
    * `tra.fill` becomes `arith.constant` (small tensors) or `linalg.fill`;
      `tra.convert` becomes a `linalg.generic` of `arith` casts.

    Example:

    ```mlir
    %c = tra.einsum "ij,jk->ik" mul (%a, %b)
        : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
    ```

    becomes

    ```mlir
    %e = tensor.empty() : tensor<16x24xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>)
        -> tensor<16x24xf32>
    %c = linalg.contract
        indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%a, %b : tensor<16x32xf32>, tensor<32x24xf32>)
        outs(%init : tensor<16x24xf32>) -> tensor<16x24xf32>
    ```

    Operations the lowering cannot handle (dynamic shapes, a `tra.map` body
    with an operation outside `arith` and `math`) are reported with an error
    at the operation; the pass then fails without changing them.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"accumulateInF32", "accumulate-in-f32", "bool", /*default=*/"true",
           "Compute f16 and bf16 einsums in f32 and round the result once">,
    Option<"boundsChecks", "bounds-checks", "bool", /*default=*/"true",
           "Check dynamic positions and gather indices at run time">,
    Option<"namedContractions", "named-contractions", "bool",
           /*default=*/"true",
           "Lower mul/sum contractions to linalg.contract instead of "
           "linalg.generic">,
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToBLAS
//===----------------------------------------------------------------------===//

def ConvertLinalgToBLASPass
    : Pass<"tra-linalg-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's BLAS (OpenBLAS, or cuBLAS on GPUs) for contractions on buffers";
  let description = [{
    Replaces every f32 linalg contraction on memrefs (`linalg.contract`,
    `linalg.matmul`, `linalg.batch_matmul`, or a `linalg.generic` with a
    multiply-add body) whose operands can be viewed as (batched) row-major or
    transposed matrices by a call to the runtime function `tra_exec_sgemm`
    (declared in `runtime/exec/include/tra/Exec/ABI.h`), which calls
    `cblas_sgemm`. Groups of consecutive dimensions are flattened into one
    matrix dimension where the strides allow it; batch, m and n dimensions
    that do not flatten (attention's query heads that share one key/value
    head) become `scf.for` loops around the call, the set with the fewest
    calls chosen, as long as each matrix product does at least 4096
    multiply-adds; on the CPU that also holds for the products of a batch
    (the runtime makes one BLAS call per product: a batch of tiny products,
    such as the rotary embedding's 2 x 2 rotations, runs faster as the
    generated loops), on GPUs a batch is one strided cuBLAS call of any
    size. A column-major output is handled by computing the
    transposed product. A `linalg.fill` of zero that
    initializes the output right before the contraction is folded into
    `beta = 0`. Contractions whose layout BLAS cannot express, or that are
    smaller than `min-flops`, are left alone.

    On the CPU, a contraction of f16 or bf16 inputs into an f32 output (a
    projection by 16-bit weights) calls `tra_exec_gemm_mixed` instead, with
    `tra_cuda_gemm`'s signature (the element types first): it widens the
    weights in cache-sized panels and multiplies each with `cblas_sgemm`,
    so that they are read from memory once in their 16-bit form.

    Example:

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<16x24xf32>)
    linalg.contract indexing_maps = [#mk, #nk, #mn]
        ins(%a, %b : memref<16x32xf32>, memref<24x32xf32>)
        outs(%c : memref<16x24xf32>)
    ```

    becomes (pointers extracted from the memrefs)

    ```mlir
    func.call @tra_exec_sgemm(%batch1, %notrans, %trans, %m, %n, %k, %one,
        %pa, %lda, %sa, %pb, %ldb, %sb, %zero, %pc, %ldc, %sc)
        : (i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64,
           !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64) -> ()
    ```

    Run it after buffer deallocation has been inserted: the call reads the
    buffers through raw pointers that deallocation cannot see.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"0",
           "Leave contractions with fewer multiply-adds than this to the "
           "generated loops">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu: f32 contractions call tra_exec_sgemm (OpenBLAS), f16/bf16 "
           "into f32 tra_exec_gemm_mixed; cuda: "
           "f32, f16 and bf16 contractions on device memory (an f16 or "
           "bf16 product may accumulate into f32) call tra_cuda_gemm "
           "(cuBLAS, f32 accumulation), with the input and output element "
           "types (0 f32, 1 f16, 2 bf16) as the first two arguments">,
  ];
}

def EmitCPUMicrokernelsPass
    : Pass<"tra-emit-cpu-microkernels", "::mlir::ModuleOp"> {
  let summary = "Generate the CPU runtime's product kernels with the vector dialect";
  let description = [{
    The CPU runtime computes the products that `tra-linalg-to-blas` hands
    it (`tra_exec_sgemm`, `tra_exec_gemm_mixed`, `tra_exec_gemm_q8`) with its
    own kernels: a packed GEMM (the BLIS scheme: A and B copied into panels,
    then a register-blocked micro-kernel over each pair of slivers) for
    several rows, and dot products for one row (a decoding step's
    projections). In a module that calls one of those functions, this pass
    defines the kernels with the vector dialect, so that LLVM compiles them
    for the program's target CPU with the rest of the program; the runtime
    calls them (`runtime/exec/ABI.h`) and keeps its own intrinsics kernels
    only for programs without them.

    `tra_exec_microkernel_f32_8x32` computes an 8 x 32 block of C from a
    packed A sliver (`pa[p * 8 + r]`) and a packed B sliver
    (`pb[p * 32 + j]`) over `kc` steps: per step one `vector.outerproduct`
    of an 8-element and a 32-element `vector.load` into a
    `vector<8x32xf32>` accumulator, which the vector lowering turns into
    eight broadcasts and eight 32-lane fused multiply-adds (two 16-lane
    AVX-512 FMAs each where the target has AVX-512, narrower ones
    elsewhere). Its epilogue writes the first `rows` rows and `cols` columns
    of `alpha * sums + beta * C` (C at `c[r * ldc + j]`, read only when
    `beta` is not 0) with masked loads and stores.

    `tra_exec_dots_f32_{f32,f16,bf16}` compute `out[j] = sum_i a[i] *
    b[j * ldb + i]` for `j < rows`, `i < k`: per row, steps of 32 lanes
    (`vector.load` of b, `arith.extf` of a 16-bit b, `vector.fma` into a
    `vector<32xf32>`: two AVX-512 accumulators, which measured faster than
    four or eight), one masked step for the last `k % 32` elements, and a
    `vector.reduction` that may reassociate.

    `tra_exec_dots_f32_q8` computes the same for Q8_0 rows
    (`tra_exec_gemm_q8`'s layout: `blocks` blocks of 32 int8 quants per row
    at `q[j * ldq]`, one f16 scale per block at `scales[j * lds]`): per
    block, `arith.sitofp` of the quants, a product with the activations,
    and a `vector.fma` of it times the block's scale into one of two
    accumulators (even and odd blocks), with a `memref.prefetch` of the
    row's quants 512 bytes ahead (clamped to the buffer).

    ```mlir
    func.func @tra_exec_microkernel_f32_8x32(%kc: index, %pa: memref<?xf32>,
        %pb: memref<?xf32>, %c: memref<?xf32>, %ldc: index, %rows: index,
        %cols: index, %alpha: f32, %beta: f32)
        attributes {llvm.emit_c_interface}
    func.func @tra_exec_dots_f32_f16(%rows: index, %k: index,
        %a: memref<?xf32>, %b: memref<?xf16>, %ldb: index,
        %out: memref<?xf32>) attributes {llvm.emit_c_interface}
    func.func @tra_exec_dots_f32_q8(%rows: index, %blocks: index,
        %a: memref<?xf32>, %q: memref<?xi8>, %ldq: index,
        %scales: memref<?xf16>, %lds: index, %out: memref<?xf32>)
        attributes {llvm.emit_c_interface}
    ```

    A module that defines a kernel keeps its definition, a declaration of
    it gets the body; a symbol of that name of another kind or type is an
    error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// PlanToComm
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// MPIToLLVM
//===----------------------------------------------------------------------===//

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

#endif // TRA_CONVERSION_PASSES_TD
