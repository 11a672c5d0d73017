//===- Passes.h - Decomposition optimizer passes ----------------*- C++ -*-===//

#ifndef TRA_OPTIMIZER_PASSES_H
#define TRA_OPTIMIZER_PASSES_H

#include "tra/Dialect/Plan/IR/PlanDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace tra {

#define GEN_PASS_DECL
#include "tra/Optimizer/Passes.h.inc"

/// Registers the passes of the optimizer (tra-assign-partitions,
/// tra-insert-repartitions, tra-decompose, tra-verify-plan) with the pass
/// registry; the pipeline that chains them is in Pipeline.h.
#define GEN_PASS_REGISTRATION
#include "tra/Optimizer/Passes.h.inc"

} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_PASSES_H
