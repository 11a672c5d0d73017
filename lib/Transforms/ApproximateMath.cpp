//===- ApproximateMath.cpp - Vectorizable f32 math functions --------------===//
//
// LLVM's loop vectorizer vectorizes a loop that calls `llvm.exp.f32`, but
// the x86 back end then calls the scalar libm `expf` once per lane: a
// softmax or SiLU map spends most of its time there. MLIR's polynomial
// approximations rewrite the selected `math` ops on f32 into `arith` code
// (range reduction, a polynomial, exponent bit manipulation) that
// vectorizes like the rest of the loop body.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public tra::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using ApproximateMathPassBase::ApproximateMathPassBase;

  void runOnOperation() override {
    SmallVector<std::string> names(ops.begin(), ops.end());
    if (names.empty())
      names.push_back("exp");
    auto selected = [&](StringRef name) {
      name.consume_front("math.");
      return llvm::is_contained(names, name.str());
    };
    SmallVector<Operation *> matched;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          selected(op->getName().getStringRef()))
        matched.push_back(op);
    });
    if (matched.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, selected);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(matched, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
