//===- FuseElementwise.cpp - Elementwise fusion without recomputation -----===//
//
// Elementwise chains become one loop nest per output: a producer generic is
// fused into its only consumer when the consumer reads each of its elements
// exactly once, so fusion never multiplies work and never turns a
// linalg.contract (a BLAS candidate) into a generic.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

/// Returns true if the producer of `operand` may be fused into its owner.
static bool shouldFuse(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || !producer->hasOneUse())
    return false;
  if (producer.getNumParallelLoops() != producer.getNumLoops())
    return false;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

namespace {
struct FuseElementwisePass
    : public tra::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
