//===- Recompute.h - Recomputing activations instead of storing -*- C++ -*-===//
//
// A training step reads many forward activations again in its backward
// pass, long after their forward uses: between the two they hold memory.
// When the activation is cheap to compute again (an elementwise tra.map,
// einsum or convert) and everything it is computed from is alive at the
// late read anyway, computing it again there frees its memory for the
// whole stretch in between at the price of one more elementwise pass.
// recomputeActivations makes that rewrite; assignPartitions applies it
// when the plan that stores everything does not fit, or fits only by
// cutting weights, and keeps whichever plan is faster (see
// docs/CostModel.md).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_RECOMPUTE_H
#define TRA_OPTIMIZER_RECOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace tra {
namespace plan {

/// The unit attribute on an operation recomputeActivations added.
inline constexpr llvm::StringLiteral kRecomputedAttrName = "tra.recomputed";

/// Rewrites `func` so that each elementwise value (tra.map, tra.einsum that
/// reduces no index, tra.convert) whose uses fall in two groups at least
/// `minGap` operations apart is computed again just before the later group,
/// which then reads the copy, provided every operand is alive there anyway
/// (an argument, a fill, or read at or after that point) and the value is
/// not returned. Returns the number of operations added; each carries
/// kRecomputedAttrName. The result is equal, element for element.
unsigned recomputeActivations(func::FuncOp func, unsigned minGap = 16);

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_RECOMPUTE_H
