//===- LinalgToBLAS.cpp - Contractions on buffers to BLAS calls -----------===//
//
// A linalg contraction on memrefs whose three operands are (batched)
// matrices in memory, possibly transposed, becomes one call to the runtime:
// for the CPU, `tra_exec_sgemm` (f32), which loops over the batch calling
// `cblas_sgemm`, or `tra_exec_gemm_mixed` (f16 or bf16 inputs, f32 result:
// 16-bit weights, widened in cache-sized panels); for NVIDIA GPUs
// (`target=cuda`), `tra_cuda_gemm` (f32, f16 or bf16 on device memory), which
// calls cuBLAS's strided batched GEMM.
//
// The loop dimensions of a contraction split into batch (in A, B and C), m
// (A and C), n (B and C) and k (A and B) dimensions. Each class may hold
// several dimensions: they are flattened into one matrix dimension when they
// are consecutive in every operand, in the same order, and their strides
// nest (stride[i] == stride[i+1] * size[i+1]).
//
// Batch, m and n dimensions that do not flatten (attention's query heads of
// one key/value group: the key/value operand is shared across them, and they
// sit between other dimensions in the output) are peeled into `scf.for`
// loops around the call, each iteration offsetting the three pointers. Of
// the sets of dimensions that can be peeled, the one with the fewest calls
// is chosen; each matrix product must still do at least kMinMatrixFlops
// multiply-adds (cblas_sgemm costs a fixed overhead per product, which the
// runtime calls once per batch matrix).
//
//===----------------------------------------------------------------------===//

#include "Contraction.h"

#include "tra/Conversion/Passes.h"
#include "tra/Transforms/MemRefAddress.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_CONVERTLINALGTOBLASPASS
#include "tra/Conversion/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using tra::blas::DimGroup;
using tra::blas::flattenGroup;

/// The runtime functions the contractions call: runtime/exec's ABI.h (CPU)
/// and runtime/cuda's ABI.h (GPU, with the element type first).
static constexpr llvm::StringLiteral kSgemmName = "tra_exec_sgemm";
static constexpr llvm::StringLiteral kCudaGemmName = "tra_cuda_gemm";
static constexpr llvm::StringLiteral kMixedGemmName = "tra_exec_gemm_mixed";

namespace {
/// Where the contractions run.
struct BlasTarget {
  bool cuda = false;
  /// The function for inputs of `input`: on the CPU, 16-bit inputs go to
  /// tra_exec_gemm_mixed (f32 C), f32 to tra_exec_sgemm.
  StringRef callee(Type input) const {
    if (cuda)
      return kCudaGemmName;
    return input.isF32() ? kSgemmName : kMixedGemmName;
  }
  /// Whether the call takes the element types first (tra_cuda_gemm's
  /// signature, which tra_exec_gemm_mixed shares).
  bool takesTypes(Type input) const { return cuda || !input.isF32(); }
};
} // namespace

/// The runtime's code for the element type of a GEMM (TraExecDType: f32 0,
/// f16 1, bf16 2), if `target` supports it.
static std::optional<int64_t> getGemmElementType(Type type,
                                                 const BlasTarget &target) {
  if (type.isF32())
    return 0;
  if (type.isF16())
    return 1;
  if (type.isBF16())
    return 2;
  return std::nullopt;
}

namespace {
/// A strided 2-D view of an operand: `rows` x `cols` elements, with the
/// distance in elements between consecutive rows and columns.
struct MatrixView {
  int64_t rows = 1, cols = 1;
  int64_t rowStride = 0, colStride = 0;

  MatrixView transposed() const { return {cols, rows, colStride, rowStride}; }
};

/// How BLAS reads a matrix: as stored (row-major) or transposed, with the
/// leading dimension.
struct BlasMatrix {
  bool transposed = false;
  int64_t ld = 1;
};

/// A loop dimension run as a loop around the sgemm call: its extent and the
/// stride of each operand (A, B, C; 0 where the operand does not use it).
struct PeeledLoop {
  int64_t extent = 1;
  int64_t stride[3] = {0, 0, 0};
};

/// The operands' batch strides and matrix views of one contraction, ready
/// for sgemm: C (M x N) = A (M x K) * B (K x N) for each of `batch` matrices,
/// for every iteration of the `loops` around the call.
struct GemmShape {
  int64_t batch = 1;
  int64_t batchStride[3] = {0, 0, 0};
  MatrixView a, b, c;
  SmallVector<PeeledLoop> loops;

  /// The multiply-adds of one matrix product.
  int64_t matrixFlops() const { return c.rows * c.cols * a.cols; }
  /// The number of calls.
  int64_t calls() const {
    int64_t n = 1;
    for (const PeeledLoop &loop : loops)
      n *= loop.extent;
    return n;
  }
};

/// Fewer multiply-adds per matrix product than this: not worth a BLAS call
/// per product and per iteration of peeled loops (the rotary embedding's
/// `sptu,shpu->shpt` would be 4 x 128 products of 8 x 2 x 2), nor one per
/// product of a CPU batch.
static constexpr int64_t kMinMatrixFlops = 4096;

/// The classes of the loop dimensions of a contraction.
struct DimClasses {
  SmallVector<unsigned> batch, m, n, k;
};
} // namespace

/// Classifies every loop dimension of a contraction with operand maps `maps`
/// (A, B, C). Fails if a dimension occurs in only one operand.
static FailureOr<DimClasses> classifyDims(ArrayRef<AffineMap> maps) {
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return failure();
  DimClasses classes;
  for (unsigned d = 0, e = maps[2].getNumDims(); d < e; ++d) {
    bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d),
         inC = maps[2].isFunctionOfDim(d);
    if (inA && inB && inC)
      classes.batch.push_back(d);
    else if (inA && inC)
      classes.m.push_back(d);
    else if (inB && inC)
      classes.n.push_back(d);
    else if (inA && inB)
      classes.k.push_back(d);
    else
      return failure();
  }
  return classes;
}

/// Returns `dims` ordered by their position in the results of `map`.
static SmallVector<unsigned> orderBy(ArrayRef<unsigned> dims, AffineMap map) {
  SmallVector<unsigned> ordered(dims);
  llvm::sort(ordered, [&](unsigned x, unsigned y) {
    return *map.getResultPosition(getAffineDimExpr(x, map.getContext())) <
           *map.getResultPosition(getAffineDimExpr(y, map.getContext()));
  });
  return ordered;
}

std::optional<DimGroup> tra::blas::flattenGroup(ArrayRef<unsigned> group,
                                                AffineMap map,
                                                ArrayRef<int64_t> shape,
                                                ArrayRef<int64_t> strides) {
  if (group.empty())
    return DimGroup{};
  SmallVector<unsigned> positions;
  for (unsigned d : group) {
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(d, map.getContext()));
    if (!pos)
      return std::nullopt;
    positions.push_back(*pos);
  }
  DimGroup flat{1, strides[positions.back()]};
  for (auto [i, pos] : llvm::enumerate(positions)) {
    if (ShapedType::isDynamic(strides[pos]))
      return std::nullopt;
    flat.size *= shape[pos];
    if (i == 0)
      continue;
    // Consecutive in the operand, up to dimensions of extent 1 in between.
    unsigned prev = positions[i - 1];
    if (pos <= prev ||
        llvm::any_of(shape.slice(prev + 1, pos - prev - 1),
                     [](int64_t extent) { return extent != 1; }) ||
        strides[prev] != strides[pos] * shape[pos])
      return std::nullopt;
  }
  return flat;
}

/// Returns how BLAS can read `view`, if it can.
static std::optional<BlasMatrix> blasLayout(const MatrixView &view) {
  if (view.cols == 1 || view.colStride == 1) {
    int64_t ld = view.rows == 1 ? view.cols : view.rowStride;
    if (ld >= std::max<int64_t>(1, view.cols))
      return BlasMatrix{false, ld};
  }
  if (view.rows == 1 || view.rowStride == 1) {
    int64_t ld = view.cols == 1 ? view.rows : view.colStride;
    if (ld >= std::max<int64_t>(1, view.rows))
      return BlasMatrix{true, ld};
  }
  return std::nullopt;
}

/// Returns `gemm` arranged for a row-major sgemm: if C is stored
/// column-major, the transposed product C^T = B^T A^T (with `swapped` set).
/// Fails if BLAS cannot read some operand.
static std::optional<GemmShape> normalizeForBlas(GemmShape gemm,
                                                 bool &swapped) {
  std::optional<BlasMatrix> c = blasLayout(gemm.c);
  if (!c)
    return std::nullopt;
  swapped = c->transposed;
  if (swapped) {
    std::swap(gemm.batchStride[0], gemm.batchStride[1]);
    for (PeeledLoop &loop : gemm.loops)
      std::swap(loop.stride[0], loop.stride[1]);
    MatrixView newA = gemm.b.transposed(), newB = gemm.a.transposed();
    gemm.a = newA, gemm.b = newB, gemm.c = gemm.c.transposed();
    c = blasLayout(gemm.c);
    if (!c || c->transposed)
      return std::nullopt;
  }
  if (!blasLayout(gemm.a) || !blasLayout(gemm.b))
    return std::nullopt;
  return gemm;
}

/// Computes the sgemm shape of the f32 contraction `op` on memrefs, arranged
/// by `normalizeForBlas` (`swapped` says whether A and B trade places), if
/// its operands' layouts allow one.
static std::optional<GemmShape> analyzeContraction(linalg::LinalgOp op,
                                                   bool &swapped,
                                                   const BlasTarget &target) {
  MLIRContext *ctx = op.getContext();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  FailureOr<DimClasses> classes = classifyDims(maps);
  if (failed(classes) || classes->k.empty())
    return std::nullopt;
  // Loop dimensions of extent 1 select one element of each operand: they
  // take no part in the matrix views, whatever their place in the operands
  // (decoding attention reads q[s=1][g][r=1][d] against k[t][g][d]).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto dropUnit = [&](SmallVector<unsigned> &dims) {
    llvm::erase_if(dims, [&](unsigned d) { return ranges[d] == 1; });
  };
  dropUnit(classes->batch);
  dropUnit(classes->m);
  dropUnit(classes->n);
  dropUnit(classes->k);

  SmallVector<MemRefType> types;
  SmallVector<SmallVector<int64_t>> strides;
  // A and B share one element type the target supports; C has it too, or
  // (GPU, f16/bf16 inputs) f32 for an f32 accumulation.
  Type inputType =
      cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  Type outputType =
      cast<ShapedType>(op->getOperand(2).getType()).getElementType();
  // The CPU's 16-bit products (tra_exec_gemm_mixed) write f32 only.
  if (outputType != inputType && !(outputType.isF32() && !inputType.isF32()))
    return std::nullopt;
  if (!target.cuda && !outputType.isF32())
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        !getGemmElementType(type.getElementType(), target) ||
        (operand.getOperandNumber() < 2 && type.getElementType() != inputType))
      return std::nullopt;
    SmallVector<int64_t> s;
    int64_t offset;
    if (failed(type.getStridesAndOffset(s, offset)))
      return std::nullopt;
    types.push_back(type);
    strides.push_back(s);
  }

  // The dims that may run as loops around the call, and the stride of each
  // operand along them.
  SmallVector<unsigned> peelable;
  llvm::append_range(peelable, classes->batch);
  llvm::append_range(peelable, classes->m);
  llvm::append_range(peelable, classes->n);
  auto peeledLoop = [&](unsigned d) {
    PeeledLoop loop;
    loop.extent = ranges[d];
    for (unsigned operand = 0; operand < 3; ++operand)
      if (std::optional<unsigned> pos =
              maps[operand].getResultPosition(getAffineDimExpr(d, ctx)))
        loop.stride[operand] = strides[operand][*pos];
    return loop;
  };

  // Flatten each class in the order of its reference operand (C for batch,
  // m and n; A for k); every other operand must hold it in the same order.
  auto tryPeeling = [&](ArrayRef<unsigned> peeled) -> std::optional<GemmShape> {
    auto kept = [&](ArrayRef<unsigned> dims) {
      SmallVector<unsigned> rest;
      for (unsigned d : dims)
        if (!llvm::is_contained(peeled, d))
          rest.push_back(d);
      return rest;
    };
    SmallVector<unsigned> batch = orderBy(kept(classes->batch), maps[2]);
    SmallVector<unsigned> m = orderBy(kept(classes->m), maps[2]);
    SmallVector<unsigned> n = orderBy(kept(classes->n), maps[2]);
    SmallVector<unsigned> k = orderBy(classes->k, maps[0]);
    auto group = [&](ArrayRef<unsigned> dims, unsigned operand) {
      return flattenGroup(dims, maps[operand], types[operand].getShape(),
                          strides[operand]);
    };
    auto bA = group(batch, 0), bB = group(batch, 1), bC = group(batch, 2);
    auto mA = group(m, 0), mC = group(m, 2);
    auto nB = group(n, 1), nC = group(n, 2);
    auto kA = group(k, 0), kB = group(k, 1);
    if (!bA || !bB || !bC || !mA || !mC || !nB || !nC || !kA || !kB)
      return std::nullopt;
    GemmShape gemm;
    gemm.batch = bC->size;
    gemm.batchStride[0] = bA->stride;
    gemm.batchStride[1] = bB->stride;
    gemm.batchStride[2] = bC->stride;
    gemm.a = {mA->size, kA->size, mA->stride, kA->stride};
    gemm.b = {kB->size, nB->size, kB->stride, nB->stride};
    gemm.c = {mC->size, nC->size, mC->stride, nC->stride};
    for (unsigned d : peeled)
      gemm.loops.push_back(peeledLoop(d));
    return normalizeForBlas(gemm, swapped);
  };

  // Every subset of the peelable dims, fewest calls first (the empty set,
  // one call, first); with more than 8 such dims only the empty set.
  unsigned numMasks = peelable.size() <= 8 ? 1u << peelable.size() : 1u;
  SmallVector<std::pair<int64_t, SmallVector<unsigned>>> subsets;
  for (unsigned mask = 0; mask < numMasks; ++mask) {
    int64_t calls = 1;
    SmallVector<unsigned> peeled;
    for (auto [i, d] : llvm::enumerate(peelable))
      if (mask & (1u << i)) {
        calls *= ranges[d];
        peeled.push_back(d);
      }
    subsets.push_back({calls, std::move(peeled)});
  }
  llvm::stable_sort(subsets, llvm::less_first());
  for (auto &[calls, peeled] : subsets) {
    std::optional<GemmShape> gemm = tryPeeling(peeled);
    if (!gemm)
      continue;
    // More calls only make them smaller. On the CPU every product of a
    // batch is a call of its own too (tra_exec_sgemm loops over them, and
    // OpenBLAS locks its buffer pool per call: the decoding step's 768
    // rotary products of 12 x 2 x 2 cost more than its attention); cuBLAS
    // takes a batch in one strided call.
    int64_t products = calls * (target.cuda ? 1 : gemm->batch);
    if (products > 1 && gemm->matrixFlops() < kMinMatrixFlops)
      return std::nullopt;
    return gemm;
  }
  return std::nullopt;
}

/// Returns the bytes of one element of `memref`.
static int64_t getElementBytes(Value memref) {
  return cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
}

/// Returns the function type of `tra_exec_sgemm` (or, for the GPU, of
/// `tra_cuda_gemm`: the same with the element type first).
static FunctionType gemmType(MLIRContext *ctx, bool takesTypes) {
  Builder b(ctx);
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> args = {i64, i64, i64, i64, i64, i64, f32, ptr, i64,
                            i64, ptr, i64, i64, f32, ptr, i64, i64};
  if (takesTypes)
    args.insert(args.begin(), {i64, i64});
  return b.getFunctionType(args, {});
}

FailureOr<func::FuncOp>
tra::blas::getOrInsertRuntimeFunction(ModuleOp module, StringRef name,
                                      FunctionType type) {
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    if (!func || func.getFunctionType() != type)
      return existing->emitError("symbol '")
             << name << "' is reserved for the BLAS runtime function";
    return func;
  }
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

/// Returns the declaration of the target's GEMM in `module`, adding it if
/// needed; fails with a diagnostic if the name is taken by something else.
static FailureOr<func::FuncOp>
getOrInsertGemm(ModuleOp module, const BlasTarget &target, Type input) {
  return tra::blas::getOrInsertRuntimeFunction(
      module, target.callee(input),
      gemmType(module.getContext(), target.takesTypes(input)));
}

bool tra::blas::foldZeroFill(Operation *op, Value output) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getOutputs()[0] != output ||
      !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return false;
  fill.erase();
  return true;
}

/// tra lowers a bf16 (f16) einsum to a product accumulated from zero in an
/// f32 buffer `acc`, then an elementwise truncation into the result. If the
/// op after `op` is that truncation and the only reader of `acc`, returns it:
/// cuBLAS can write the result's type itself (accumulating in f32 and
/// rounding once to nearest even, as the truncation does).
static linalg::GenericOp findNarrowingConsumer(linalg::LinalgOp op, Value acc) {
  auto accType = cast<MemRefType>(acc.getType());
  Type input = cast<MemRefType>(op->getOperand(0).getType()).getElementType();
  if (!accType.getElementType().isF32() || input.isF32() ||
      !accType.getLayout().isIdentity())
    return {};
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInputs()[0] != acc)
    return {};
  auto outType = dyn_cast<MemRefType>(generic.getDpsInits()[0].getType());
  if (!outType || outType.getShape() != accType.getShape() ||
      !outType.getLayout().isIdentity() || outType.getElementType() != input)
    return {};
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !llvm::all_of(generic.getIteratorTypesArray(),
                    linalg::isParallelIterator))
    return {};
  Block &body = generic.getRegion().front();
  auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 2 || !trunc || !yield ||
      trunc.getIn() != body.getArgument(0) || trunc.getType() != input ||
      trunc.getRoundingmodeAttr() || yield.getValues()[0] != trunc.getResult())
    return {};
  for (Operation *user : acc.getUsers())
    if (user != op.getOperation() && user != generic.getOperation() &&
        !isa<memref::DeallocOp>(user))
      return {};
  return generic;
}

/// Replaces `op` by a call to `gemmFunc` computing `gemm` (normalized by
/// `normalizeForBlas`; `swapped` says whether A and B trade places).
static void replaceWithGemm(linalg::LinalgOp op, const GemmShape &gemm,
                            bool swapped, func::FuncOp gemmFunc,
                            const BlasTarget &target) {
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  if (swapped)
    std::swap(a, b);
  BlasMatrix aLayout = *blasLayout(gemm.a), bLayout = *blasLayout(gemm.b);
  BlasMatrix cLayout = *blasLayout(gemm.c);

  OpBuilder builder(op);
  Location loc = op.getLoc();
  bool zeroInit = tra::blas::foldZeroFill(op, c);
  // GPU: cuBLAS writes a bf16/f16 result directly instead of an f32
  // accumulator that a kernel then converts.
  linalg::GenericOp narrowing =
      target.cuda && zeroInit ? findNarrowingConsumer(op, c) : nullptr;
  if (narrowing)
    c = narrowing.getDpsInits()[0];
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(builder, loc, v, 64);
  };
  auto f32 = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(builder, loc, builder.getF32Type(),
                                          APFloat(v));
  };
  // The scalar arguments, outside the peeled loops; the pointers (null
  // here) are set in the innermost loop.
  constexpr unsigned kPointerArg[3] = {7, 10, 14};
  SmallVector<Value> args = {i64(gemm.batch),
                             i64(aLayout.transposed),
                             i64(bLayout.transposed),
                             i64(gemm.c.rows),
                             i64(gemm.c.cols),
                             i64(gemm.a.cols),
                             f32(1.0f),
                             nullptr,
                             i64(aLayout.ld),
                             i64(gemm.batchStride[0]),
                             nullptr,
                             i64(bLayout.ld),
                             i64(gemm.batchStride[1]),
                             f32(zeroInit ? 0.0f : 1.0f),
                             nullptr,
                             i64(cLayout.ld),
                             i64(gemm.batchStride[2])};
  // The operands' first elements, then offset by the peeled loops.
  Value address[3] = {tra::getElementAddress(builder, loc, a),
                      tra::getElementAddress(builder, loc, b),
                      tra::getElementAddress(builder, loc, c)};
  if (!gemm.loops.empty()) {
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    for (const PeeledLoop &loop : gemm.loops) {
      Value extent = arith::ConstantIndexOp::create(builder, loc, loop.extent);
      auto forOp = scf::ForOp::create(builder, loc, zero, extent, one);
      builder.setInsertionPointToStart(forOp.getBody());
      for (unsigned operand = 0; operand < 3; ++operand) {
        if (loop.stride[operand] == 0)
          continue;
        Value operandValue = operand == 0 ? a : operand == 1 ? b : c;
        Value bytes = arith::ConstantIndexOp::create(
            builder, loc, loop.stride[operand] * getElementBytes(operandValue));
        Value offset =
            arith::MulIOp::create(builder, loc, forOp.getInductionVar(), bytes);
        address[operand] =
            arith::AddIOp::create(builder, loc, address[operand], offset);
      }
    }
  }
  for (unsigned operand = 0; operand < 3; ++operand)
    args[kPointerArg[operand]] =
        tra::toLLVMPointer(builder, loc, address[operand]);
  Type input = cast<MemRefType>(a.getType()).getElementType();
  if (target.takesTypes(input)) {
    Type output = cast<MemRefType>(c.getType()).getElementType();
    args.insert(args.begin(), {i64(*getGemmElementType(input, target)),
                               i64(*getGemmElementType(output, target))});
  }
  func::CallOp::create(builder, loc, gemmFunc, args);
  op->erase();
  if (narrowing)
    narrowing->erase();
}

namespace {
struct ConvertLinalgToBLASPass
    : public tra::impl::ConvertLinalgToBLASPassBase<ConvertLinalgToBLASPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    BlasTarget blasTarget;
    if (target == "cuda")
      blasTarget.cuda = true;
    else if (target != "cpu") {
      module.emitError("tra-linalg-to-blas: unknown target '")
          << target << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    struct Match {
      linalg::LinalgOp op;
      GemmShape gemm;
      bool swapped;
    };
    SmallVector<Match> matches;
    // Products by Q8_0 weights (the CPU runtime's; on a GPU they stay
    // generated kernels).
    SmallVector<std::pair<linalg::LinalgOp, tra::blas::Q8Gemm>> q8Matches;
    module.walk([&](linalg::LinalgOp op) {
      if (!blasTarget.cuda)
        if (std::optional<tra::blas::Q8Gemm> q8 = tra::blas::matchQ8Gemm(op)) {
          if (q8->m * q8->n * q8->blocks * 32 >= minFlops)
            q8Matches.push_back({op, *q8});
          return;
        }
      bool swapped = false;
      std::optional<GemmShape> gemm =
          analyzeContraction(op, swapped, blasTarget);
      if (!gemm)
        return;
      int64_t flops = gemm->calls() * gemm->batch * gemm->matrixFlops();
      if (flops >= minFlops)
        matches.push_back({op, *gemm, swapped});
    });
    for (auto &[op, q8] : q8Matches)
      if (failed(tra::blas::replaceWithQ8Gemm(module, op, q8)))
        return signalPassFailure();
    for (Match &match : matches) {
      Type input =
          cast<ShapedType>(match.op->getOperand(0).getType()).getElementType();
      FailureOr<func::FuncOp> gemmFunc =
          getOrInsertGemm(module, blasTarget, input);
      if (failed(gemmFunc))
        return signalPassFailure();
      replaceWithGemm(match.op, match.gemm, match.swapped, *gemmFunc,
                      blasTarget);
    }
  }
};
} // namespace
