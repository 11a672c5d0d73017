//===- ReportFailedChecks.cpp - Failed checks reported, not aborted -------===//
//
// Rewrites the cf.assert of run-time checks into a call of the runtime's
// tra_exec_check_failed on the failing path, after which the code goes on:
// the runtime, not a signal, ends the run (runtime/exec/Checks.cpp).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_REPORTFAILEDCHECKSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
/// The runtime function a failed check calls (runtime/exec/ABI.h).
constexpr llvm::StringLiteral kCheckFailed = "tra_exec_check_failed";

struct ReportFailedChecksPass
    : public tra::impl::ReportFailedChecksPassBase<ReportFailedChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    // Only the module's own functions: GPU kernel modules lower their
    // asserts themselves.
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;

    MLIRContext *context = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto callee = module.lookupSymbol<func::FuncOp>(kCheckFailed);
    if (!callee) {
      callee = func::FuncOp::create(top, module.getLoc(), kCheckFailed,
                                    FunctionType::get(context, {ptrType}, {}));
      callee.setPrivate();
    } else if (callee.getFunctionType() !=
               FunctionType::get(context, {ptrType}, {})) {
      callee.emitOpError() << "has the name of the runtime's " << kCheckFailed
                           << " but another type";
      return signalPassFailure();
    }

    // One constant string per distinct message.
    llvm::StringMap<LLVM::GlobalOp> messages;
    auto messageGlobal = [&](StringRef message, Location loc) {
      LLVM::GlobalOp &global = messages[message];
      if (global)
        return global;
      std::string text = message.str();
      text.push_back('\0');
      auto type =
          LLVM::LLVMArrayType::get(IntegerType::get(context, 8), text.size());
      std::string name;
      for (unsigned i = messages.size() - 1;; ++i) {
        name = "tra_check_message_" + std::to_string(i);
        if (!module.lookupSymbol(name))
          break;
      }
      global = LLVM::GlobalOp::create(top, loc, type, /*isConstant=*/true,
                                      LLVM::Linkage::Internal, name,
                                      top.getStringAttr(text));
      return global;
    };

    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      Block *block = op->getBlock();
      Block *rest = block->splitBlock(op->getIterator());
      Block *failed = new Block();
      block->getParent()->getBlocks().insert(rest->getIterator(), failed);

      OpBuilder b = OpBuilder::atBlockEnd(block);
      cf::CondBranchOp::create(b, loc, op.getArg(), rest, ValueRange{}, failed,
                               ValueRange{});
      b.setInsertionPointToEnd(failed);
      Value message =
          LLVM::AddressOfOp::create(b, loc, messageGlobal(op.getMsg(), loc));
      func::CallOp::create(b, loc, callee, ValueRange{message});
      cf::BranchOp::create(b, loc, rest);
      op->erase();
    }
  }
};
} // namespace
