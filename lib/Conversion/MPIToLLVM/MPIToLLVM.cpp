//===- MPIToLLVM.cpp - The mpi dialect to LLVM calls ----------------------===//

#include "tra/Conversion/Passes.h"
#include "tra/Dialect/Comm/IR/Comm.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_CONVERTMPITOLLVM
#include "tra/Conversion/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
struct ConvertMPIToLLVMPass
    : public mlir::tra::impl::ConvertMPIToLLVMBase<ConvertMPIToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    RewritePatternSet patterns(&getContext());
    mpi::populateMPIToLLVMConversionPatterns(converter, patterns);
    ConversionTarget target(getContext());
    target.addIllegalDialect<mpi::MPIDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    fixOpenMPIOpSymbols(module);
  }

  /// The upstream lowering names Open MPI's predefined reduction ops
  /// `ompi_mpi_sum`, ...; Open MPI exports them as `ompi_mpi_op_sum`, ...
  /// (MPI_SUM is `&ompi_mpi_op_sum` in its mpi.h). Renames the external
  /// globals so that the program links.
  static void fixOpenMPIOpSymbols(ModuleOp module) {
    static constexpr llvm::StringLiteral kOps[] = {
        "no_op", "max", "min",  "sum",  "prod",   "land",   "band",
        "lor",   "bor", "lxor", "bxor", "minloc", "maxloc", "replace"};
    SymbolTable symbols(module);
    for (StringRef op : kOps) {
      std::string wrong = ("ompi_mpi_" + op).str();
      auto global = symbols.lookup<LLVM::GlobalOp>(wrong);
      if (!global)
        continue;
      std::string right = ("ompi_mpi_op_" + op).str();
      if (failed(symbols.rename(global, right)))
        global.emitError("cannot rename @") << wrong << " to @" << right;
    }
  }
};
} // namespace
