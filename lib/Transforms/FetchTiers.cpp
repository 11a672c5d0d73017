//===- FetchTiers.cpp - Fetch the tiles a plan keeps in a memory tier -----===//
//
// An argument with `tra_plan.tier` lives in a memory tier of the node; each
// operation that reads it gets a tra_comm.fetch of it right before it (see
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
        if (!isa<comm::FetchOp>(user) && !llvm::is_contained(readers, user))
          readers.push_back(user);
      for (Operation *reader : readers) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(reader);
        if (slice && slice.getSource() == arg &&
            slice.getResultType().hasStaticShape()) {
          if (llvm::all_of(slice->getUsers(), llvm::IsaPred<comm::FetchOp>))
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
  }
};
} // namespace
