//===- FetchTiers.cpp - Fetch the tiles a plan keeps in a memory tier -----===//
//
// An argument with `tra_plan.tier` lives in a memory tier of the node; each
// operation that reads it gets a tra_comm.fetch of it right before it, then
// (with `overlap`) made non-blocking and started one reader early (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "tra/Dialect/Comm/IR/Comm.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_FETCHTIERSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;

namespace {
struct FetchTiersPass
    : public mlir::tra::impl::FetchTiersPassBase<FetchTiersPass> {
  using FetchTiersPassBase::FetchTiersPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments()) {
      auto tier = func.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), plan::PlanDialect::kTierAttrName);
      if (!tier)
        continue;
      if (!isa<RankedTensorType>(arg.getType()) ||
          !cast<RankedTensorType>(arg.getType()).hasStaticShape()) {
        func.emitOpError("argument ") << arg.getArgNumber() << " with '"
                                      << plan::PlanDialect::kTierAttrName
                                      << "' must be a tensor of static shape";
        return signalPassFailure();
      }
      if (comm::FetchOp::getTierCode(tier.getValue()) < 0) {
        func.emitOpError("argument ")
            << arg.getArgNumber() << ": '" << tier.getValue()
            << "' is not a memory tier";
        return signalPassFailure();
      }
      // One fetch per reading operation, for all its operands that are
      // this argument (a fetch already there is one). A slice of the argument
      // (a part of a tile moved to another rank, or the part a rank keeps)
      // fetches the slice only.
      SmallVector<Operation *> readers;
      for (Operation *user : arg.getUsers())
        if (!isa<comm::FetchOp, comm::IFetchOp>(user) &&
            !llvm::is_contained(readers, user))
          readers.push_back(user);
      for (Operation *reader : readers) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(reader);
        if (slice && slice.getSource() == arg &&
            slice.getResultType().hasStaticShape()) {
          if (llvm::all_of(slice->getUsers(),
                           llvm::IsaPred<comm::FetchOp, comm::IFetchOp>))
            continue;
          OpBuilder builder(reader->getContext());
          builder.setInsertionPointAfter(slice);
          Value fetched = comm::FetchOp::create(builder, slice.getLoc(),
                                                slice.getType(), slice, tier);
          slice.getResult().replaceAllUsesExcept(fetched,
                                                 fetched.getDefiningOp());
          continue;
        }
        OpBuilder builder(reader);
        Value fetched = comm::FetchOp::create(builder, reader->getLoc(),
                                              arg.getType(), arg, tier);
        reader->replaceUsesOfWith(arg, fetched);
      }
    }
    if (overlap)
      func.walk([](Block *block) { overlapFetches(*block); });
  }

  /// The first operation of `block` that uses `value`, or null.
  static Operation *firstUserIn(Block &block, Value value) {
    Operation *first = nullptr;
    for (Operation *user : value.getUsers()) {
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
        first = ancestor;
    }
    return first;
  }

  /// Whether `value`, used in `block`, is defined before the point right
  /// after `after` (the start of `block` if null).
  static bool isDefinedBefore(Value value, Block &block, Operation *after) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &block)
      return true; // A block argument, or defined around the block.
    return after && (def == after || def->isBeforeInBlock(after));
  }

  /// Makes the fetches of `block` non-blocking: each wait where the fetch
  /// was, each start right after the last fetch of the previous reader
  /// (the first user of a fetch in the block), or at the block's start.
  static void overlapFetches(Block &block) {
    SmallVector<comm::FetchOp> fetches(block.getOps<comm::FetchOp>());
    // Where the starts of the current reader's fetches go, and the reader.
    Operation *after = nullptr;
    Operation *reader = nullptr, *previousEnd = nullptr;
    for (comm::FetchOp fetch : fetches) {
      Operation *user = firstUserIn(block, fetch.getResult());
      if (!reader || user != reader) {
        after = previousEnd;
        reader = user;
      }
      auto type = cast<RankedTensorType>(fetch.getType());
      if (!comm::IFetchOp::isFetchable(fetch.getInput())) {
        previousEnd = fetch;
        continue;
      }
      OpBuilder builder(fetch);
      if (after)
        builder.setInsertionPointAfter(after);
      else
        builder.setInsertionPointToStart(&block);
      // Never before the tile it copies is defined: a slice whose offsets
      // are known there moves along; else the start follows the slice.
      Operation *input = fetch.getInput().getDefiningOp();
      if (input && input->getBlock() == &block &&
          (!after || after->isBeforeInBlock(input))) {
        if (isa<tensor::ExtractSliceOp>(input) &&
            llvm::all_of(input->getOperands(), [&](Value operand) {
              return isDefinedBefore(operand, block, after);
            })) {
          if (after)
            input->moveAfter(after);
          else
            input->moveBefore(&block, block.begin());
        }
        builder.setInsertionPointAfter(input);
      }
      auto start =
          comm::IFetchOp::create(builder, fetch.getLoc(), type,
                                 comm::RequestType::get(builder.getContext()),
                                 fetch.getInput(), fetch.getTier());
      // The next start of this reader's tiles goes after this one: the
      // copies run in the order they start.
      after = start;
      builder.setInsertionPoint(fetch);
      auto wait = comm::WaitOp::create(builder, fetch.getLoc(), Type(type),
                                       start.getRequest(), start.getResult());
      fetch.replaceAllUsesWith(wait.getResult());
      fetch.erase();
      previousEnd = wait;
    }
  }
};
} // namespace
