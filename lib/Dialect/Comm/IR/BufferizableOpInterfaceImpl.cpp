//===- BufferizableOpInterfaceImpl.cpp - Bufferization of tra_comm --------===//
//
// One-shot bufferization of the tra_comm ops. Each op bufferizes directly to
// the code that moves its bytes:
//
//  - sends, receives and world-wide all-reduces of f32/f64/integer payloads
//    become the upstream `mpi` dialect ops (`mpi.send`, `mpi.recv`,
//    `mpi.allreduce` on `mpi.comm_world`), lowered to MPI calls later;
//  - what the mpi dialect of LLVM 22 cannot express goes to the tra MPI
//    runtime (runtime/include/tra/Runtime/Mpi.h): 16-bit float and boolean
//    payloads (`tra_mpi_send` / `tra_mpi_recv` of bytes, `tra_mpi_allreduce`
//    reducing in f32), all-reduces over a subset of the ranks (its cached
//    sub-communicators) and reduce-scatter (`tra_mpi_reduce_scatter`);
//  - non-blocking moves go to the runtime for every element type
//    (`tra_mpi_isend` / `tra_mpi_irecv` of bytes, `tra_mpi_wait`): LLVM 22
//    has `mpi.isend`, `mpi.irecv` and `mpi.wait`, but its MPIToLLVM
//    conversion has no pattern for any of them (only init, comm_world,
//    comm_rank, comm_split, send, recv, allreduce and finalize). A
//    `!tra_comm.request` becomes the runtime's i64 handle, bridged with
//    unrealized casts that fold away (each request has one producer and
//    one wait, both rewritten here).
//
// A fetch (a tile kept in a memory tier, brought to the device) is a fresh
// buffer, a memref.copy into it and a call of the executable runtime that
// counts the bytes (tra_exec_tier_fetched), on the host and on a GPU alike.
// A non-blocking fetch hands the copy to the runtime instead, with the
// sizes and strides of both buffers: `tra_exec_fetch_start` (a copy thread
// of the executable runtime) or, on a GPU, `tra_cuda_fetch_start` (a copy
// stream), returning a handle for `tra_exec_fetch_wait` /
// `tra_cuda_fetch_wait`. Its buffer is written until the wait, which
// bufferizes in place on it, as for a receive.
//
// In a module whose tiles live in GPU memory (`tra_comm.device = "cuda"`)
// every move is instead a call of runtime/cuda with the same arguments
// (`tra_cuda_send`, ..., `tra_cuda_reduce_scatter`; tra/Cuda/ABI.h), on
// device pointers once tra-map-to-gpu has made the buffers device memory;
// the rank lists and counts they take are host constants (LLVM globals,
// which tra-map-to-gpu leaves on the host).
//
// A non-blocking send's buffer must stay unmodified and allocated until its
// wait: the wait takes the sent tensor as an operand it reads, so the
// one-shot analysis copies rather than let anything write that buffer
// before the wait, and buffer deallocation frees it after the wait. A
// receive's buffer is written by MPI until the wait, which bufferizes in
// place on it (the irecv's verifier allows no other use of the tile).
//
// MPI reads and writes contiguous 1-D buffers: strided operands are copied
// to a contiguous buffer first; reduce-scatter packs its slices one after
// another when they are not contiguous already.
//
//===----------------------------------------------------------------------===//

#include "tra/Dialect/Comm/IR/Comm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tra::comm;

namespace {

/// The element type codes of runtime/include/tra/Runtime/Mpi.h.
enum RuntimeDType { kF32 = 0, kF16 = 1, kBF16 = 2, kI64 = 3 };

/// Whether the mpi dialect's lowering handles `type` as an MPI datatype.
bool hasMPIDatatype(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth());
}

/// Bytes one element of `type` occupies in memory.
int64_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

Value i32Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}
Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

/// A fresh buffer of the shape and element type of `type`.
Value allocate(OpBuilder &b, Location loc, ShapedType type) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
}

/// `buffer` itself if it has the identity layout, else a contiguous copy.
Value contiguous(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  Value copy = allocate(b, loc, type);
  memref::CopyOp::create(b, loc, buffer, copy);
  return copy;
}

/// A 1-D view of the contiguous `buffer` (the mpi dialect's lowering takes
/// the element count from the first dimension).
Value flatten(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() == 1)
    return buffer;
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return memref::CollapseShapeOp::create(b, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The address of the first element of `buffer` as an LLVM pointer.
Value elementPointer(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value size = arith::ConstantIndexOp::create(
      b, loc, elementBytes(type.getElementType()));
  Value offset = arith::MulIOp::create(b, loc, metadata.getOffset(), size);
  Value address = arith::AddIOp::create(b, loc, base, offset);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

/// Whether the tiles of the module around `op` live in GPU memory
/// (`tra_comm.device = "cuda"`): then every move is a call of runtime/cuda.
bool onGpu(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto device =
      module ? module->getAttrOfType<StringAttr>(CommDialect::kDeviceAttrName)
             : StringAttr();
  return device && device.getValue() == "cuda";
}

/// The runtime function for `call` ("send", "allreduce", ...): the MPI
/// runtime's (tra/Runtime/Mpi.h) on the host, runtime/cuda's (NCCL on
/// device memory, tra/Cuda/ABI.h, same arguments) on a GPU.
std::string runtimeName(Operation *op, StringRef call) {
  return ((onGpu(op) ? "tra_cuda_" : "tra_mpi_") + call).str();
}

/// Declares runtime function `name` of `type` in the module of `op` (or
/// checks an existing declaration).
FailureOr<func::FuncOp> getRuntimeFunction(Operation *op, StringRef name,
                                           FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    if (!func || func.getFunctionType() != type)
      return existing->emitError("symbol '")
             << name << "' is reserved for the tra runtime";
    return func;
  }
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(b, op->getLoc(), name, type);
  func.setPrivate();
  return func;
}

/// Calls runtime function `name` with `args`, returning `results`.
FailureOr<func::CallOp> callRuntime(OpBuilder &b, Operation *op, StringRef name,
                                    ValueRange args, TypeRange results = {}) {
  SmallVector<Type> types;
  for (Value arg : args)
    types.push_back(arg.getType());
  FailureOr<func::FuncOp> callee =
      getRuntimeFunction(op, name, b.getFunctionType(types, results));
  if (failed(callee))
    return failure();
  return func::CallOp::create(b, op->getLoc(), *callee, args);
}

/// The arguments of the runtime's point-to-point calls
/// (tra_mpi_send/recv/isend/irecv): the tile's first element, its bytes, the
/// peer and the tag.
SmallVector<Value> pointToPointArgs(OpBuilder &b, Location loc, Value buffer,
                                    ShapedType type, int64_t peer,
                                    int64_t tag) {
  int64_t bytes = type.getNumElements() * elementBytes(type.getElementType());
  return {elementPointer(b, loc, buffer), i64Constant(b, loc, bytes),
          i32Constant(b, loc, peer), i32Constant(b, loc, tag)};
}

/// The runtime function for `call` ("start", "wait") of a non-blocking
/// fetch: the executable runtime's (tra/Exec/ABI.h) on the host,
/// runtime/cuda's (tra/Cuda/ABI.h, same arguments) on a GPU.
std::string fetchRuntimeName(Operation *op, StringRef call) {
  return ((onGpu(op) ? "tra_cuda_fetch_" : "tra_exec_fetch_") + call).str();
}

/// Whether `request` is a non-blocking fetch's, before or after the
/// tra_comm.ifetch was bufferized (then it is the handle its start call
/// returned).
bool isFetchRequest(Value request) {
  if (request.getDefiningOp<IFetchOp>())
    return true;
  auto cast = request.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast->getNumOperands() != 1)
    return false;
  auto call = cast->getOperand(0).getDefiningOp<func::CallOp>();
  return call && call.getCallee() == fetchRuntimeName(call, "start");
}

/// The runtime's handle for a request, and back.
Value handleOf(OpBuilder &b, Location loc, Value request) {
  return UnrealizedConversionCastOp::create(b, loc, b.getI64Type(), request)
      .getResult(0);
}
Value requestOf(OpBuilder &b, Location loc, Value handle) {
  return UnrealizedConversionCastOp::create(
             b, loc, RequestType::get(b.getContext()), handle)
      .getResult(0);
}

/// A pointer to a constant host array of `values` (a private LLVM global:
/// unlike a memref.global, tra-map-to-gpu leaves it on the host, where the
/// runtime reads it).
Value constantArray(OpBuilder &b, Operation *op, Type elementType,
                    ArrayRef<int64_t> values) {
  auto module = op->getParentOfType<ModuleOp>();
  auto type = LLVM::LLVMArrayType::get(elementType, values.size());
  SmallVector<Attribute> elements;
  for (int64_t v : values)
    elements.push_back(b.getIntegerAttr(elementType, v));
  auto init = DenseElementsAttr::get(
      RankedTensorType::get({int64_t(values.size())}, elementType), elements);
  // Reuse an equal global.
  LLVM::GlobalOp global;
  for (auto existing : module.getOps<LLVM::GlobalOp>())
    if (existing.getGlobalType() == type && existing.getConstant() &&
        existing.getValueOrNull() == init &&
        existing.getSymName().starts_with("tra_comm."))
      global = existing;
  if (!global) {
    std::string name;
    for (unsigned n = 0;; ++n) {
      name = "tra_comm.array" + std::to_string(n);
      if (!SymbolTable::lookupSymbolIn(module, name))
        break;
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(b, op->getLoc(), type, /*isConstant=*/true,
                                    LLVM::Linkage::Private, name, init);
  }
  return LLVM::AddressOfOp::create(b, op->getLoc(), global);
}

/// Runtime code of a reduction kind (tra_mpi_op).
int64_t runtimeOp(ReductionKind kind) { return int64_t(kind); }

mpi::MPI_ReductionOpEnum mpiOp(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::sum:
    return mpi::MPI_ReductionOpEnum::MPI_SUM;
  case ReductionKind::max:
    return mpi::MPI_ReductionOpEnum::MPI_MAX;
  case ReductionKind::min:
    return mpi::MPI_ReductionOpEnum::MPI_MIN;
  case ReductionKind::prod:
    return mpi::MPI_ReductionOpEnum::MPI_PROD;
  }
  llvm_unreachable("unknown reduction");
}

/// Runtime element type of a collective's payload, if it has one.
std::optional<int64_t> runtimeDType(Type type) {
  if (type.isF32())
    return kF32;
  if (type.isF16())
    return kF16;
  if (type.isBF16())
    return kBF16;
  if (type.isInteger(64))
    return kI64;
  return std::nullopt;
}

/// The number of ranks of the job running the function around `op`.
std::optional<int64_t> jobSize(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return std::nullopt;
  if (auto size =
          func->getAttrOfType<IntegerAttr>(CommDialect::kNumRanksAttrName))
    return size.getInt();
  return std::nullopt;
}

/// Common parts of the models: results are new allocations with the
/// identity layout; operands are only read.
template <typename ConcreteModel, typename ConcreteOp>
struct CommOpModel
    : public BufferizableOpInterface::ExternalModel<ConcreteModel, ConcreteOp> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    auto type = cast<RankedTensorType>(value.getType());
    return cast<BufferLikeType>(
        MemRefType::get(type.getShape(), type.getElementType()));
  }
};

struct SendOpModel : public CommOpModel<SendOpModel, SendOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto send = cast<SendOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, send.getInput(), options, state);
    if (failed(buffer))
      return failure();
    Value data = contiguous(rewriter, loc, *buffer);
    Type element = send.getInput().getType().getElementType();
    if (hasMPIDatatype(element) && !onGpu(op)) {
      Value comm = mpi::CommWorldOp::create(
          rewriter, loc, mpi::CommType::get(op->getContext()));
      mpi::SendOp::create(rewriter, loc, TypeRange{},
                          flatten(rewriter, loc, data),
                          i32Constant(rewriter, loc, send.getTag()),
                          i32Constant(rewriter, loc, send.getPeer()), comm);
    } else {
      if (failed(callRuntime(rewriter, op, runtimeName(op, "send"),
                             pointToPointArgs(rewriter, loc, data,
                                              send.getInput().getType(),
                                              send.getPeer(), send.getTag()))))
        return failure();
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct RecvOpModel : public CommOpModel<RecvOpModel, RecvOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    auto recv = cast<RecvOp>(op);
    Location loc = op->getLoc();
    auto type = recv.getResult().getType();
    Value data = allocate(rewriter, loc, type);
    Type element = type.getElementType();
    if (hasMPIDatatype(element) && !onGpu(op)) {
      Value comm = mpi::CommWorldOp::create(
          rewriter, loc, mpi::CommType::get(op->getContext()));
      mpi::RecvOp::create(rewriter, loc, TypeRange{},
                          flatten(rewriter, loc, data),
                          i32Constant(rewriter, loc, recv.getTag()),
                          i32Constant(rewriter, loc, recv.getPeer()), comm);
    } else {
      if (failed(callRuntime(rewriter, op, runtimeName(op, "recv"),
                             pointToPointArgs(rewriter, loc, data, type,
                                              recv.getPeer(), recv.getTag()))))
        return failure();
    }
    replaceOpWithBufferizedValues(rewriter, op, data);
    return success();
  }
};

struct AllReduceOpModel : public CommOpModel<AllReduceOpModel, AllReduceOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, reduce.getInput(), options, state);
    if (failed(buffer))
      return failure();
    auto type = reduce.getResult().getType();
    Type element = type.getElementType();
    Value result = allocate(rewriter, loc, type);
    ArrayRef<int32_t> ranks = reduce.getRanks();
    std::optional<int64_t> size = jobSize(op);
    bool world = size && int64_t(ranks.size()) == *size;
    if (world && !onGpu(op) &&
        (element.isF32() || element.isF64() || element.isInteger(32) ||
         element.isInteger(64))) {
      Value comm = mpi::CommWorldOp::create(
          rewriter, loc, mpi::CommType::get(op->getContext()));
      mpi::AllReduceOp::create(
          rewriter, loc, TypeRange{},
          flatten(rewriter, loc, contiguous(rewriter, loc, *buffer)),
          flatten(rewriter, loc, result), mpiOp(reduce.getKind()), comm);
    } else {
      std::optional<int64_t> dtype = runtimeDType(element);
      if (!dtype)
        return op->emitOpError("cannot reduce elements of type ") << element;
      memref::CopyOp::create(rewriter, loc, *buffer, result);
      SmallVector<int64_t> members(ranks.begin(), ranks.end());
      if (failed(callRuntime(
              rewriter, op, runtimeName(op, "allreduce"),
              {elementPointer(rewriter, loc, result),
               i64Constant(rewriter, loc, type.getNumElements()),
               i32Constant(rewriter, loc, *dtype),
               i32Constant(rewriter, loc, runtimeOp(reduce.getKind())),
               constantArray(rewriter, op, rewriter.getI32Type(), members),
               i32Constant(rewriter, loc, ranks.size())})))
        return failure();
    }
    replaceOpWithBufferizedValues(rewriter, op, result);
    return success();
  }
};

struct ReduceScatterOpModel
    : public CommOpModel<ReduceScatterOpModel, ReduceScatterOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto scatter = cast<ReduceScatterOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, scatter.getInput(), options, state);
    if (failed(buffer))
      return failure();
    auto inputType = scatter.getInput().getType();
    auto type = scatter.getResult().getType();
    Type element = type.getElementType();
    std::optional<int64_t> dtype = runtimeDType(element);
    if (!dtype)
      return op->emitOpError("cannot reduce elements of type ") << element;
    int64_t dim = scatter.getDim();
    ArrayRef<int64_t> shape = inputType.getShape();
    // Elements per slice: the slice thickness times the other dimensions.
    int64_t inner = 1;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      if (d != dim)
        inner *= shape[d];
    SmallVector<int64_t> counts;
    for (int64_t size : scatter.getSizes())
      counts.push_back(size * inner);
    // Slices along `dim` follow one another in memory only when every
    // dimension before it has one element; otherwise pack them.
    bool packed =
        llvm::all_of(shape.take_front(dim), [](int64_t n) { return n == 1; });
    Value send;
    if (packed) {
      send = contiguous(rewriter, loc, *buffer);
    } else {
      auto flatType = MemRefType::get({inputType.getNumElements()}, element);
      send = memref::AllocOp::create(rewriter, loc, flatType);
      int64_t start = 0, offset = 0;
      for (int64_t size : scatter.getSizes()) {
        SmallVector<int64_t> sliceShape(shape);
        sliceShape[dim] = size;
        SmallVector<OpFoldResult> offsets(shape.size(),
                                          rewriter.getIndexAttr(0));
        offsets[dim] = rewriter.getIndexAttr(start);
        SmallVector<OpFoldResult> sizes,
            strides(shape.size(), rewriter.getIndexAttr(1));
        for (int64_t n : sliceShape)
          sizes.push_back(rewriter.getIndexAttr(n));
        Value source = memref::SubViewOp::create(rewriter, loc, *buffer,
                                                 offsets, sizes, strides);
        int64_t elements = size * inner;
        Value part = memref::SubViewOp::create(
            rewriter, loc, send,
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(offset)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(elements)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
        // View the packed part with the slice's shape.
        SmallVector<int64_t> partStrides(sliceShape.size(), 1);
        for (int64_t d = int64_t(sliceShape.size()) - 2; d >= 0; --d)
          partStrides[d] = partStrides[d + 1] * sliceShape[d + 1];
        auto viewType = MemRefType::get(
            sliceShape, element,
            StridedLayoutAttr::get(op->getContext(), offset, partStrides));
        Value view = memref::ReinterpretCastOp::create(
            rewriter, loc, viewType, part, offset, sliceShape, partStrides);
        if (elements)
          memref::CopyOp::create(rewriter, loc, source, view);
        start += size;
        offset += elements;
      }
    }
    Value result = allocate(rewriter, loc, type);
    SmallVector<int64_t> members(scatter.getRanks().begin(),
                                 scatter.getRanks().end());
    if (failed(callRuntime(
            rewriter, op, runtimeName(op, "reduce_scatter"),
            {elementPointer(rewriter, loc, send),
             elementPointer(rewriter, loc, result),
             constantArray(rewriter, op, rewriter.getI64Type(), counts),
             i32Constant(rewriter, loc, *dtype),
             i32Constant(rewriter, loc, runtimeOp(scatter.getKind())),
             constantArray(rewriter, op, rewriter.getI32Type(), members),
             i32Constant(rewriter, loc, members.size())})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, result);
    return success();
  }
};

/// Non-blocking send: `tra_mpi_isend` of the tile's bytes (contiguous).
struct ISendOpModel : public CommOpModel<ISendOpModel, ISendOp> {
  bool mustBufferizeInPlace(Operation *, OpOperand &,
                            const AnalysisState &) const {
    return true;
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto send = cast<ISendOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, send.getInput(), options, state);
    if (failed(buffer))
      return failure();
    Value data = contiguous(rewriter, loc, *buffer);
    FailureOr<func::CallOp> call = callRuntime(
        rewriter, op, runtimeName(op, "isend"),
        pointToPointArgs(rewriter, loc, data, send.getInput().getType(),
                         send.getPeer(), send.getTag()),
        rewriter.getI64Type());
    if (failed(call))
      return failure();
    rewriter.replaceOp(op, requestOf(rewriter, loc, call->getResult(0)));
    return success();
  }
};

/// Non-blocking receive: a fresh buffer that `tra_mpi_irecv` fills.
struct IRecvOpModel : public CommOpModel<IRecvOpModel, IRecvOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    auto recv = cast<IRecvOp>(op);
    Location loc = op->getLoc();
    auto type = recv.getResult().getType();
    Value data = allocate(rewriter, loc, type);
    FailureOr<func::CallOp> call =
        callRuntime(rewriter, op, runtimeName(op, "irecv"),
                    pointToPointArgs(rewriter, loc, data, type, recv.getPeer(),
                                     recv.getTag()),
                    rewriter.getI64Type());
    if (failed(call))
      return failure();
    replaceOpWithBufferizedValues(
        rewriter, op, {data, requestOf(rewriter, loc, call->getResult(0))});
    return success();
  }
};

/// The wait of a send reads the sent tile (keeping its buffer unchanged and
/// alive until here); the wait of a receive writes the received tile in
/// place and returns it.
struct WaitOpModel
    : public BufferizableOpInterface::ExternalModel<WaitOpModel, WaitOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &,
                              const AnalysisState &) const {
    return !cast<WaitOp>(op).getResult();
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &,
                               const AnalysisState &) const {
    return bool(cast<WaitOp>(op).getResult());
  }
  bool mustBufferizeInPlace(Operation *, OpOperand &,
                            const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    Value result = cast<WaitOp>(op).getResult();
    if (!result)
      return {};
    return {{result, BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto wait = cast<WaitOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, wait.getTensor(), options, state);
    if (failed(buffer))
      return failure();
    std::string callee = isFetchRequest(wait.getRequest())
                             ? fetchRuntimeName(op, "wait")
                             : runtimeName(op, "wait");
    if (failed(callRuntime(rewriter, op, callee,
                           handleOf(rewriter, loc, wait.getRequest()))))
      return failure();
    if (wait.getResult())
      replaceOpWithBufferizedValues(rewriter, op, *buffer);
    else
      rewriter.eraseOp(op);
    return success();
  }
};

/// Counts a fetch of a tile of `type` from `tier` for the executable
/// runtime (tra_exec_tier_fetched: its bytes and the tier's code).
LogicalResult countFetched(OpBuilder &b, Operation *op, ShapedType type,
                           StringRef tier) {
  Location loc = op->getLoc();
  int64_t bytes = type.getNumElements() * elementBytes(type.getElementType());
  return callRuntime(b, op, "tra_exec_tier_fetched",
                     {i64Constant(b, loc, bytes),
                      i32Constant(b, loc, FetchOp::getTierCode(tier))});
}

/// A fetch: a fresh buffer and a copy into it (a memcpy on the host; on a
/// GPU, tra-map-to-gpu makes the copy a device copy from the tier's buffer),
/// counted for the tier by the executable runtime (tra_exec_tier_fetched).
/// The copy stays a memref.copy, so tra-early-dealloc sees every use of the
/// buffer and frees it right after the reading operation.
struct FetchOpModel : public CommOpModel<FetchOpModel, FetchOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto fetch = cast<FetchOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, fetch.getInput(), options, state);
    if (failed(buffer))
      return failure();
    auto type = fetch.getResult().getType();
    Value result = allocate(rewriter, loc, type);
    memref::CopyOp::create(rewriter, loc, *buffer, result);
    if (failed(countFetched(rewriter, op, type, fetch.getTier())))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, result);
    return success();
  }
};

/// A non-blocking fetch: a fresh buffer that the runtime's fetch start
/// fills from the tile, a copy of up to IFetchOp::kMaxRank strided
/// dimensions (sizes, then the strides of the buffer and of the tile, in
/// elements; unused trailing dimensions of size 1), counted for the tier
/// when it starts.
struct IFetchOpModel : public CommOpModel<IFetchOpModel, IFetchOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto fetch = cast<IFetchOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> source =
        getBuffer(rewriter, fetch.getInput(), options, state);
    if (failed(source))
      return failure();
    auto type = fetch.getResult().getType();
    Value result = allocate(rewriter, loc, type);
    int64_t rank = type.getRank();
    if (rank < 1 || rank > IFetchOp::kMaxRank)
      return op->emitOpError("fetches tiles of 1 to ")
             << IFetchOp::kMaxRank << " dimensions";
    Type i64 = rewriter.getI64Type();
    auto asI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(rewriter, loc, i64, index);
    };
    auto targetShape =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, result);
    auto sourceShape =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, *source);
    int64_t elementSize = elementBytes(type.getElementType());
    SmallVector<Value> args = {elementPointer(rewriter, loc, result),
                               elementPointer(rewriter, loc, *source),
                               i64Constant(rewriter, loc, elementSize),
                               i64Constant(rewriter, loc, rank)};
    for (int64_t d = 0; d < IFetchOp::kMaxRank; ++d)
      args.push_back(d < rank ? asI64(targetShape.getSizes()[d])
                              : i64Constant(rewriter, loc, 1));
    for (auto shape : {targetShape, sourceShape})
      for (int64_t d = 0; d < IFetchOp::kMaxRank; ++d)
        args.push_back(d < rank ? asI64(shape.getStrides()[d])
                                : i64Constant(rewriter, loc, 0));
    FailureOr<func::CallOp> call =
        callRuntime(rewriter, op, fetchRuntimeName(op, "start"), args, i64);
    if (failed(call))
      return failure();
    if (failed(countFetched(rewriter, op, type, fetch.getTier())))
      return failure();
    replaceOpWithBufferizedValues(
        rewriter, op, {result, requestOf(rewriter, loc, call->getResult(0))});
    return success();
  }
};

/// Memory effects of the upstream mpi ops on their buffers, which LLVM 22
/// does not declare: without them, buffer deallocation (which runs after
/// bufferization) rejects the ops as having unknown effects. Each op also
/// reads and writes the network, which keeps them in order.
template <typename Op>
struct MPIEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<MPIEffectsModel<Op>, Op> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    auto network = NetworkResource::get();
    effects.emplace_back(MemoryEffects::Read::get(), network);
    effects.emplace_back(MemoryEffects::Write::get(), network);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      // mpi.recv writes its buffer; mpi.allreduce writes the second
      // (receive) buffer; everything else is read.
      bool writes = isa<mpi::RecvOp>(op) || (isa<mpi::AllReduceOp>(op) &&
                                             operand.getOperandNumber() == 1);
      if (writes)
        effects.emplace_back(MemoryEffects::Write::get(), &operand);
      else
        effects.emplace_back(MemoryEffects::Read::get(), &operand);
    }
  }
};

} // namespace

void mlir::tra::comm::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, CommDialect *) {
    ctx->loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                     memref::MemRefDialect, mpi::MPIDialect>();
    SendOp::attachInterface<SendOpModel>(*ctx);
    RecvOp::attachInterface<RecvOpModel>(*ctx);
    AllReduceOp::attachInterface<AllReduceOpModel>(*ctx);
    ReduceScatterOp::attachInterface<ReduceScatterOpModel>(*ctx);
    ISendOp::attachInterface<ISendOpModel>(*ctx);
    IRecvOp::attachInterface<IRecvOpModel>(*ctx);
    WaitOp::attachInterface<WaitOpModel>(*ctx);
    FetchOp::attachInterface<FetchOpModel>(*ctx);
    IFetchOp::attachInterface<IFetchOpModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::SendOp::attachInterface<MPIEffectsModel<mpi::SendOp>>(*ctx);
    mpi::RecvOp::attachInterface<MPIEffectsModel<mpi::RecvOp>>(*ctx);
    mpi::AllReduceOp::attachInterface<MPIEffectsModel<mpi::AllReduceOp>>(*ctx);
  });
}
