//===- PrivatizeFillInits.cpp - One linalg.fill init per linalg op --------===//
//
// CSE leaves one zero-filled tensor as the init of many linalg ops; one-shot
// bufferization must then copy the filled buffer for each op (the others
// still read it). Cloning the fill in front of each op that writes into it
// lets every op bufferize in place, and keeps the fill right before a
// contraction so that tra-linalg-to-blas folds it into beta = 0.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_PRIVATIZEFILLINITSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
struct PrivatizeFillInitsPass
    : public tra::impl::PrivatizeFillInitsPassBase<PrivatizeFillInitsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> shared;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->hasOneUse() &&
          !fill->use_empty())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared) {
      Value result = fill.getResult(0);
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : result.getUses()) {
        auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
        if (user && user.isDpsInit(&use))
          inits.push_back(&use);
      }
      for (OpOperand *use : inits) {
        OpBuilder builder(use->getOwner());
        use->set(builder.clone(*fill)->getResult(0));
      }
      if (fill->use_empty())
        fill->erase();
    }
  }
};
} // namespace
