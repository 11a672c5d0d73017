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
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace mlir {
class ModuleOp;
namespace tra {

/// The attribute `tra-prepare-entry` sets on an entry function: its number
/// of arguments (an i64). After `buffer-results-to-out-params` the
/// arguments from this index on are the out-parameters of its results.
inline constexpr llvm::StringLiteral kEntryInputsAttrName = "tra.entry_inputs";

/// The attribute `tra-alias-entry-outputs` sets on an entry function (a
/// DenseI64ArrayAttr): for each output, the index of the input whose buffer
/// the caller may also pass as the output's, or -1.
inline constexpr llvm::StringLiteral kOutputAliasesAttrName =
    "tra.output_aliases";

#define GEN_PASS_DECL
#include "tra/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tra/Transforms/Passes.h.inc"

} // namespace tra
} // namespace mlir

#endif // TRA_TRANSFORMS_PASSES_H
