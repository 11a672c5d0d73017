//===- InstrumentProfile.cpp - Per-op timing calls ------------------------===//
//
// Brackets every model-level op with calls that the executable runtime
// times, and records the ops' descriptions for the program descriptor.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "tra/Dialect/TRA/IR/TRADialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Path.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_INSTRUMENTPROFILEPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

static constexpr llvm::StringLiteral kBeginName = "tra_exec_profile_begin";
static constexpr llvm::StringLiteral kEndName = "tra_exec_profile_end";

/// Returns "OPNAME "SPEC" at FILE:LINE:COL" for `op`.
static std::string describeForProfile(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto spec = op->getAttrOfType<StringAttr>("spec"))
    text += " \"" + spec.str() + "\"";
  if (auto loc = op->getLoc()->findInstanceOf<FileLineColLoc>())
    text += " at " + llvm::sys::path::filename(loc.getFilename()).str() + ":" +
            std::to_string(loc.getLine()) + ":" +
            std::to_string(loc.getColumn());
  return text;
}

/// Returns the declaration `void name(i64)` in `module`, adding it if
/// needed; fails with a diagnostic if the name is taken otherwise.
static FailureOr<func::FuncOp> getOrInsertHook(ModuleOp module,
                                               StringRef name) {
  Builder b(module.getContext());
  FunctionType type = b.getFunctionType({b.getI64Type()}, {});
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    if (!func || func.getFunctionType() != type)
      return existing->emitError("symbol '")
             << name << "' is reserved for the profiling runtime function";
    return func;
  }
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(builder, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

namespace {
struct InstrumentProfilePass
    : public tra::impl::InstrumentProfilePassBase<InstrumentProfilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<tra::TRADialect>(op->getDialect()) &&
          !op->getParentOfType<tra::MapOp>() && !isa<tra::FillOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    FailureOr<func::FuncOp> begin = getOrInsertHook(module, kBeginName);
    FailureOr<func::FuncOp> end = getOrInsertHook(module, kEndName);
    if (failed(begin) || failed(end))
      return signalPassFailure();

    SmallVector<Attribute> names;
    Builder b(module.getContext());
    for (auto [id, op] : llvm::enumerate(ops)) {
      OpBuilder builder(op);
      Value value = arith::ConstantIntOp::create(builder, op->getLoc(), id, 64);
      func::CallOp::create(builder, op->getLoc(), *begin, value);
      builder.setInsertionPointAfter(op);
      func::CallOp::create(builder, op->getLoc(), *end, value);
      names.push_back(b.getStringAttr(describeForProfile(op)));
    }
    module->setAttr("tra.profile_ops", b.getArrayAttr(names));
  }
};
} // namespace
