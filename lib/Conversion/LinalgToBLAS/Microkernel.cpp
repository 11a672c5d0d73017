//===- Microkernel.cpp - The CPU runtime's GEMM micro-kernel --------------===//
//
// tra-emit-cpu-microkernels (Passes.td): in a module that calls the CPU
// runtime's products, defines the micro-kernel of the runtime's packed GEMM
// (runtime/exec/PackedGemm.cpp) with the vector dialect, so that LLVM
// compiles it for the program's target CPU: a `vector.outerproduct` per step
// of k into a vector<8x32xf32> accumulator, then a masked epilogue. The
// layout of the packed slivers and the meaning of the arguments are the
// runtime's (ABI.h, tra_exec_microkernel_f32_8x32).
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

namespace {
struct EmitCPUMicrokernelsPass
    : tra::impl::EmitCPUMicrokernelsPassBase<EmitCPUMicrokernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (Operation *existing =
            SymbolTable::lookupSymbolIn(module, kMicrokernelName)) {
      auto func = dyn_cast<func::FuncOp>(existing);
      if (!func ||
          func.getFunctionType() != getMicrokernelType(&getContext())) {
        existing->emitError("symbol '")
            << kMicrokernelName
            << "' is reserved for the runtime's GEMM micro-kernel";
        return signalPassFailure();
      }
      // A declaration gets the body; a definition stays as it is.
      if (func.isExternal()) {
        func.setPublic();
        func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      UnitAttr::get(&getContext()));
        buildMicrokernel(func);
      }
      return;
    }
    bool callsProducts = llvm::any_of(kProductFunctions, [&](StringRef name) {
      return SymbolTable::lookupSymbolIn(module, name) != nullptr;
    });
    if (!callsProducts)
      return;
    auto b = OpBuilder::atBlockEnd(module.getBody());
    auto func = func::FuncOp::create(b, module.getLoc(), kMicrokernelName,
                                     getMicrokernelType(&getContext()));
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  b.getUnitAttr());
    buildMicrokernel(func);
  }
};
} // namespace
