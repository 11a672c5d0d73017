//===- ExpandArith.cpp - Arith ops the LLVM conversion does not lower -----===//
//
// `arith-expand` rewrites, besides the ops `convert-arith-to-llvm` cannot
// lower, `arith.maximumf`/`minimumf` into compares and selects. LLVM then
// sees a select chain instead of `llvm.maximum`, and its loop vectorizer does
// not recognize a max reduction (a softmax's row maximum ran scalar, with a
// NaN test per element). This pass expands only what must be expanded:
// signed/unsigned ceil and floor divisions, and bf16 arithmetic and casts.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_EXPANDARITHPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
struct ExpandArithPass
    : public tra::impl::ExpandArithPassBase<ExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
