//===- AliasEntryOutputs.cpp - Outputs that may share an input's buffer ---===//
//
// An entry function that returns an updated copy of an argument (a KV cache
// with a few new rows) starts, once bufferized, by copying the whole input
// buffer into the output buffer. This pass guards each such copy by a
// comparison of the two buffers, where skipping it when they are the same
// buffer cannot change the results, and records those input/output pairs,
// which the program descriptor hands to callers (lib/Target).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_ALIASENTRYOUTPUTSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
/// A copy of the whole input `input` into the whole output `output` (both
/// argument numbers) that may be skipped when they are one buffer.
struct AliasPair {
  unsigned input;
  unsigned output;
  memref::CopyOp copy;
};
} // namespace

/// Whether every use of `out` other than `copy`, an operation of the entry
/// block, comes after `copy`. A use in another block of the function comes
/// after it: control reaches other blocks only through the entry block's
/// terminator.
static bool hasNoUseBefore(Value out, memref::CopyOp copy) {
  Block *entry = copy->getBlock();
  for (Operation *user : out.getUsers()) {
    if (user == copy.getOperation())
      continue;
    Operation *ancestor = entry->findAncestorOpInBlock(*user);
    if (ancestor && !copy->isBeforeInBlock(ancestor))
      return false;
  }
  return true;
}

/// Returns the argument of `entry` that `value` is, if it is one.
static BlockArgument asArgumentOf(Block &entry, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner() == &entry ? arg : BlockArgument();
}

/// The copies of an input into an output of `func` (inputs are its first
/// `numInputs` arguments) that may be skipped when the caller passes one
/// buffer for both.
static SmallVector<AliasPair> findAliasPairs(func::FuncOp func,
                                             unsigned numInputs) {
  Block &entry = func.getBody().front();
  SmallVector<AliasPair> pairs;
  llvm::SmallDenseSet<unsigned> paired;
  for (auto copy : entry.getOps<memref::CopyOp>()) {
    BlockArgument in = asArgumentOf(entry, copy.getSource());
    BlockArgument out = asArgumentOf(entry, copy.getTarget());
    if (!in || !out || in.getArgNumber() >= numInputs ||
        out.getArgNumber() < numInputs)
      continue;
    // Whole buffers of one dense layout: one buffer can be both.
    auto type = dyn_cast<MemRefType>(in.getType());
    if (!type || type != out.getType() || !type.getLayout().isIdentity())
      continue;
    // Nothing else reads the input (which the output's writes would
    // change), and nothing wrote or viewed the output before.
    if (!in.hasOneUse() || !hasNoUseBefore(out, copy))
      continue;
    // Implied by the two conditions above; kept explicit.
    if (!paired.insert(in.getArgNumber()).second ||
        !paired.insert(out.getArgNumber()).second)
      continue;
    pairs.push_back({in.getArgNumber(), out.getArgNumber(), copy});
  }
  return pairs;
}

/// Runs `pair.copy` only if its buffers differ.
static void guardCopy(AliasPair pair) {
  memref::CopyOp copy = pair.copy;
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  Value source =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, copy.getSource());
  Value target =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, copy.getTarget());
  Value distinct =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, source, target);
  auto guard = scf::IfOp::create(b, loc, distinct, /*withElseRegion=*/false);
  copy->moveBefore(guard.thenBlock()->getTerminator());
}

namespace {
struct AliasEntryOutputsPass
    : public tra::impl::AliasEntryOutputsPassBase<AliasEntryOutputsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Attribute inputsAttr = func->getAttr(tra::kEntryInputsAttrName);
    // Not an entry, still returning values (not bufferized, or results not
    // yet out-parameters), or done already.
    if (!inputsAttr || func.isExternal() || func.getNumResults() != 0 ||
        func->hasAttr(tra::kOutputAliasesAttrName))
      return;
    auto inputs = dyn_cast<IntegerAttr>(inputsAttr);
    if (!inputs || inputs.getInt() < 0 ||
        inputs.getInt() > int64_t(func.getNumArguments())) {
      func.emitError("'") << tra::kEntryInputsAttrName
                          << "' must be an integer between 0 and "
                          << func.getNumArguments()
                          << " (the number of arguments)";
      return signalPassFailure();
    }
    unsigned numInputs = inputs.getInt();
    SmallVector<AliasPair> pairs = findAliasPairs(func, numInputs);
    if (pairs.empty())
      return;
    SmallVector<int64_t> aliases(func.getNumArguments() - numInputs, -1);
    for (const AliasPair &pair : pairs) {
      aliases[pair.output - numInputs] = pair.input;
      guardCopy(pair);
    }
    func->setAttr(tra::kOutputAliasesAttrName,
                  DenseI64ArrayAttr::get(func.getContext(), aliases));
  }
};
} // namespace
