//===- Passes.h - tra conversion passes -------------------------*- C++ -*-===//
//
// Declarations of the passes that lower model-level tra IR to upstream
// dialects (see Passes.td), and their registration with the pass registry.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CONVERSION_PASSES_H
#define TRA_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
class ModuleOp;
namespace tra {

#define GEN_PASS_DECL
#include "tra/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tra/Conversion/Passes.h.inc"

} // namespace tra
} // namespace mlir

#endif // TRA_CONVERSION_PASSES_H
