//===- ModuleFile.h - Reading a model file safely ---------------*- C++ -*-===//
//
// MLIR's parser descends recursively into every bracket, brace, parenthesis
// and angle bracket, so text nested tens of thousands of levels deep
// overflows the stack inside the parser. The tools check the nesting of the
// text before they hand it to the parser, and refuse deeper text with a
// diagnostic at the place where it gets too deep.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_PARSE_MODULEFILE_H
#define TRA_PARSE_MODULEFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace mlir::tra {

/// The deepest nesting of brackets, braces, parentheses and angle brackets
/// the tools read. Models nest a few levels (a module, a function, a map
/// body, a type); the parser needs far less stack than this allows.
inline constexpr unsigned kMaxNestingDepth = 256;

/// The offset in `text` of the opening character that makes the nesting
/// deeper than `limit`, or none. Brackets inside string literals and `//`
/// comments do not count, nor do the `>` of `->`, `>=` and the `<` of `<=`.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text,
                                           unsigned limit = kMaxNestingDepth);

/// The message for text nested deeper than `limit`.
std::string describeExcessiveNesting(unsigned limit = kMaxNestingDepth);

/// Checks the main buffer of `sourceMgr`; on excessive nesting emits an error
/// at that place through `context`'s diagnostics and fails.
LogicalResult checkNestingDepth(llvm::SourceMgr &sourceMgr,
                                MLIRContext *context,
                                unsigned limit = kMaxNestingDepth);

/// Checks the nesting of the main buffer of `sourceMgr`, then parses it as a
/// module (null after a diagnostic if either fails).
OwningOpRef<ModuleOp> parseModuleFile(llvm::SourceMgr &sourceMgr,
                                      const ParserConfig &config);

/// parseModuleFile on `text`, named `bufferName` in diagnostics.
OwningOpRef<ModuleOp> parseModuleText(llvm::StringRef text,
                                      MLIRContext *context,
                                      llvm::StringRef bufferName);

} // namespace mlir::tra

#endif // TRA_PARSE_MODULEFILE_H
