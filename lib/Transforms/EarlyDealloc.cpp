//===- EarlyDealloc.cpp - Free buffers after their last use ---------------===//
//
// The deallocation pipeline frees buffers at the end of their block, so a
// model function holds every intermediate until it returns. Moving each
// dealloc right after the last use of the buffer (or of any alias of it)
// lowers the peak memory to what is live at once, and lets the runtime's
// block cache hand the freed block to the next allocation of the same size
// within the same call.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_EARLYDEALLOCPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
/// Whether `user`, an op using a buffer, is one whose reads and writes of
/// the buffer end when the op ends and that lets no alias escape the
/// analysis: ops of the structured dialects the pipeline produces at this
/// point. Calls, raw pointer extraction, returns from the function and ops
/// of other dialects (e.g. MPI, whose non-blocking sends read the buffer
/// later) keep the buffer's dealloc where it is.
bool isKnownUse(Operation *user) {
  if (isa<CallOpInterface, memref::ExtractAlignedPointerAsIndexOp>(user))
    return false;
  if (user->hasTrait<OpTrait::ReturnLike>() &&
      isa<FunctionOpInterface>(user->getParentOp()))
    return false;
  StringRef ns = user->getDialect() ? user->getDialect()->getNamespace() : "";
  return ns == "linalg" || ns == "memref" || ns == "scf" ||
         ns == "bufferization" || ns == "affine" || ns == "arith" ||
         ns == "vector" || ns == "tensor";
}

/// Whether `call` calls a runtime function that starts a non-blocking fetch
/// into a buffer whose address it takes (tra_comm.ifetch, bufferized).
bool isFetchStart(Operation *op) {
  auto call = dyn_cast<CallOpInterface>(op);
  auto callee =
      call ? dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee())
           : SymbolRefAttr();
  return callee && (callee.getLeafReference() == "tra_exec_fetch_start" ||
                    callee.getLeafReference() == "tra_cuda_fetch_start");
}

/// If `pointer` (the address of a buffer) only flows, through address
/// arithmetic, into calls starting non-blocking fetches, appends the uses
/// of their handles (the waits, after which the buffer is no longer
/// written) to `ends` and returns true: the buffer is in use until then.
bool collectFetchWaits(Operation *pointer, SmallVectorImpl<Operation *> &ends) {
  SmallVector<Operation *> worklist = {pointer};
  bool started = false;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers()) {
      if (isFetchStart(user)) {
        started = true;
        for (Operation *wait : user->getUsers())
          ends.push_back(wait);
        continue;
      }
      StringRef ns =
          user->getDialect() ? user->getDialect()->getNamespace() : "";
      if (user->getNumResults() != 1 ||
          !(ns == "arith" || isa<LLVM::IntToPtrOp>(user)))
        return false;
      worklist.push_back(user);
    }
  }
  return started;
}

struct EarlyDeallocPass
    : public tra::impl::EarlyDeallocPassBase<EarlyDeallocPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    if (deallocs.empty())
      return;
    BufferViewFlowAnalysis aliases(getOperation());
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      Operation *last = alloc;
      bool movable = true;
      for (Value alias : aliases.resolve(buffer)) {
        for (Operation *user : alias.getUsers()) {
          if (user == dealloc.getOperation())
            continue;
          // A fetch into the buffer writes it until its wait.
          SmallVector<Operation *> ends = {user};
          bool fetched = isa<memref::ExtractAlignedPointerAsIndexOp>(user) &&
                         collectFetchWaits(user, ends);
          for (Operation *end : ends) {
            Operation *ancestor = block->findAncestorOpInBlock(*end);
            // Used outside the block (an alias flowed out of it), after the
            // dealloc, freed twice, or used in a way the analysis cannot
            // follow.
            if (!ancestor || dealloc->isBeforeInBlock(ancestor) ||
                isa<memref::DeallocOp>(end) || (!fetched && !isKnownUse(end))) {
              movable = false;
              break;
            }
            if (last->isBeforeInBlock(ancestor))
              last = ancestor;
          }
          if (!movable)
            break;
        }
        if (!movable)
          break;
      }
      if (movable && last->getNextNode() != dealloc.getOperation())
        dealloc->moveAfter(last);
    }
  }
};
} // namespace
