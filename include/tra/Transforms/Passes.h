//===- Passes.h - tra transforms --------------------------------*- C++ -*-===//
//
// Declarations of the passes that transform IR within its dialects on the
// way to LLVM (see Passes.td), and their registration with the pass
// registry.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TRANSFORMS_PASSES_H
#define TRA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
class ModuleOp;
namespace tra {

#define GEN_PASS_DECL
#include "tra/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tra/Transforms/Passes.h.inc"

} // namespace tra
} // namespace mlir

#endif // TRA_TRANSFORMS_PASSES_H
