//===- Microkernel.cpp - The CPU runtime's product kernels ----------------===//
//
// tra-emit-cpu-microkernels (Passes.td): in a module that calls the CPU
// runtime's products, defines the kernels of those products with the
// vector dialect, so that LLVM compiles them for the program's target CPU:
// the packed GEMM's micro-kernel (runtime/exec/PackedGemm.cpp), a
// `vector.outerproduct` per step of k into a vector<8x32xf32> accumulator
// and a masked epilogue, and the dot products of one-row products
// (runtime/exec/Gemv.cpp), 32-lane FMA steps of widened weights and a
// masked last step, also for Q8_0 weights (runtime/exec/GemmQ8.cpp). The
// layouts and the meaning of the arguments are the runtime's (ABI.h,
// tra_exec_microkernel_f32_8x32, tra_exec_dots_f32_*).
//
//===----------------------------------------------------------------------===//

#include "tra/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_EMITCPUMICROKERNELSPASS
#include "tra/Conversion/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// The kernel's name (runtime/exec's ABI.h) and its block of C.
static constexpr llvm::StringLiteral kMicrokernelName =
    "tra_exec_microkernel_f32_8x32";
static constexpr int64_t kRows = 8, kCols = 32;

/// The runtime functions whose products run through the packed GEMM.
static constexpr llvm::StringLiteral kProductFunctions[] = {
    "tra_exec_sgemm", "tra_exec_gemm_mixed", "tra_exec_gemm_q8"};

/// The kernel's type: (kc, pa, pb, c, ldc, rows, cols, alpha, beta).
static FunctionType getMicrokernelType(MLIRContext *context) {
  Builder b(context);
  Type index = b.getIndexType(), f32 = b.getF32Type();
  auto buffer = MemRefType::get({ShapedType::kDynamic}, f32);
  return b.getFunctionType(
      {index, buffer, buffer, buffer, index, index, index, f32, f32}, {});
}

/// Writes the kernel's body into `func` (which has no blocks).
static void buildMicrokernel(func::FuncOp func) {
  Location loc = func.getLoc();
  Block *entry = func.addEntryBlock();
  auto b = OpBuilder::atBlockBegin(entry);
  Value kc = entry->getArgument(0), pa = entry->getArgument(1),
        pb = entry->getArgument(2), c = entry->getArgument(3),
        ldc = entry->getArgument(4), rows = entry->getArgument(5),
        cols = entry->getArgument(6), alpha = entry->getArgument(7),
        beta = entry->getArgument(8);
  Type f32 = b.getF32Type();
  auto rowType = VectorType::get({kCols}, f32);
  auto columnType = VectorType::get({kRows}, f32);
  auto blockType = VectorType::get({kRows, kCols}, f32);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(0), one = index(1);

  // sums[r][j] = sum over p of pa[p * 8 + r] * pb[p * 32 + j].
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(blockType, b.getF32FloatAttr(0.0f)));
  auto loop = scf::ForOp::create(
      b, loc, zero, kc, one, ValueRange{zeros},
      [&](OpBuilder &nb, Location nloc, Value p, ValueRange iterArgs) {
        Value aIndex = arith::MulIOp::create(nb, nloc, p, index(kRows));
        Value bIndex = arith::MulIOp::create(nb, nloc, p, index(kCols));
        Value aColumn =
            vector::LoadOp::create(nb, nloc, columnType, pa, aIndex);
        Value bRow = vector::LoadOp::create(nb, nloc, rowType, pb, bIndex);
        Value next = vector::OuterProductOp::create(nb, nloc, aColumn, bRow,
                                                    iterArgs[0]);
        scf::YieldOp::create(nb, nloc, next);
      });
  Value sums = loop.getResult(0);

  // C[r][0 .. cols) = alpha * sums[r] + beta * C[r] for r < rows; C is read
  // only when beta is not 0 (it may hold anything, NaN included, otherwise).
  auto maskType = VectorType::get({kCols}, b.getI1Type());
  Value mask = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{cols});
  Value alphas = vector::BroadcastOp::create(b, loc, rowType, alpha);
  Value betas = vector::BroadcastOp::create(b, loc, rowType, beta);
  Value betaZero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value readC =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, beta, betaZero);
  Value rowZeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(0.0f)));
  for (int64_t r = 0; r < kRows; ++r) {
    Value rowIndex = index(r);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         rowIndex, rows);
    auto ifRow = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder rb = ifRow.getThenBodyBuilder();
    Value offset = arith::MulIOp::create(rb, loc, rowIndex, ldc);
    Value row = vector::ExtractOp::create(rb, loc, sums, ArrayRef<int64_t>{r});
    Value scaled = arith::MulFOp::create(rb, loc, alphas, row);
    auto withC = scf::IfOp::create(
        rb, loc, readC,
        [&](OpBuilder &tb, Location tloc) {
          Value old = vector::MaskedLoadOp::create(
              tb, tloc, rowType, c, ValueRange{offset}, mask, rowZeros);
          Value sum = vector::FMAOp::create(tb, tloc, betas, old, scaled);
          scf::YieldOp::create(tb, tloc, sum);
        },
        [&](OpBuilder &eb, Location eloc) {
          scf::YieldOp::create(eb, eloc, scaled);
        });
    vector::MaskedStoreOp::create(rb, loc, c, ValueRange{offset}, mask,
                                  withC.getResult(0));
  }
  func::ReturnOp::create(b, loc);
}

/// The dot products kernel's type for B elements of `element`: (rows, k,
/// a, b, ldb, out).
static FunctionType getDotsType(Type element) {
  MLIRContext *context = element.getContext();
  Builder b(context);
  Type index = b.getIndexType(), f32 = b.getF32Type();
  auto floats = MemRefType::get({ShapedType::kDynamic}, f32);
  return b.getFunctionType({index, index, floats,
                            MemRefType::get({ShapedType::kDynamic}, element),
                            index, floats},
                           {});
}

/// The lanes of one step of a dot product: two 16-lane AVX-512
/// accumulators, four AVX2 ones. Measured on a one-row product by a
/// 32000 x 768 matrix on 2 threads (medians of 6): 32 lanes 0.98-1.19 ms
/// (f32) and 0.50-0.55 ms (f16), 64 lanes 1.22-1.36 and 0.56-0.69, 128
/// lanes 1.33-1.46 and 0.51-0.57, the runtime's intrinsics kernel 1.16-1.34
/// and 0.51-0.55.
static constexpr int64_t kDotLanes = 32;

/// Writes the body of a dot products kernel into `func`: out[j] = sum over
/// i < k of a[i] * b[j * ldb + i] for j < rows, a in f32, b in the
/// function's element type widened with arith.extf, each sum in f32 in any
/// order.
static void buildDots(func::FuncOp func) {
  Location loc = func.getLoc();
  Block *entry = func.addEntryBlock();
  auto b = OpBuilder::atBlockBegin(entry);
  Value rows = entry->getArgument(0), k = entry->getArgument(1),
        a = entry->getArgument(2), bBuffer = entry->getArgument(3),
        ldb = entry->getArgument(4), out = entry->getArgument(5);
  Type f32 = b.getF32Type();
  Type element = cast<MemRefType>(bBuffer.getType()).getElementType();
  auto wideType = VectorType::get({kDotLanes}, f32);
  auto narrowType = VectorType::get({kDotLanes}, element);
  auto maskType = VectorType::get({kDotLanes}, b.getI1Type());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lanes = arith::ConstantIndexOp::create(b, loc, kDotLanes);
  Value tail = arith::RemUIOp::create(b, loc, k, lanes);
  Value mainEnd = arith::SubIOp::create(b, loc, k, tail);
  Value hasTail =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, tail, zero);
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wideType, b.getF32FloatAttr(0.0f)));
  Value narrowZeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(narrowType, b.getZeroAttr(element)));
  Value mask = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{tail});
  auto widen = [&](OpBuilder &nb, Location nloc, Value v) -> Value {
    return element.isF32() ? v : arith::ExtFOp::create(nb, nloc, wideType, v);
  };
  scf::ForOp::create(
      b, loc, zero, rows, one, ValueRange{},
      [&](OpBuilder &rb, Location rloc, Value j, ValueRange) {
        Value base = arith::MulIOp::create(rb, rloc, j, ldb);
        // Whole steps of kDotLanes elements.
        auto loop = scf::ForOp::create(
            rb, rloc, zero, mainEnd, lanes, ValueRange{zeros},
            [&](OpBuilder &nb, Location nloc, Value i, ValueRange iterArgs) {
              Value at = arith::AddIOp::create(nb, nloc, base, i);
              Value av = vector::LoadOp::create(nb, nloc, wideType, a, i);
              Value bv =
                  vector::LoadOp::create(nb, nloc, narrowType, bBuffer, at);
              Value sum = vector::FMAOp::create(
                  nb, nloc, av, widen(nb, nloc, bv), iterArgs[0]);
              scf::YieldOp::create(nb, nloc, sum);
            });
        // The last k % kDotLanes elements, through masked loads (lanes
        // past k read nothing).
        auto withTail = scf::IfOp::create(
            rb, rloc, hasTail,
            [&](OpBuilder &tb, Location tloc) {
              Value at = arith::AddIOp::create(tb, tloc, base, mainEnd);
              Value av = vector::MaskedLoadOp::create(
                  tb, tloc, wideType, a, ValueRange{mainEnd}, mask, zeros);
              Value bv = vector::MaskedLoadOp::create(tb, tloc, narrowType,
                                                      bBuffer, ValueRange{at},
                                                      mask, narrowZeros);
              Value sum = vector::FMAOp::create(
                  tb, tloc, av, widen(tb, tloc, bv), loop.getResult(0));
              scf::YieldOp::create(tb, tloc, sum);
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, loop.getResult(0));
            });
        // In any order: a tree of vector adds, not 32 dependent scalar
        // ones.
        Value sum = vector::ReductionOp::create(
            rb, rloc, vector::CombiningKind::ADD, withTail.getResult(0),
            /*acc=*/Value(), arith::FastMathFlags::reassoc);
        memref::StoreOp::create(rb, rloc, sum, out, ValueRange{j});
        scf::YieldOp::create(rb, rloc);
      });
  func::ReturnOp::create(b, loc);
}

/// Elements of a Q8_0 row that share one scale (runtime/exec/GemmQ8.h).
static constexpr int64_t kQ8Block = 32;

/// How far ahead of its loads the Q8_0 kernel prefetches a row's quants
/// (the runtime's own kernel's distance: GemmQ8.cpp).
static constexpr int64_t kQ8PrefetchBytes = 512;

/// The Q8_0 dot products kernel's type: (rows, blocks, a, q, ldq, scales,
/// lds, out).
static FunctionType getQ8DotsType(MLIRContext *context) {
  Builder b(context);
  Type index = b.getIndexType(), f32 = b.getF32Type();
  auto floats = MemRefType::get({ShapedType::kDynamic}, f32);
  return b.getFunctionType(
      {index, index, floats,
       MemRefType::get({ShapedType::kDynamic}, b.getIntegerType(8)), index,
       MemRefType::get({ShapedType::kDynamic}, b.getF16Type()), index, floats},
      {});
}

/// Writes the body of the Q8_0 dot products kernel into `func`: out[j] =
/// sum over blocks t of scales[j * lds + t] * sum over i < 32 of
/// a[32 t + i] * q[j * ldq + 32 t + i], for j < rows. Per block the quants
/// are widened (arith.sitofp), multiplied by the activations and added,
/// times the block's scale, to one of two accumulators (even and odd
/// blocks: two chains of additions), with a prefetch of the row's quants
/// kQ8PrefetchBytes ahead (clamped to the buffer); each sum in f32 in any
/// order.
static void buildQ8Dots(func::FuncOp func) {
  Location loc = func.getLoc();
  Block *entry = func.addEntryBlock();
  auto b = OpBuilder::atBlockBegin(entry);
  Value rows = entry->getArgument(0), blocks = entry->getArgument(1),
        a = entry->getArgument(2), q = entry->getArgument(3),
        ldq = entry->getArgument(4), scales = entry->getArgument(5),
        lds = entry->getArgument(6), out = entry->getArgument(7);
  Type f32 = b.getF32Type();
  auto wideType = VectorType::get({kQ8Block}, f32);
  auto quantType = VectorType::get({kQ8Block}, b.getIntegerType(8));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value block = arith::ConstantIndexOp::create(b, loc, kQ8Block);
  Value ahead = arith::ConstantIndexOp::create(b, loc, kQ8PrefetchBytes);
  Value lastQuant = arith::SubIOp::create(
      b, loc, memref::DimOp::create(b, loc, q, 0).getResult(), one);
  Value pairsEnd = arith::SubIOp::create(
      b, loc, blocks, arith::RemUIOp::create(b, loc, blocks, two));
  Value odd =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, pairsEnd, blocks);
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wideType, b.getF32FloatAttr(0.0f)));
  // acc + scale(t) * (a . q) over block t of the row at qBase / sBase.
  auto accumulate = [&](OpBuilder &nb, Location nloc, Value qBase, Value sBase,
                        Value t, Value acc) -> Value {
    Value at = arith::MulIOp::create(nb, nloc, t, block);
    Value av = vector::LoadOp::create(nb, nloc, wideType, a, at);
    Value qAt = arith::AddIOp::create(nb, nloc, qBase, at);
    Value qv = vector::LoadOp::create(nb, nloc, quantType, q, qAt);
    Value wide = arith::SIToFPOp::create(nb, nloc, wideType, qv);
    Value sAt = arith::AddIOp::create(nb, nloc, sBase, t);
    Value half = memref::LoadOp::create(nb, nloc, scales, sAt);
    Value scale = arith::ExtFOp::create(nb, nloc, f32, half);
    Value product = arith::MulFOp::create(nb, nloc, av, wide);
    Value splat = vector::BroadcastOp::create(nb, nloc, wideType, scale);
    return vector::FMAOp::create(nb, nloc, product, splat, acc);
  };
  scf::ForOp::create(
      b, loc, zero, rows, one, ValueRange{},
      [&](OpBuilder &rb, Location rloc, Value j, ValueRange) {
        Value qBase = arith::MulIOp::create(rb, rloc, j, ldq);
        Value sBase = arith::MulIOp::create(rb, rloc, j, lds);
        // Pairs of blocks: one 64-byte line of quants.
        auto pairs = scf::ForOp::create(
            rb, rloc, zero, pairsEnd, two, ValueRange{zeros, zeros},
            [&](OpBuilder &nb, Location nloc, Value t, ValueRange acc) {
              Value at = arith::AddIOp::create(
                  nb, nloc, qBase, arith::MulIOp::create(nb, nloc, t, block));
              Value next = arith::MinUIOp::create(
                  nb, nloc, arith::AddIOp::create(nb, nloc, at, ahead),
                  lastQuant);
              memref::PrefetchOp::create(nb, nloc, q, ValueRange{next},
                                         /*isWrite=*/false,
                                         /*localityHint=*/3,
                                         /*isDataCache=*/true);
              Value even = accumulate(nb, nloc, qBase, sBase, t, acc[0]);
              Value oddSum =
                  accumulate(nb, nloc, qBase, sBase,
                             arith::AddIOp::create(nb, nloc, t, one), acc[1]);
              scf::YieldOp::create(nb, nloc, ValueRange{even, oddSum});
            });
        // The last block of an odd count.
        auto last = scf::IfOp::create(
            rb, rloc, odd,
            [&](OpBuilder &tb, Location tloc) {
              scf::YieldOp::create(tb, tloc,
                                   accumulate(tb, tloc, qBase, sBase, pairsEnd,
                                              pairs.getResult(0)));
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, pairs.getResult(0));
            });
        Value both = arith::AddFOp::create(rb, rloc, last.getResult(0),
                                           pairs.getResult(1));
        Value sum = vector::ReductionOp::create(
            rb, rloc, vector::CombiningKind::ADD, both, /*acc=*/Value(),
            arith::FastMathFlags::reassoc);
        memref::StoreOp::create(rb, rloc, sum, out, ValueRange{j});
        scf::YieldOp::create(rb, rloc);
      });
  func::ReturnOp::create(b, loc);
}

namespace {
/// One kernel the pass defines.
struct Kernel {
  StringRef name;
  FunctionType type;
  void (*build)(func::FuncOp);
};

/// Defines `kernel` in `module` unless it is defined already (a declaration
/// gets the body); fails with a diagnostic if the name is taken by
/// something else.
LogicalResult defineKernel(ModuleOp module, const Kernel &kernel) {
  auto func = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(module, kernel.name));
  if (!func) {
    if (Operation *other = SymbolTable::lookupSymbolIn(module, kernel.name))
      return other->emitError("symbol '")
             << kernel.name << "' is reserved for a kernel of the runtime";
    auto b = OpBuilder::atBlockEnd(module.getBody());
    func = func::FuncOp::create(b, module.getLoc(), kernel.name, kernel.type);
  } else if (func.getFunctionType() != kernel.type) {
    return func.emitError("symbol '")
           << kernel.name << "' is reserved for a kernel of the runtime";
  }
  if (!func.isExternal())
    return success();
  func.setPublic();
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(module.getContext()));
  kernel.build(func);
  return success();
}

struct EmitCPUMicrokernelsPass
    : tra::impl::EmitCPUMicrokernelsPassBase<EmitCPUMicrokernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool callsProducts = llvm::any_of(kProductFunctions, [&](StringRef name) {
      return SymbolTable::lookupSymbolIn(module, name) != nullptr;
    });
    if (!callsProducts)
      return;
    MLIRContext *context = &getContext();
    Builder b(context);
    const Kernel kernels[] = {
        {kMicrokernelName, getMicrokernelType(context), buildMicrokernel},
        {"tra_exec_dots_f32_f32", getDotsType(b.getF32Type()), buildDots},
        {"tra_exec_dots_f32_f16", getDotsType(b.getF16Type()), buildDots},
        {"tra_exec_dots_f32_bf16", getDotsType(b.getBF16Type()), buildDots},
        {"tra_exec_dots_f32_q8", getQ8DotsType(context), buildQ8Dots}};
    for (const Kernel &kernel : kernels)
      if (failed(defineKernel(module, kernel)))
        return signalPassFailure();
  }
};
} // namespace
