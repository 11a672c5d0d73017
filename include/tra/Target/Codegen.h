//===- Codegen.h - Model-level tra to objects, executables, libraries -*- C++
//-*-===//
//
// The whole code generation of a one-device program: a model-level tra
// module is lowered to the LLVM dialect (tra/Pipeline/Pipeline.h),
// translated to LLVM IR with its program descriptor (LLVMIR.h), optimized
// and emitted as an object (ObjectFile.h), and linked with the runtime
// (Link.h) into an executable or a shared library. Distributed programs:
// Distributed.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_CODEGEN_H
#define TRA_TARGET_CODEGEN_H

#include "tra/Target/CodegenOptions.h"
#include "tra/Target/EntrySignature.h"
#include "tra/Target/Link.h"
#include "tra/Target/ProgramDescriptor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir {
namespace tra {

/// Prefix given to every function defined in a compiled module, so that no
/// model function collides with `main` or a C library symbol.
inline constexpr llvm::StringLiteral kModelSymbolPrefix = "tra_model_";

/// Renames every function defined in `module` to kModelSymbolPrefix + name,
/// updating all uses.
LogicalResult prefixModelSymbols(ModuleOp module);

/// What the program descriptor records of `options`: threads, device,
/// hardware.
ProgramTarget getProgramTarget(const CodegenOptions &options);

/// Lowers `module` in place to the LLVM dialect with the `tra-lower-to-llvm`
/// pipeline, exposing `entry` through the C interface.
LogicalResult lowerToLLVMDialect(ModuleOp module, StringRef entry,
                                 const CodegenOptions &options);

/// Finds the entry (`options.entry`), records its signature, prefixes the
/// model symbols and lowers `module` to the LLVM dialect: the first half of
/// every code generation path. The signature's `symbol` is the lowered name;
/// its outputs' `aliasedInput` are what the lowering allows.
FailureOr<EntrySignature>
lowerEntryToLLVMDialect(ModuleOp module, const CodegenOptions &options);

/// Compiles `module` to the object file `output` (no linking).
LogicalResult compileToObject(ModuleOp module, StringRef output,
                              const CodegenOptions &options,
                              EntrySignature *signature = nullptr);

/// Compiles `module` to a temporary object file with `compileObject` and
/// links it with `linkOptions` into the executable (or, with
/// `sharedLibrary`, the shared library) `output`; the shared last step of
/// every executable and library flavour. Errors are emitted as diagnostics.
LogicalResult linkCompiledObject(
    ModuleOp module, StringRef output, const LinkOptions &linkOptions,
    llvm::function_ref<LogicalResult(StringRef object)> compileObject,
    bool sharedLibrary = false);

/// Compiles `module` to the executable `output`: finds the entry, lowers,
/// translates, optimizes, emits an object and links it with the runtime (for
/// the GPU with options.cuda). Errors are emitted as diagnostics. `module` is
/// lowered in place.
LogicalResult compileToExecutable(ModuleOp module, StringRef output,
                                  const CodegenOptions &options);

/// Compiles `module` to the shared library `output`, which defines
/// `tra_exec_program` (the descriptor of runtime/exec's ABI.h) and the
/// runtime functions compiled code calls. `module` is lowered in place.
LogicalResult compileToSharedLibrary(ModuleOp module, StringRef output,
                                     const CodegenOptions &options,
                                     EntrySignature *signature = nullptr);

/// The files `compileToLibrary` writes for `-o output`: output without a
/// trailing ".o", plus ".o", ".h" and ".so".
struct LibraryPaths {
  std::string object, header, sharedLibrary;
};
LibraryPaths getLibraryPaths(StringRef output);

/// `tra-compile --emit=lib`: compiles `module` to an object (to link with
/// the runtime's TRAExec archive), its C header (writeCHeader) and a shared
/// library (the object linked with TRAExec), named by getLibraryPaths.
/// On failure none of the three is left behind.
LogicalResult compileToLibrary(ModuleOp module, StringRef output,
                               const CodegenOptions &options);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_CODEGEN_H
