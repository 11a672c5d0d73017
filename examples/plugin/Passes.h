//===- Passes.h - Passes of the example plugin ------------------*- C++ -*-===//

#ifndef TRA_EXAMPLE_PASSES_H
#define TRA_EXAMPLE_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tra_example {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"

} // namespace tra_example
} // namespace mlir

#endif // TRA_EXAMPLE_PASSES_H
