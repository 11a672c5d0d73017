//===- LLVMIR.h - A lowered module to LLVM IR -------------------*- C++ -*-===//
//
// Translation of a module in the LLVM dialect to LLVM IR, with the program
// descriptor of its entry (ProgramDescriptor.h) added and the result
// verified.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_LLVMIR_H
#define TRA_TARGET_LLVMIR_H

#include "tra/Target/EntrySignature.h"
#include "tra/Target/ProgramDescriptor.h"

#include <cstdint>
#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
namespace tra {

/// Translates `module` (in the LLVM dialect, the entry lowered with its C
/// interface) to LLVM IR and adds the program descriptor
/// `tra_exec_program` with a `run` function that calls the entry, and
/// `target` (threads, device, hardware). Emits an error and returns null on
/// failure.
std::unique_ptr<llvm::Module>
translateToLLVMIR(ModuleOp module, const EntrySignature &signature,
                  llvm::LLVMContext &context,
                  const ProgramTarget &target = ProgramTarget());

/// translateToLLVMIR for a distributed program: the descriptor lists one
/// program per rank (runtime ABI `TraExecRankProgram`).
std::unique_ptr<llvm::Module> translateDistributedToLLVMIR(
    ModuleOp module, const DistributedSignature &signature,
    llvm::LLVMContext &context, const ProgramTarget &target = ProgramTarget());

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_LLVMIR_H
