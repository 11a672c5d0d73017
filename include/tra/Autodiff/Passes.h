//===- Passes.h - tra autodiff passes ---------------------------*- C++ -*-===//

#ifndef TRA_AUTODIFF_PASSES_H
#define TRA_AUTODIFF_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace tra {

#define GEN_PASS_DECL
#include "tra/Autodiff/Passes.h.inc"

/// Registers tra-autodiff with the pass registry.
#define GEN_PASS_REGISTRATION
#include "tra/Autodiff/Passes.h.inc"

} // namespace tra
} // namespace mlir

#endif // TRA_AUTODIFF_PASSES_H
