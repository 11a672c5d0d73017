//===- PrepareEntry.cpp - Mark and check the entry function ---------------===//
//
// The entry function is what the executable runtime (or an embedding C
// program) calls: it gets the C interface, its arguments are never written
// by the generated code, and its signature must be one the runtime can feed
// from .npy and safetensors files.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_PREPAREENTRYPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// Returns true if executables can read and write tensors of `type`.
static bool isSupportedElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isInteger(64) ||
         type.isInteger(32) || type.isInteger(1) || type.isInteger(8);
}

/// Checks that the `what` #`index` of `func`, of type `type`, is a tensor of
/// static shape and supported element type; emits an error otherwise.
static LogicalResult checkBoundaryType(func::FuncOp func, StringRef what,
                                       unsigned index, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return func.emitError("entry function @")
           << func.getName() << " " << what << " #" << index << " has type "
           << type << "; entry arguments and results must be ranked tensors";
  if (!tensor.hasStaticShape())
    return func.emitError("entry function @")
           << func.getName() << " " << what << " #" << index << " has type "
           << type << "; entry tensors must have static shapes";
  if (!isSupportedElementType(tensor.getElementType()))
    return func.emitError("entry function @")
           << func.getName() << " " << what << " #" << index << " has type "
           << type << "; entry element types must be f32, f16, bf16, i64, "
           << "i32 or i1";
  return success();
}

/// Checks the signature of `func` and marks it as an entry function.
static LogicalResult prepareEntry(func::FuncOp func) {
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (failed(checkBoundaryType(func, "argument", i, type)))
      return failure();
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (failed(checkBoundaryType(func, "result", i, type)))
      return failure();
  Builder b(func.getContext());
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                    b.getBoolAttr(false));
  func->setAttr(tra::kEntryInputsAttrName,
                b.getI64IntegerAttr(func.getNumArguments()));
  return success();
}

/// Returns the public functions with a body in `module`.
static SmallVector<func::FuncOp> publicDefinitions(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      funcs.push_back(func);
  return funcs;
}

namespace {
struct PrepareEntryPass
    : public tra::impl::PrepareEntryPassBase<PrepareEntryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    if (!entry.empty()) {
      auto func = module.lookupSymbol<func::FuncOp>(entry);
      if (!func || func.isExternal()) {
        module.emitError("no function @") << entry << " with a body";
        return signalPassFailure();
      }
      entries.push_back(func);
    } else if (auto main = module.lookupSymbol<func::FuncOp>("main");
               main && !main.isExternal()) {
      entries.push_back(main);
    } else {
      entries = publicDefinitions(module);
    }
    for (func::FuncOp func : entries)
      if (failed(prepareEntry(func)))
        return signalPassFailure();
  }
};
} // namespace
