//===- Comm.td - tra_comm dialect ---------------------------*- tablegen -*-===//
//
// Communication in per-rank programs: what a planned program's tile moves
// become once it is split into one program per MPI rank.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_DIALECT_COMM_IR_COMM_TD
#define TRA_DIALECT_COMM_IR_COMM_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Comm_Dialect : Dialect {
  let name = "tra_comm";
  let cppNamespace = "::mlir::tra::comm";
  let summary = "Tile moves between the ranks of a distributed program";
  let description = [{
    `tra-localize` turns a planned function (every value with a
    `#tra_plan.dist`, tile moves explicit as `tra_plan` ops) into one function
    per device: the program MPI rank `r` runs, on the tiles rank `r` holds.
    Inside those functions the tile moves are the operations of this
    dialect, on whole local tensors:

    * `tra_comm.isend` / `tra_comm.irecv` / `tra_comm.wait`: one tile
      region from one rank to another without blocking: the send is posted
      as soon as the tile is computed, the receive at the same point of
      the receiver's program, and the wait comes right before the received
      tile is first used (for a send, at the end of the function), so the
      move overlaps computation;
    * `tra_comm.send` / `tra_comm.recv`: the same move, blocking (used when
      `tra-localize` is asked for blocking moves; every rank issues its
      moves in one global order, so blocking moves cannot deadlock);
    * `tra_comm.all_reduce`: combine the partial copies of a tile held by a
      group of ranks; every member gets the result;
    * `tra_comm.reduce_scatter`: combine them and leave member `j` with the
      `j`-th slice along one dimension;
    * `tra_comm.ifetch` / `tra_comm.wait`: bring a tile the plan keeps in a
      memory tier of the node (host memory or disk, `tra_plan.tier`) to the
      device, into a buffer of its own, without blocking: started while the
      previous reader of a streamed tile computes, waited right before the
      operation that reads it. Unlike the moves above it involves no other
      rank, so it also appears in the one-device programs
      (`tra-fetch-tiers` inserts it);
    * `tra_comm.fetch`: the same, blocking, right before the reader.

    The operations bufferize (one-shot bufferization) straight to the
    upstream `mpi` dialect where it can express and lower them (`mpi.send`,
    `mpi.recv`, `mpi.allreduce` on `MPI_COMM_WORLD` for f32/f64/integer
    payloads) and to calls of the tra MPI runtime
    (`runtime/include/tra/Runtime/Mpi.h`) for what it cannot: 16-bit float
    and boolean payloads, all-reduces over a subset of the ranks (cached
    sub-communicators), reduce-scatter, and the non-blocking moves of every
    element type (LLVM 22's mpi dialect has `mpi.isend`, `mpi.irecv` and
    `mpi.wait`, but its MPI-to-LLVM conversion lowers none of them).

    A module whose tiles live in GPU memory carries `tra_comm.device =
    "cuda"` (set by distributed code generation for NVIDIA GPUs): there every
    move bufferizes to a call of runtime/cuda (`tra_cuda_send`, ...,
    `tra_cuda_reduce_scatter` in `runtime/cuda/include/tra/Cuda/ABI.h`),
    which runs it with NCCL on the process's stream, from and to device
    memory; no move goes through the `mpi` dialect.

    A fetch bufferizes to a fresh buffer, a `memref.copy` of the tile into
    it (on a GPU a copy to device memory, on the process's stream) and a
    call of the executable runtime, `tra_exec_tier_fetched`
    (`runtime/exec/include/tra/Exec/ABI.h`), which counts the bytes each
    tier gave, for the program's profile and the engine's report. A
    non-blocking fetch bufferizes to a fresh buffer and
    `tra_exec_fetch_start`, which hands the copy to the runtime's copy
    thread and returns a handle that the wait passes to
    `tra_exec_fetch_wait`; on a GPU to `tra_cuda_fetch_start` /
    `tra_cuda_fetch_wait` (a copy on a second stream, which the process's
    stream waits for with an event), with the same counting call.

    A per-rank function carries `tra_comm.rank` (its rank) and
    `tra_comm.num_ranks` (the ranks of the job).
  }];
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kRankAttrName = "tra_comm.rank";
    static constexpr ::llvm::StringLiteral kNumRanksAttrName =
        "tra_comm.num_ranks";
    /// On a module: where its tiles live ("cuda": NVIDIA GPU memory).
    static constexpr ::llvm::StringLiteral kDeviceAttrName =
        "tra_comm.device";
  }];
}

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, traits>;

class Comm_Type<string name, string typeMnemonic>
    : TypeDef<Comm_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def Comm_RequestType : Comm_Type<"Request", "request"> {
  let summary = "a non-blocking move in flight";
  let description = [{
    The handle of a `tra_comm.isend`, `tra_comm.irecv` or
    `tra_comm.ifetch`, consumed by the one `tra_comm.wait` that completes
    the move. It bufferizes to the
    runtime's 64-bit request handle.
  }];
}

def Comm_ReductionAttr : I32EnumAttr<"ReductionKind",
    "how partial tiles combine", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"prod", 3>]> {
  let cppNamespace = "::mlir::tra::comm";
}

// Every op here moves data between processes: they have effects on a
// resource shared by all of them so that no pass reorders, merges or drops
// them.
def Comm_Network : Resource<"::mlir::tra::comm::NetworkResource">;

def Comm_SendOp : Comm_Op<"send", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "send a tile to another rank, blocking";
  let description = [{
    Sends the whole of `input` to rank `peer` with message tag `tag` and
    returns once the tile may be reused; the receiving rank has a matching
    `tra_comm.recv` (or `tra_comm.irecv`) of the same type.

    ```mlir
    tra_comm.send %tile to 3 tag 7 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$tag);
  let assemblyFormat = [{
    $input `to` $peer `tag` $tag attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Comm_RecvOp : Comm_Op<"recv", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "receive a tile from another rank, blocking";
  let description = [{
    Receives a tensor of the result type from rank `peer`, sent with tag
    `tag`, and returns once it has arrived.

    ```mlir
    %t = tra_comm.recv from 0 tag 7 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$tag);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    `from` $peer `tag` $tag attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Comm_ISendOp : Comm_Op<"isend", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "start sending a tile to another rank";
  let description = [{
    Posts the send of the whole of `input` to rank `peer` with message tag
    `tag` and returns at once; the receiving rank has a matching
    `tra_comm.irecv` (or `tra_comm.recv`) of the same type. The request
    must be completed by exactly one `tra_comm.wait`, which also takes
    `input`: until then the tile is being read, so nothing may overwrite
    or free it (one-shot bufferization copies instead).

    ```mlir
    %req = tra_comm.isend %tile to 3 tag 7 : tensor<4x16xf32>
    // ... computation overlapping the move ...
    tra_comm.wait %req, %tile : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$tag);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = [{
    $input `to` $peer `tag` $tag attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Comm_IRecvOp : Comm_Op<"irecv", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "start receiving a tile from another rank";
  let description = [{
    Posts the receive of a tensor of the result type from rank `peer`, sent
    with tag `tag`, and returns at once. `result` is the tile in flight: its
    only use is the `tra_comm.wait` of `request`, which returns the received
    tile.

    ```mlir
    %buf, %req = tra_comm.irecv from 0 tag 7 : tensor<4x16xf32>
    // ... computation overlapping the move ...
    %t = tra_comm.wait %req, %buf : tensor<4x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$peer,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$tag);
  let results = (outs AnyStaticShapeTensor:$result,
                      Comm_RequestType:$request);
  let assemblyFormat = [{
    `from` $peer `tag` $tag attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Comm_WaitOp : Comm_Op<"wait", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "complete a non-blocking move";
  let description = [{
    Blocks until the move of `request` has completed. `tensor` is the tile
    the move is about: the input of the `tra_comm.isend` (the wait reads it,
    which keeps it unmodified and alive until here; no result) or the
    in-flight result of the `tra_comm.irecv` or `tra_comm.ifetch` (the wait
    returns the received or fetched tile, in the same buffer).

    ```mlir
    tra_comm.wait %sreq, %tile : tensor<4x16xf32>
    %t = tra_comm.wait %rreq, %buf : tensor<4x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Comm_RequestType:$request,
                       AnyStaticShapeTensor:$tensor);
  let results = (outs Optional<AnyStaticShapeTensor>:$result);
  let assemblyFormat = [{
    $request `,` $tensor attr-dict `:` type($tensor) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def Comm_AllReduceOp : Comm_Op<"all_reduce", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "combine partial tiles held by a group of ranks";
  let description = [{
    Every rank of `ranks` (sorted, the calling rank among them) holds a
    partial aggregate of one tile; each gets the combination (`kind`) of
    all of them.

    ```mlir
    %r = tra_comm.all_reduce sum %p ranks [0, 1, 2, 3] : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, Comm_ReductionAttr:$kind,
                       DenseI32ArrayAttr:$ranks);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $kind $input `ranks` $ranks attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Comm_ReduceScatterOp : Comm_Op<"reduce_scatter", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "combine partial tiles; each rank keeps one slice";
  let description = [{
    Every rank of `ranks` holds a partial aggregate of one tile; the `j`-th
    rank of `ranks` gets slice `j` of the combined tile along dimension
    `dim`, `sizes[j]` elements thick (the slices follow one another and
    cover the dimension).

    ```mlir
    %s = tra_comm.reduce_scatter sum %p dim 0 ranks [0, 1] sizes [2, 2]
        : tensor<4x16xf32> -> tensor<2x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, Comm_ReductionAttr:$kind,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       DenseI32ArrayAttr:$ranks, DenseI64ArrayAttr:$sizes);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $kind $input `dim` $dim `ranks` $ranks `sizes` $sizes attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Comm_FetchOp : Comm_Op<"fetch", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "bring a tile kept in a memory tier to the device";
  let description = [{
    `input` is a function argument whose tiles the plan keeps in a memory
    tier of the node (`tier`: `"host"` memory or `"disk"`) rather than in
    device memory; the result is a copy of it in a buffer of the device,
    made when the op runs and freed after its last use. Each operation that
    reads a streamed argument reads it through its own fetch (the planner's
    model: two buffers, the one read and the next arriving). The effects on
    the network resource keep fetches where they are, in program order.

    ```mlir
    %w = tra_comm.fetch %arg3 from "host" : tensor<256x256xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, StrAttr:$tier);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `from` $tier attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The runtime's code for `tier` (ABI.h TraExecTier), or -1.
    static int64_t getTierCode(::llvm::StringRef tier);
  }];
}

def Comm_IFetchOp : Comm_Op<"ifetch", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "start bringing a tile kept in a memory tier to the device";
  let description = [{
    Starts what `tra_comm.fetch` does and returns at once: `result` is the
    tile in flight, a buffer of the device being filled with a copy of
    `input` (a function argument the plan keeps in memory tier `tier`, or a
    static slice of one, of 1 to 4 dimensions); its only use is the
    `tra_comm.wait` of `request`, which returns the fetched tile. Between
    the two the program computes: `tra-fetch-tiers` starts the fetch for
    one reader of streamed tiles while the previous one runs (the planner's
    model: two buffers, the one read and the next arriving).

    ```mlir
    %buf, %req = tra_comm.ifetch %arg3 from "host" : tensor<256x256xf32>
    // ... computation overlapping the copy ...
    %w = tra_comm.wait %req, %buf : tensor<256x256xf32> -> tensor<256x256xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, StrAttr:$tier);
  let results = (outs AnyStaticShapeTensor:$result,
                      Comm_RequestType:$request);
  let assemblyFormat = [{
    $input `from` $tier attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The most dimensions the runtimes' fetch copies take.
    static constexpr int64_t kMaxRank = 4;
    /// Whether `input` can be fetched without blocking: a function argument
    /// or a slice of one (which stays unchanged until the wait), of static
    /// shape and 1 to kMaxRank dimensions.
    static bool isFetchable(::mlir::Value input);
  }];
}

#endif // TRA_DIALECT_COMM_IR_COMM_TD
