//===- MapToGPU.cpp - A host function's buffers and loops on the GPU ------===//
//
// After bufferization (and tra-linalg-to-blas{target=cuda}), a function's
// buffers and its remaining linalg ops still describe a CPU program. This
// pass makes every buffer device memory and every linalg op a GPU kernel,
// leaving on the host only control flow, index arithmetic, runtime calls and
// the launches:
//
//  * memref.alloc / memref.alloca / memref.dealloc become gpu.alloc /
//    gpu.dealloc; memref.get_global (a host constant) is copied into a
//    device buffer; a contiguous memref.copy becomes a tra_cuda_memcpy call,
//    a strided copy (memref.copy or linalg.copy) of up to 4 dimensions with
//    static strides a tra_cuda_copy_strided call (the copy engines, through
//    cuMemcpy2DAsync), and any other copy a linalg.copy;
//  * a linalg op becomes one gpu.launch: its parallel dimensions that index
//    every output are tiled by 1 into an scf.parallel (one iteration per
//    output element), whose iterations are linearized over 1-D blocks of
//    `block-size` threads, innermost dimension fastest (so neighbouring
//    threads touch neighbouring elements); the other dimensions stay loops
//    inside the kernel. An op without such dimensions runs on one thread;
//  * a host memref.load / memref.store of a device buffer (a position read
//    for a dynamic slice) goes through a one-element host buffer, copied
//    with tra_cuda_read (which waits) / tra_cuda_write;
//  * a non-blocking fetch of a memory tier's tile (tra_exec_fetch_start /
//    _wait of the bufferized tra_comm.ifetch: a host copy thread) becomes
//    tra_cuda_fetch_start / _wait (a copy stream the process's stream waits
//    for).
//
// Device work is issued without waiting: launches, allocations and frees are
// async ops, each depending on a fresh gpu.wait async token. The runtime runs
// all of a process's GPU work on one stream (runtime/cuda/include/tra/Cuda/
// ABI.h), which orders it; the host waits only in tra_cuda_read and when the
// program's caller synchronizes.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "tra/Transforms/MemRefAddress.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_MAPTOGPUPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// The runtime functions the host code calls (runtime/cuda ABI.h): copies
/// (dst, src, bytes) on the stream, and a copy to the host that waits.
static constexpr StringLiteral kMemcpyName = "tra_cuda_memcpy";
static constexpr StringLiteral kReadName = "tra_cuda_read";
static constexpr StringLiteral kWriteName = "tra_cuda_write";
static constexpr StringLiteral kCopyStridedName = "tra_cuda_copy_strided";

/// Returns true if `op` is inside a kernel.
static bool isInKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

/// A fresh token for an async op that depends on nothing but the stream.
static Value newToken(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                             ValueRange{})
      .getAsyncToken();
}

namespace {
/// Declares the runtime functions once.
class RuntimeFunctions {
public:
  explicit RuntimeFunctions(ModuleOp module) : module(module) {}

  /// The declaration of copy function `name` (dst, src: pointers; bytes:
  /// i64), or a diagnostic if the name is taken.
  FailureOr<func::FuncOp> get(StringRef name) {
    MLIRContext *ctx = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    return get(name, FunctionType::get(
                         ctx, {ptr, ptr, IntegerType::get(ctx, 64)}, {}));
  }

  /// The declaration of `name` of `type`.
  FailureOr<func::FuncOp> get(StringRef name, FunctionType type) {
    if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
      auto func = dyn_cast<func::FuncOp>(existing);
      if (!func || func.getFunctionType() != type)
        return existing->emitError("symbol '")
               << name << "' is reserved for the CUDA runtime";
      return func;
    }
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto func = func::FuncOp::create(b, module.getLoc(), name, type);
    func.setPrivate();
    return func;
  }

private:
  ModuleOp module;
};
} // namespace

/// The address of element `indices` of `memref` (its first element if
/// empty) as an LLVM pointer, computed on the host from its descriptor.
static Value elementPointer(OpBuilder &b, Location loc, Value memref,
                            ValueRange indices) {
  return tra::toLLVMPointer(b, loc,
                            tra::getElementAddress(b, loc, memref, indices));
}

/// Bytes of `memref` (dynamic sizes read from its descriptor).
static Value byteSize(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value bytes =
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8);
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    bytes = arith::MulIOp::create(b, loc, bytes,
                                  memref::DimOp::create(b, loc, memref, d));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
}

/// Whether the elements of `type` lie contiguously in row-major order.
static bool isContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    int64_t size = type.getDimSize(d);
    if (size != 1 && strides[d] != expected)
      return false;
    if (ShapedType::isDynamic(size) && d > 0)
      return false;
    if (!ShapedType::isDynamic(size))
      expected *= size;
  }
  return true;
}

/// The most dimensions tra_cuda_copy_strided takes.
static constexpr int64_t kMaxStridedCopyRank = 4;

/// Whether tra_cuda_copy_strided can copy from `source` to `target`: the
/// same rank (1 to 4), whole bytes, static strides, positive along every
/// dimension that may have more than one element.
static bool isStridedCopy(MemRefType source, MemRefType target) {
  if (source.getRank() != target.getRank() || source.getRank() < 1 ||
      source.getRank() > kMaxStridedCopyRank ||
      source.getElementTypeBitWidth() % 8 != 0 ||
      source.getElementType() != target.getElementType())
    return false;
  for (MemRefType type : {source, target}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return false;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      if (type.getDimSize(d) != 1 &&
          (ShapedType::isDynamic(strides[d]) || strides[d] <= 0))
        return false;
  }
  return true;
}

/// A tra_cuda_copy_strided call copying `source` to `target`
/// (isStridedCopy).
static LogicalResult createStridedCopy(OpBuilder &b, Location loc,
                                       RuntimeFunctions &runtime, Value source,
                                       Value target) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  SmallVector<Type> types = {ptr, ptr, i64, i64};
  types.append(3 * kMaxStridedCopyRank, i64);
  FailureOr<func::FuncOp> callee =
      runtime.get(kCopyStridedName, FunctionType::get(ctx, types, {}));
  if (failed(callee))
    return failure();
  auto type = cast<MemRefType>(source.getType());
  auto i64Constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  SmallVector<Value> args = {elementPointer(b, loc, target, {}),
                             elementPointer(b, loc, source, {}),
                             i64Constant(type.getElementTypeBitWidth() / 8),
                             i64Constant(type.getRank())};
  for (int64_t d = 0; d < kMaxStridedCopyRank; ++d)
    args.push_back(
        d < type.getRank()
            ? arith::IndexCastOp::create(
                  b, loc, i64, memref::DimOp::create(b, loc, source, d))
                  .getResult()
            : i64Constant(1));
  for (Value buffer : {target, source}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)cast<MemRefType>(buffer.getType())
        .getStridesAndOffset(strides, offset);
    for (int64_t d = 0; d < kMaxStridedCopyRank; ++d)
      // Strides of one-element dimensions are never used.
      args.push_back(i64Constant(
          d < type.getRank() && !ShapedType::isDynamic(strides[d]) ? strides[d]
                                                                   : 0));
  }
  func::CallOp::create(b, loc, *callee, args);
  return success();
}

/// Inserts `gpu.dealloc` of `memref` before the terminator of `block`.
static void deallocAtEnd(OpBuilder &b, Location loc, Value memref,
                         Block *block) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(block->getTerminator());
  gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                         ValueRange{newToken(b, loc)}, memref);
}

/// Buffers in device memory; copies on the stream.
static LogicalResult mapMemory(func::FuncOp func, RuntimeFunctions &runtime) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (!isInKernel(op) &&
        isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
            memref::CopyOp, memref::GetGlobalOp, linalg::CopyOp>(op))
      ops.push_back(op);
  });
  OpBuilder b(func.getContext());
  Type token = gpu::AsyncTokenType::get(func.getContext());
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto device = gpu::AllocOp::create(
          b, loc, alloc.getType(), token, ValueRange{newToken(b, loc)},
          alloc.getDynamicSizes(), alloc.getSymbolOperands());
      alloc.replaceAllUsesWith(device.getMemref());
      alloc.erase();
    } else if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      // Freed where the alloca's scope ends.
      auto device = gpu::AllocOp::create(
          b, loc, alloca.getType(), token, ValueRange{newToken(b, loc)},
          alloca.getDynamicSizes(), alloca.getSymbolOperands());
      alloca.replaceAllUsesWith(device.getMemref());
      deallocAtEnd(b, loc, device.getMemref(), op->getBlock());
      alloca.erase();
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(b, loc, token, ValueRange{newToken(b, loc)},
                             dealloc.getMemref());
      dealloc.erase();
    } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      // A host constant: a device copy for the rest of the block.
      b.setInsertionPointAfter(global);
      auto type = cast<MemRefType>(global.getType());
      auto device = gpu::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()),
          token, ValueRange{newToken(b, loc)}, ValueRange{}, ValueRange{});
      Value copy = device.getMemref();
      global.getResult().replaceUsesWithIf(
          copy, [&](OpOperand &use) { return use.getOwner() != device; });
      FailureOr<func::FuncOp> memcpy = runtime.get(kMemcpyName);
      if (failed(memcpy))
        return failure();
      func::CallOp::create(b, loc, *memcpy,
                           ValueRange{elementPointer(b, loc, copy, {}),
                                      elementPointer(b, loc, global, {}),
                                      byteSize(b, loc, global)});
      deallocAtEnd(b, loc, copy, global->getBlock());
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto sourceType = cast<MemRefType>(copy.getSource().getType());
      auto targetType = cast<MemRefType>(copy.getTarget().getType());
      if (isContiguous(sourceType) && isContiguous(targetType)) {
        FailureOr<func::FuncOp> memcpy = runtime.get(kMemcpyName);
        if (failed(memcpy))
          return failure();
        func::CallOp::create(
            b, loc, *memcpy,
            ValueRange{elementPointer(b, loc, copy.getTarget(), {}),
                       elementPointer(b, loc, copy.getSource(), {}),
                       byteSize(b, loc, copy.getSource())});
      } else if (isStridedCopy(sourceType, targetType)) {
        if (failed(createStridedCopy(b, loc, runtime, copy.getSource(),
                                     copy.getTarget())))
          return failure();
      } else {
        linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
      }
      copy.erase();
    } else if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
      // A strided copy (tra-expand-strided-copies made it a linalg.copy):
      // the copy engines, not a kernel, where the runtime can describe it.
      if (!copy.hasPureBufferSemantics())
        continue;
      Value source = copy.getDpsInputs()[0], target = copy.getDpsInits()[0];
      auto sourceType = dyn_cast<MemRefType>(source.getType());
      auto targetType = dyn_cast<MemRefType>(target.getType());
      if (!sourceType || !targetType || !isStridedCopy(sourceType, targetType))
        continue;
      if (failed(createStridedCopy(b, loc, runtime, source, target)))
        return failure();
      copy.erase();
    }
  }
  return success();
}

/// The parallel dimensions of `op` that index every output: distinct
/// iterations along them write distinct elements.
static SmallVector<unsigned> getDistributedDims(linalg::LinalgOp op) {
  SmallVector<unsigned> dims;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (iterators[d] != utils::IteratorType::parallel)
      continue;
    bool indexesEveryOutput =
        llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
          AffineMap map = op.getMatchingIndexingMap(&init);
          return llvm::any_of(map.getResults(), [&](AffineExpr expr) {
            auto dim = dyn_cast<AffineDimExpr>(expr);
            return dim && dim.getPosition() == d;
          });
        });
    if (indexesEveryOutput)
      dims.push_back(d);
  }
  return dims;
}

/// Replaces `loop` (no reductions) by a gpu.launch whose threads run its
/// iterations, linearized row-major over 1-D blocks of `blockSize`.
static void launchParallelLoop(OpBuilder &b, scf::ParallelOp loop,
                               int64_t blockSize) {
  Location loc = loop.getLoc();
  b.setInsertionPoint(loop);
  SmallVector<Value> extents;
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    // ceil((ub - lb) / step), lb <= ub.
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value extent = arith::CeilDivUIOp::create(b, loc, span, step);
    extents.push_back(extent);
    total = arith::MulIOp::create(b, loc, total, extent);
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, threads, one, one, /*dynamicSharedMemorySize=*/
      nullptr, gpu::AsyncTokenType::get(b.getContext()),
      ValueRange{newToken(b, loc)});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(b, loc);

  b.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> ivs(extents.size());
  Value rest = linear;
  for (int64_t d = int64_t(extents.size()) - 1; d >= 0; --d) {
    Value index =
        d == 0 ? rest
               : arith::RemUIOp::create(b, loc, rest, extents[d]).getResult();
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, extents[d]);
    ivs[d] = arith::AddIOp::create(
        b, loc, loop.getLowerBound()[d],
        arith::MulIOp::create(b, loc, index, loop.getStep()[d]));
  }
  IRMapping mapping;
  mapping.map(loop.getInductionVars(), ivs);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
}

/// Replaces `op` by a one-thread gpu.launch that runs it.
static void launchOnOneThread(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, one, one, one, one, one, one, nullptr,
      gpu::AsyncTokenType::get(b.getContext()), ValueRange{newToken(b, loc)});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  op->moveBefore(body.getTerminator());
}

/// Every linalg op on the host becomes a kernel.
static LogicalResult mapLinalgOps(func::FuncOp func, int64_t blockSize) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) {
    if (!isInKernel(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  OpBuilder &b = rewriter;
  for (linalg::LinalgOp op : ops) {
    if (!op.hasPureBufferSemantics())
      return op.emitError("tra-map-to-gpu expects linalg ops on buffers "
                          "(run it after bufferization)");
    SmallVector<unsigned> dims = getDistributedDims(op);
    if (dims.empty()) {
      launchOnOneThread(b, op);
      continue;
    }
    SmallVector<int64_t> tileSizes(op.getNumLoops(), 0);
    for (unsigned d : dims)
      tileSizes[d] = 1;
    linalg::LinalgTilingOptions options;
    options.setTileSizes(tileSizes).setLoopType(
        linalg::LinalgTilingLoopType::ParallelLoops);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, op, options);
    // One scf.parallel over the tiled dims (`loops` names it once per dim).
    auto loop = failed(tiled) || tiled->loops.empty()
                    ? scf::ParallelOp()
                    : dyn_cast<scf::ParallelOp>(tiled->loops.front());
    if (!loop || llvm::any_of(tiled->loops,
                              [&](Operation *other) { return other != loop; }))
      return op.emitError("tra-map-to-gpu cannot tile this op into one "
                          "parallel loop");
    rewriter.eraseOp(op);
    launchParallelLoop(b, loop, blockSize);
  }
  return success();
}

/// Host loads and stores of device buffers go through host buffers.
static LogicalResult stageHostAccesses(func::FuncOp func,
                                       RuntimeFunctions &runtime) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (!isInKernel(op) && isa<memref::LoadOp, memref::StoreOp>(op))
      ops.push_back(op);
  });
  OpBuilder b(func.getContext());
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    auto load = dyn_cast<memref::LoadOp>(op);
    auto store = dyn_cast<memref::StoreOp>(op);
    Value memref = load ? load.getMemref() : store.getMemref();
    ValueRange indices = load ? load.getIndices() : store.getIndices();
    Type element = cast<MemRefType>(memref.getType()).getElementType();
    auto hostType = MemRefType::get({1}, element);
    Value host = memref::AllocaOp::create(b, loc, hostType);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value bytes = arith::ConstantIntOp::create(
        b, loc, hostType.getElementTypeBitWidth() / 8, 64);
    Value device = elementPointer(b, loc, memref, indices);
    Value hostPointer = elementPointer(b, loc, host, ValueRange{zero});
    if (load) {
      FailureOr<func::FuncOp> read = runtime.get(kReadName);
      if (failed(read))
        return failure();
      func::CallOp::create(b, loc, *read,
                           ValueRange{hostPointer, device, bytes});
      Value value = memref::LoadOp::create(b, loc, host, ValueRange{zero});
      load.replaceAllUsesWith(value);
      load.erase();
    } else {
      memref::StoreOp::create(b, loc, store.getValueToStore(), host,
                              ValueRange{zero});
      FailureOr<func::FuncOp> write = runtime.get(kWriteName);
      if (failed(write))
        return failure();
      func::CallOp::create(b, loc, *write,
                           ValueRange{device, hostPointer, bytes});
      store.erase();
    }
  }
  return success();
}

namespace {
/// The executable runtime's non-blocking fetches (a copy thread, on host
/// memory) and runtime/cuda's (a copy stream, into device memory), which
/// take the same arguments.
static constexpr std::pair<StringLiteral, StringLiteral> kFetchCalls[] = {
    {"tra_exec_fetch_start", "tra_cuda_fetch_start"},
    {"tra_exec_fetch_wait", "tra_cuda_fetch_wait"}};

/// Non-blocking fetches into device buffers: runtime/cuda's.
static LogicalResult mapFetches(func::FuncOp func, RuntimeFunctions &runtime) {
  SmallVector<func::CallOp> calls;
  func.walk([&](func::CallOp call) {
    if (!isInKernel(call))
      calls.push_back(call);
  });
  for (func::CallOp call : calls) {
    for (auto [host, device] : kFetchCalls) {
      if (call.getCallee() != host)
        continue;
      FailureOr<func::FuncOp> callee =
          runtime.get(device, call.getCalleeType());
      if (failed(callee))
        return failure();
      call.setCallee(callee->getSymName());
    }
  }
  return success();
}

struct MapToGPUPass : public tra::impl::MapToGPUPassBase<MapToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      module.emitError("tra-map-to-gpu: block-size must be in [1, 1024]");
      return signalPassFailure();
    }
    RuntimeFunctions runtime(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      if (failed(mapFetches(func, runtime)) ||
          failed(mapMemory(func, runtime)) ||
          failed(mapLinalgOps(func, blockSize)) ||
          failed(stageHostAccesses(func, runtime)))
        return signalPassFailure();
    }
    // The host's fetch functions are no longer called.
    for (auto [host, device] : kFetchCalls) {
      auto declaration = module.lookupSymbol<func::FuncOp>(host);
      if (declaration && declaration.isExternal() &&
          declaration.symbolKnownUseEmpty(module))
        declaration.erase();
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
  }
};
} // namespace
