//===- ObjectFile.h - LLVM IR to a native object file -----------*- C++ -*-===//
//
// The host (or given) CPU's target machine, LLVM's optimization pipeline and
// object emission.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_OBJECTFILE_H
#define TRA_TARGET_OBJECTFILE_H

#include "tra/Target/CodegenOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
namespace tra {

/// Returns a target machine for the host (or `options.cpu`/`features`).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodegenOptions &options);

/// Sets `module`'s target and data layout to `machine`'s and runs LLVM's
/// default optimization pipeline at `optLevel` (0 to 3).
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        unsigned optLevel);

/// Writes `module` as an object file to `path`.
llvm::Error emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                           StringRef path);

/// Creates the target machine of `options`, optimizes `llvmModule` at
/// `options.optLevel` and writes it as an object file to `path`; errors are
/// emitted as diagnostics on `module` (the MLIR module it came from).
LogicalResult compileLLVMModuleToObject(ModuleOp module,
                                        llvm::Module &llvmModule,
                                        const CodegenOptions &options,
                                        StringRef path);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_OBJECTFILE_H
