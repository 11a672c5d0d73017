//===- Passes.td - tra transforms ---------------------------*- tablegen -*-===//
//
// Passes that transform IR within its dialects on the way to LLVM: entry
// checks, profiling instrumentation, fusion of elementwise ops, buffer
// deallocation and accumulator promotion, loop parallelization and the
// expansion of arith and math ops. The `tra-lower-to-llvm` pipeline
// (tra/Pipeline/Pipeline.h, docs/Lowering.md) sets their order.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TRANSFORMS_PASSES_TD
#define TRA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Entry functions
//===----------------------------------------------------------------------===//

def PrepareEntryPass : Pass<"tra-prepare-entry", "::mlir::ModuleOp"> {
  let summary = "Mark the entry function for the C interface and check it";
  let description = [{
    Chooses the entry function (the `entry` option; otherwise `@main`, or
    the only public function with a body; with neither, every public
    function with a body), checks that its arguments and results are tensors
    of static shape and of an element type the executable runtime reads and
    writes (f32, f16, bf16, i64, i32, i1), marks it `llvm.emit_c_interface`,
    marks its arguments `bufferization.writable = false` so that
    bufferization never writes into caller buffers (which the runtime may
    map read-only from files), and records its number of arguments as
    `tra.entry_inputs` (after `buffer-results-to-out-params` the results
    are arguments too; `tra-alias-entry-outputs` tells them apart).

    ```mlir
    func.func @main(%x: tensor<4xf32> {tra.name = "x"}) -> tensor<4xf32>
    ```

    becomes

    ```mlir
    func.func @main(%x: tensor<4xf32> {bufferization.writable = false,
                                       tra.name = "x"}) -> tensor<4xf32>
        attributes {llvm.emit_c_interface, tra.entry_inputs = 1 : i64}
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Name of the entry function">,
  ];
}

def AliasEntryOutputsPass
    : Pass<"tra-alias-entry-outputs", "::mlir::func::FuncOp"> {
  let summary = "Let an entry output share its buffer with the input it starts as a copy of";
  let description = [{
    After bufferization and `buffer-results-to-out-params`, an entry
    function that returns an updated copy of an argument (a KV cache that
    `tra.update_slice` writes a few rows into) first copies the whole input
    buffer into the output buffer. A caller that keeps the tensor from one
    call to the next (the output becomes the next call's input) could pass
    one buffer for both and skip that copy.

    On an entry function (`tra.entry_inputs = N` from `tra-prepare-entry`:
    arguments 0 .. N-1 are its inputs, the others its outputs), this pass
    finds every `memref.copy %in, %out` of an input into an output such
    that the copy is an operation of the entry block, it is the only use of
    `%in`, every other use of `%out` (or the entry-block operation holding
    it) comes after the copy, both have the same type with the identity
    layout, and neither `%in` nor `%out` is part of another such pair. It
    guards each such copy by a comparison of the two buffers' aligned
    pointers, and lists the pairs in `tra.output_aliases`: for each output,
    the input whose buffer it may be, or -1.

    When a caller passes one buffer as both, the copy would copy the buffer
    onto itself: skipping it leaves the same contents, and since nothing
    else reads `%in` and nothing used `%out` before, the program computes
    the same results. With distinct buffers nothing changes. Any other
    overlap of buffers stays undefined.

    ```mlir
    func.func @main(%x: memref<2x4xf32>, %cache: memref<16x4xf32>,
                    %out: memref<16x4xf32>)
        attributes {llvm.emit_c_interface, tra.entry_inputs = 2 : i64} {
      memref.copy %cache, %out : memref<16x4xf32> to memref<16x4xf32>
      %rows = memref.subview %out[0, 0] [2, 4] [1, 1] : ...
      memref.copy %x, %rows : ...
      return
    }
    ```

    becomes

    ```mlir
    func.func @main(%x: memref<2x4xf32>, %cache: memref<16x4xf32>,
                    %out: memref<16x4xf32>)
        attributes {llvm.emit_c_interface, tra.entry_inputs = 2 : i64,
                    tra.output_aliases = array<i64: 1>} {
      %p = memref.extract_aligned_pointer_as_index %cache : ... -> index
      %q = memref.extract_aligned_pointer_as_index %out : ... -> index
      %distinct = arith.cmpi ne, %p, %q : index
      scf.if %distinct {
        memref.copy %cache, %out : memref<16x4xf32> to memref<16x4xf32>
      }
      %rows = memref.subview %out[0, 0] [2, 4] [1, 1] : ...
      memref.copy %x, %rows : ...
      return
    }
    ```

    Functions without `tra.entry_inputs`, or that still return values, are
    left alone; so is a function that already has `tra.output_aliases`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// Profiling
//===----------------------------------------------------------------------===//

def InstrumentProfilePass
    : Pass<"tra-instrument-profile", "::mlir::ModuleOp"> {
  let summary = "Time every model-level op with runtime calls";
  let description = [{
    Numbers every model-level `tra` operation of the module (0, 1, ...),
    brackets it with calls to the runtime's `tra_exec_profile_begin` and
    `tra_exec_profile_end` (runtime/exec ABI.h), and records what each number
    is ("tra.einsum "sd,ed->se" at model.mlir:12:8") in the module
    attribute `tra.profile_ops`, which becomes part of the program
    descriptor. An executable run with `--profile` then prints the time spent
    in each op. Ops that fusion later merges into another are accounted to
    the op they were fused into.

    ```mlir
    %c = tra.einsum "ij,jk->ik" mul (%a, %b) : ...
    ```

    becomes

    ```mlir
    %id = arith.constant 0 : i64
    func.call @tra_exec_profile_begin(%id) : (i64) -> ()
    %c = tra.einsum "ij,jk->ik" mul (%a, %b) : ...
    func.call @tra_exec_profile_end(%id) : (i64) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// Memory tiers
//===----------------------------------------------------------------------===//

def FetchTiersPass : Pass<"tra-fetch-tiers", "::mlir::func::FuncOp"> {
  let summary = "Fetch the arguments a plan keeps in a memory tier right "
                "before each operation that reads them";
  let description = [{
    The planner may keep read-only weights in a memory tier of the node
    (host memory, or the disk holding the checkpoint) when the devices
    cannot hold them: such an argument carries `tra_plan.tier` (`"host"` or
    `"disk"`), kept on the one-device program and on each rank's function
    by `tra-localize`. This pass makes the program move those tiles at run
    time as the plan costed them: every operation that reads such an
    argument reads a `tra_comm.fetch` of it, inserted right before the
    operation, instead. The fetched tile is a device buffer of its own,
    freed after that operation, so between uses the weight takes no device
    memory; the bytes moved per step are those the plan's EXPLAIN reports
    (`streamed in` on each reading operation). Where the reader is a
    `tensor.extract_slice` of the argument (in a rank's function, the part
    of a tile a move sends or keeps), the slice is fetched, not the whole
    tile.

    ```mlir
    func.func @f(%x: tensor<4x8xf32>,
                 %w: tensor<8x8xf32> {tra_plan.tier = "host"}) -> ... {
      %y = tra.einsum "bd,de->be" mul %x, %w ...
    ```

    becomes

    ```mlir
      %0 = tra_comm.fetch %w from "host" : tensor<8x8xf32>
      %y = tra.einsum "bd,de->be" mul %x, %0 ...
    ```

    With `overlap` (the default), each fetch of 1 to 4 dimensions is then
    made non-blocking, so that the transfer overlaps compute as the plan's
    estimate assumes: the `tra_comm.wait` stays right before the reader and
    the `tra_comm.ifetch` starts right after the waits of the previous
    reader of fetched tiles in the same block (at the block's start for the
    first, and never before the slice it copies). So while one reader runs,
    the tiles of the next are arriving: two readers' tiles in device memory
    at a time, the planner's model.

    ```mlir
      %b0, %r0 = tra_comm.ifetch %w0 from "host" : tensor<8x8xf32>
      ...
      %f0 = tra_comm.wait %r0, %b0 : tensor<8x8xf32> -> tensor<8x8xf32>
      %b1, %r1 = tra_comm.ifetch %w1 from "host" : tensor<8x8xf32>
      %h0 = tra.einsum "bd,de->be" mul %x, %f0 ...
      %f1 = tra_comm.wait %r1, %b1 : tensor<8x8xf32> -> tensor<8x8xf32>
      %h1 = tra.einsum "bd,de->be" mul %h0, %f1 ...
    ```

    Arguments without the attribute, and functions without such arguments,
    are left as they are.
  }];
  let options = [
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "start each fetch while the previous reader of fetched tiles runs "
           "(tra_comm.ifetch); false: fetch right before the reader, "
           "blocking">
  ];
  let dependentDialects = ["::mlir::tra::comm::CommDialect",
                           "::mlir::tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FuseElementwisePass : Pass<"tra-fuse-elementwise"> {
  let summary = "Fuse chains of elementwise linalg.generic ops into one";
  let description = [{
    Fuses a producer `linalg.generic` into its consumer `linalg.generic`
    (upstream elementwise fusion) when that never recomputes work and never
    hides a contraction from BLAS: the producer must be all-parallel, have
    its consumer as its only user, and be read by the consumer through a
    permutation (each producer element exactly once). Unlike
    `linalg-fuse-elementwise-ops` it does not move reshapes across
    operations, so `linalg.contract` ops keep their matrix shapes.

    ```mlir
    %e = linalg.generic {...} ins(%x, %m : ...) outs(...) {  // exp(x - m)
    ...
    %z = linalg.generic {..., "reduction"} ins(%e : ...) outs(%zero : ...)
    ```

    becomes one reduction generic computing `sum(exp(x - m))`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def EarlyDeallocPass : Pass<"tra-early-dealloc"> {
  let summary = "Free each buffer right after its last use instead of at the end of its block";
  let description = [{
    The ownership-based buffer deallocation pipeline frees a buffer at the
    end of the block that allocates it. In a straight-line model function
    every intermediate then stays allocated until the function returns:
    the peak memory is the sum of all intermediates, and no buffer can be
    reused within one call (the runtime keeps freed blocks for reuse,
    runtime/exec/Alloc.cpp).

    This pass moves a `memref.dealloc %a` of a `memref.alloc` in the same
    block to right after the last operation of that block that uses `%a`
    or any buffer aliasing it (views, casts, subviews: every value
    `BufferViewFlowAnalysis` reports as dependent). Buffers with an alias
    that leaves the block (returned, yielded, stored, passed to a call, or
    used by an op with unknown memory effects on it) are left where the
    deallocation pipeline put them, except one call: a buffer whose address
    only goes to the runtime's start of a non-blocking fetch
    (`tra_exec_fetch_start` / `tra_cuda_fetch_start`, a bufferized
    `tra_comm.ifetch`) is written until the wait of that fetch's handle, and
    is freed after its last use from that wait on. Run it after the deallocation pipeline
    and before anything turns buffers into raw pointers (`tra-linalg-to-blas`
    passes pointers to its runtime calls).

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    ... unrelated work ...
    memref.dealloc %a : memref<4xf32>
    ```

    becomes

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    ... unrelated work ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PromoteAccumulatorsPass : Pass<"tra-promote-accumulators"> {
  let summary = "Keep the output element of a reduction loop in a register";
  let description = [{
    `convert-linalg-to-loops` lowers a reduction to a loop that loads the
    output element, combines it with the next input and stores it back on
    every iteration. LLVM cannot move that load and store out of the loop
    when it cannot prove that the output does not alias an input (pointers
    into OpenMP outlined functions arrive through a struct), and the store
    in the loop also stops its loop vectorizer.

    In every innermost `scf.for` whose body has no regions and no memory
    effects besides `memref.load`/`memref.store`, this pass finds each
    `memref.store` at loop-invariant indices into a loop-invariant buffer
    that the loop otherwise accesses only by loads of the same element
    before the store (no other access to the same underlying buffer,
    through views or not). That element is loaded once before the loop,
    carried as an `iter_args` value and stored once after the loop.

    When the accumulator's only use is an `arith.addf` or `arith.mulf`
    whose result the loop yields, that combiner gets the `reassoc` fast-math
    flag, so that LLVM may vectorize the reduction (sums of partial sums, in
    another order than the serial loop, as every vectorized BLAS or PyTorch
    reduction computes them). `arith.maximumf`/`arith.minimumf` reductions
    vectorize without a flag.

    With `disable-unroll` (the CPU pipeline's choice), a promoted loop of at
    least 16 iterations (or an unknown count) gets `llvm.loop_annotation`
    with `unroll<disable = true>`: LLVM unrolls a loop of a constant trip
    count fully before its loop vectorizer runs and then vectorizes the loop
    around it instead, across rows, with a gather per element (an attention
    block's row maximum over 64 keys); with the annotation it vectorizes the
    reduction itself. `tra-attach-loop-annotations` carries the attribute
    through to LLVM IR.

    ```mlir
    scf.for %t = %c0 to %c256 step %c1 {
      %x = memref.load %in[%s, %t] : memref<128x256xf32>
      %acc = memref.load %out[%s] : memref<128xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %out[%s] : memref<128xf32>
    }
    ```

    becomes

    ```mlir
    %init = memref.load %out[%s] : memref<128xf32>
    %r = scf.for %t = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memref.load %in[%s, %t] : memref<128x256xf32>
      %sum = arith.addf %acc, %x fastmath<reassoc> : f32
      scf.yield %sum : f32
    }
    memref.store %r, %out[%s] : memref<128xf32>
    ```
  }];
  let options = [
    Option<"disableUnroll", "disable-unroll", "bool", /*default=*/"false",
           "Mark promoted loops of at least 16 (or an unknown number of) "
           "iterations not to be unrolled by LLVM, so that its loop "
           "vectorizer vectorizes the reduction">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def PrivatizeFillInitsPass : Pass<"tra-privatize-fill-inits"> {
  let summary = "Give every linalg op its own copy of a shared linalg.fill init";
  let description = [{
    CSE merges the identical `linalg.fill` inits of different ops (every
    matmul of an MLP starts from the same zero-filled tensor). One-shot
    bufferization then cannot let the first op write into the fill's buffer
    (later ops still read the fill), so it allocates a copy of the filled
    buffer for each op: a fill plus a copy per op, and `tra-linalg-to-blas`
    can no longer fold the zero fill into the BLAS call (beta = 0).

    This pass clones a `linalg.fill` on tensors with several users right
    before each linalg op that uses it as an init (`outs`) operand, so that
    each op bufferizes in place into a buffer of its own. Fills used
    otherwise (as an input, or by non-linalg ops) keep the shared fill.

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.matmul ins(%x, %y : ...) outs(%z : tensor<4x4xf32>) -> ...
    %b = linalg.matmul ins(%a, %y : ...) outs(%z : tensor<4x4xf32>) -> ...
    ```

    becomes

    ```mlir
    %z0 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.matmul ins(%x, %y : ...) outs(%z0 : tensor<4x4xf32>) -> ...
    %z1 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %b = linalg.matmul ins(%a, %y : ...) outs(%z1 : tensor<4x4xf32>) -> ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SkipMaskedTailPass : Pass<"tra-skip-masked-tail"> {
  let summary = "Compute a masked chain of linalg ops only up to its runtime bound";
  let description = [{
    Causal attention over a KV cache of T positions masks the scores of
    positions past `pos + s` to -inf, and the softmax and the product with
    the values then add nothing for them: a decoding step at position 100
    of a 1024-position cache would do ten times the work it needs. This
    pass finds such a chain on tensors and computes it in blocks of
    `block-size` positions, only for the blocks that hold a visible
    position: a `scf.for` with a runtime trip count (from `pos`) around
    each op, on static block shapes (so later passes, BLAS calls included,
    see static shapes).

    The seed is an all-parallel `linalg.generic` yielding
    `select(t <= bound, x, C)` (or `<`, or the negated forms) where `t` is
    a loop index, `C` a constant and `bound` a sum of a runtime scalar (a
    0-d integer input), constants and other loop indices: past
    `max(bound) + 1` every element is `C`. From the seed the pass follows
    the uses: each elementwise user's value past the bound is folded from
    its body (for example `exp(-inf - m) = 0`), and each reduction over
    the masked dimension must leave its accumulator unchanged when combined
    with that value (`max(acc, -inf)`, `acc + 0`, `acc + 0 * v`). The
    producers of the seed's masked operand that have no other use are
    blocked too. A chain whose values escape otherwise, whose bodies do not
    fold, or whose masked dimension does not split into blocks is left
    unchanged.

    The folding assumes, like fast-math's no-NaN/no-Inf flags, that the
    values the chain reads from outside are finite (and nonzero where they
    divide): with NaN in the KV cache past `pos`, the original program
    would return NaN where this one does not.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"64",
           "positions per block (the masked dimension must be a multiple)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

def ExpandStridedCopiesPass : Pass<"tra-expand-strided-copies"> {
  let summary = "Turn copies between non-contiguous buffers into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` uses `memcpy` when both buffers are
    contiguous, and otherwise calls `memrefCopy` from MLIR's C runner
    utilities, a library compiled programs do not link. This pass rewrites
    every other `memref.copy` into a `linalg.copy`, which becomes a loop nest
    (and is then vectorized by LLVM).

    ```mlir
    memref.copy %a, %b : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
    ```

    becomes

    ```mlir
    linalg.copy ins(%a : memref<4x8xf32, strided<[16, 1]>>)
                outs(%b : memref<4x8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

def ParallelizeLoopsPass : Pass<"tra-parallelize-loops"> {
  let summary = "Lower large linalg ops on buffers to scf.parallel loop nests";
  let description = [{
    Lowers every linalg op on buffers whose work (iterations times the
    operations of one iteration) is at least `min-work` to a loop nest whose
    outer parallel dimensions form one `scf.parallel` and whose remaining
    dimensions are `scf.for` loops inside it. `convert-scf-to-openmp` then
    makes the `scf.parallel` an OpenMP worksharing loop, so independent
    iterations run on the threads of the device.

    The distributed dimensions are the first dimension whose extent is not 1
    (leading unit dimensions stay one-trip loops) and, while they have fewer
    than 64 iterations, the parallel dimensions after it; never the innermost
    dimension of an op with others, so that the innermost loop is the one
    LLVM vectorizes. Each distributed dimension must index every output, so
    that distinct iterations write distinct elements.

    Left alone (for `convert-linalg-to-loops`, serial): ops with less work,
    ops with dynamic shapes, ops whose first non-unit dimension is a
    reduction, and ops already inside a parallel region (parallel regions
    never nest).

    ```mlir
    linalg.generic {indexing_maps = [#id, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<256x2048xf32>) outs(%y : memref<256x2048xf32>) {...}
    ```

    becomes

    ```mlir
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      scf.for %j = %c0 to %c2048 step %c1 {
        %v = memref.load %x[%i, %j] : memref<256x2048xf32>
        ...
        memref.store %r, %y[%i, %j] : memref<256x2048xf32>
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Parallelize ops whose iterations times body operations are at "
           "least this">,
  ];
}

//===----------------------------------------------------------------------===//
// Math functions
//===----------------------------------------------------------------------===//

def AttachLoopAnnotationsPass : Pass<"tra-attach-loop-annotations"> {
  let summary = "Make the loop annotations that reach LLVM branches LLVM metadata";
  let description = [{
    `convert-scf-to-cf` copies the LLVM dialect's attributes of an `scf.for`
    (`llvm.loop_annotation`, which `tra-promote-accumulators` sets) onto the
    loop's latch branch, and `convert-cf-to-llvm` keeps them there under the
    same name. Translation to LLVM IR reads only the `loop_annotation`
    property of `llvm.br`/`llvm.cond_br` and would drop the annotation
    silently. This pass moves it into the property; other ops keep theirs.
    Runs after `convert-cf-to-llvm`.

    ```mlir
    llvm.br ^bb1(%i : i64) {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    ```

    becomes

    ```mlir
    llvm.br ^bb1(%i : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ReportFailedChecksPass
    : Pass<"tra-report-failed-checks", "::mlir::ModuleOp"> {
  let summary = "Make a failed run-time check a report to the runtime, not an abort";
  let description = [{
    The checks that only the run can decide (a gather index, a cache
    position: `tra-to-linalg`'s bounds checks) are `cf.assert`s, which
    `convert-cf-to-llvm` lowers to `abort()`: a compiled program that meets
    an out-of-range index would die with a signal, an engine with it, and a
    rank of a distributed program would leave the others waiting.

    This pass rewrites every `cf.assert` of the module's functions (not those
    of GPU kernel modules) into a branch that, where the condition is false,
    calls `tra_exec_check_failed` with the assert's message (a constant
    global string) and then continues. The runtime records the first failure
    and whoever ran the program asks for it afterwards
    (`tra_exec_take_check_failure`, runtime/exec/ABI.h): the executable
    driver exits 1 naming the check and writes no output; the engine's step
    fails with the message. The checked values are clamped into range by the
    code that checks them, so going on touches no memory outside a buffer.
    Runs after `convert-scf-to-cf`, where the assert's block can be split.

    ```mlir
    cf.assert %ok, "tra.gather at m.mlir:3:8: index out of range [0, 16)"
    ```

    becomes

    ```mlir
      cf.cond_br %ok, ^continue, ^failed
    ^failed:
      %message = llvm.mlir.addressof @tra_check_message_0 : !llvm.ptr
      func.call @tra_exec_check_failed(%message) : (!llvm.ptr) -> ()
      cf.br ^continue
    ^continue:
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::func::FuncDialect"];
}

def ExpandArithPass : Pass<"tra-expand-arith"> {
  let summary = "Expand the arith ops that the LLVM conversion cannot lower, and only those";
  let description = [{
    Rewrites `arith.ceildivsi`, `arith.ceildivui`, `arith.floordivsi` into
    integer arithmetic, and bf16 `arith.extf`/`arith.truncf` (and bf16
    arithmetic, through f32) into integer bit manipulation, so that
    `convert-arith-to-llvm` can lower every arith op the pipeline produces.

    Unlike upstream `arith-expand`, it keeps `arith.maximumf`,
    `arith.minimumf`, `arith.maxnumf` and `arith.minnumf`: they become
    `llvm.maximum` etc., which LLVM's loop vectorizer recognizes as
    reductions. Expanded into compares and selects, a max reduction (a
    softmax's row maximum) stays a scalar loop.

    ```mlir
    %q = arith.ceildivsi %a, %b : i64
    %m = arith.maximumf %x, %y : f32
    ```

    becomes integer code for the division (compares, a division and a
    select) and leaves the `arith.maximumf` as it is.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ApproximateMathPass : Pass<"tra-approximate-math"> {
  let summary = "Rewrite f32 math functions into vectorizable arithmetic";
  let description = [{
    Replaces the `math` ops named by `ops` (default: `exp`) on f32 by MLIR's
    polynomial approximations (`populateMathPolynomialApproximationPatterns`):
    range reduction, a polynomial and exponent bit manipulation in `arith`.
    LLVM's loop vectorizer turns a loop calling `llvm.exp.f32` into one
    calling `llvm.exp.v16f32`, which the x86 back end scalarizes into one
    libm `expf` call per lane; the approximation vectorizes with the rest of
    the loop body instead (a softmax's or SiLU's map several times faster).

    ```mlir
    %e = math.exp %x : f32
    ```

    becomes a sequence of `arith` (and `math.fma`) ops with the same result
    to within a few ulp.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "math ops to approximate, by name (exp, expm1, tanh, log, "
               "log1p, log2, erf, ...; default: exp)">,
  ];
}

//===----------------------------------------------------------------------===//
// NVIDIA GPUs
//===----------------------------------------------------------------------===//

def MapToGPUPass : Pass<"tra-map-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Run the buffers and linalg ops of host functions on a GPU";
  let description = [{
    After bufferization (and `tra-linalg-to-blas{target=cuda}`), makes every
    buffer of every function device memory and every linalg op a GPU kernel,
    leaving on the host only control flow, index arithmetic, runtime calls
    and the launches:

    * `memref.alloc`, `memref.alloca` and `memref.dealloc` become
      `gpu.alloc` / `gpu.dealloc`; a `memref.get_global` (a host constant)
      is copied into a device buffer; a contiguous `memref.copy` becomes a
      call of `tra_cuda_memcpy`; a strided copy (`memref.copy` or
      `linalg.copy`) of 1 to 4 dimensions with static strides a call of
      `tra_cuda_copy_strided` (the copy engines, through `cuMemcpy2DAsync`);
      any other copy a `linalg.copy` kernel;
    * each linalg op becomes one `gpu.launch`: its parallel dimensions that
      index every output are tiled by 1 into an `scf.parallel` (one
      iteration per output element), whose iterations are linearized over
      1-D blocks of `block-size` threads, innermost dimension fastest; the
      other dimensions stay loops inside the kernel (`convert-linalg-to-loops`
      lowers them there). An op without such dimensions runs on one thread;
    * a host `memref.load` / `memref.store` of a device buffer (a position
      read for a dynamic slice) goes through a one-element host buffer
      copied with `tra_cuda_read` (which waits) / `tra_cuda_write`.

    Launches, allocations and frees are async ops on fresh `gpu.wait async`
    tokens: the CUDA runtime (`runtime/cuda`) runs all of a process's GPU
    work on one stream, which orders it, and the host waits only in
    `tra_cuda_read` and when the caller synchronizes.

    ```mlir
    linalg.generic {indexing_maps = [#id, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {...}
    ```

    becomes (`%total` = 32 iterations, one block of 256 threads)

    ```mlir
    %t = gpu.wait async
    %done = gpu.launch async [%t] blocks(%bx, %by, %bz) in (%gx = %c1, ...)
        threads(%tx, %ty, %tz) in (%sx = %c256, ...) {
      %id = ... %bx * 256 + %tx ...
      scf.if %id < %total {
        // %i = %id / 8, %j = %id % 8
        %xs = memref.subview %x[%i, %j] [1, 1] [1, 1] ...
        linalg.generic ... ins(%xs ...) outs(%ys ...) {...}
      }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the kernels">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def GpuFatbinPass : Pass<"tra-gpu-fatbin", "::mlir::ModuleOp"> {
  let summary = "Pack the cubins of each gpu.binary into one CUDA fatbin";
  let description = [{
    `gpu-module-to-binary{format=bin}` writes one cubin per NVVM target of a
    `gpu.module` (ptxas compiles the kernels once per chip), and the
    translation of `gpu.binary` embeds one object. This pass packs the
    cubins of every `gpu.binary` into one fatbin with the CUDA toolkit's
    `fatbinary`, so that the program carries machine code for every chip it
    was compiled for (by default sm_80 and sm_90) and the driver picks the
    one for the GPU it runs on. The packed object records the chips in its
    `tra.chips` property.

    ```mlir
    gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "...">,
                         #gpu.object<#nvvm.target<chip = "sm_90">, bin = "...">]
    ```

    becomes

    ```mlir
    gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">,
        properties = {tra.chips = ["sm_80", "sm_90"]}, fatbin = "...">]
    ```
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "The CUDA toolkit (its bin/fatbinary is run)">,
  ];
}

def GpuDedupKernelsPass : Pass<"tra-gpu-dedup-kernels", "::mlir::ModuleOp"> {
  let summary = "Keep one gpu.module of each set of identical kernel modules";
  let description = [{
    `gpu-kernel-outlining` writes one `gpu.module` per `gpu.launch`. A
    model's layers are the same code on different weights, so most of those
    modules are identical (LLaMA-7B's 32 layers give 32 copies of each
    kernel), and each copy would be compiled by LLVM and ptxas once per
    chip. This pass keeps the first of each set of modules whose contents
    (kernels and targets) are identical and points the launches of the others
    at it.

    ```mlir
    gpu.launch_func @layer_kernel::@layer_kernel ...
    gpu.launch_func @layer_kernel_7::@layer_kernel ...
    gpu.module @layer_kernel { gpu.func @layer_kernel(...) kernel {...} }
    gpu.module @layer_kernel_7 { gpu.func @layer_kernel(...) kernel {...} }
    ```

    becomes, when the two modules' contents are the same,

    ```mlir
    gpu.launch_func @layer_kernel::@layer_kernel ...
    gpu.launch_func @layer_kernel::@layer_kernel ...
    gpu.module @layer_kernel { gpu.func @layer_kernel(...) kernel {...} }
    ```

    It also renames kernels whose names PTX would reject (the kernels of a
    distributed program's rank functions `@f.rank0`, ... are named after
    them): every character other than letters, digits, `_` and `$` becomes
    `_`, and the launches follow.
  }];
}

#endif // TRA_TRANSFORMS_PASSES_TD
