//===- AttachLoopAnnotations.cpp - Loop annotations onto LLVM branches ----===//
//
// `convert-scf-to-cf` copies the LLVM dialect's attributes of an `scf.for`
// (`llvm.loop_annotation`, set by tra-promote-accumulators) onto the loop's
// latch branch, and `convert-cf-to-llvm` keeps them under the same name on
// the `llvm.br`. Translation to LLVM IR reads only the branch's
// `loop_annotation` property, so without this pass the annotation would be
// dropped without a word.
//
//===----------------------------------------------------------------------===//

#include "tra/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_ATTACHLOOPANNOTATIONSPASS
#include "tra/Transforms/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;

namespace {
struct AttachLoopAnnotationsPass
    : public tra::impl::AttachLoopAnnotationsPassBase<
          AttachLoopAnnotationsPass> {
  void runOnOperation() override {
    constexpr llvm::StringLiteral kName = LLVM::LoopAnnotationAttr::name;
    getOperation()->walk([&](Operation *op) {
      auto annotation = op->getAttrOfType<LLVM::LoopAnnotationAttr>(kName);
      if (!annotation)
        return;
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        br.setLoopAnnotationAttr(annotation);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        condBr.setLoopAnnotationAttr(annotation);
      else
        return;
      op->removeDiscardableAttr(kName);
    });
  }
};
} // namespace
