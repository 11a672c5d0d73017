//===- ProgramDescriptor.h - The runtime ABI's program descriptor -*- C++ -*-===//
//
// Every compiled program defines `tra_exec_program`, a `TraExecProgram`
// (runtime/exec/include/tra/Exec/ABI.h): the entry's name, its tensors, a
// `run` function over an array of buffers, the profiled ops and, for a
// distributed program, one `TraExecRankProgram` per rank. This header writes
// that descriptor into the LLVM IR of a lowered module.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_PROGRAMDESCRIPTOR_H
#define TRA_TARGET_PROGRAMDESCRIPTOR_H

#include "tra/Target/EntrySignature.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
namespace tra {

/// Version of the descriptor layout: TRA_EXEC_ABI_VERSION in
/// runtime/exec/include/tra/Exec/ABI.h.
inline constexpr int64_t kExecABIVersion = 3;

/// Adds `tra_exec_program` to `module`, the LLVM IR of a program lowered with
/// the C interface of its entry (`_mlir_ciface_<symbol>`), with a `run`
/// function that calls it, `profiledOps` as the names of the ops the program
/// times and `numThreads` as the executable's default thread count. With
/// `distributed`, the descriptor lists one program per rank instead of one
/// `run`. Fails if an entry's C interface function is missing or does not
/// take one buffer per tensor.
llvm::Error addProgramDescriptor(llvm::Module &module,
                                 const EntrySignature &signature,
                                 ArrayRef<std::string> profiledOps,
                                 int64_t numThreads,
                                 const DistributedSignature *distributed =
                                     nullptr);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_PROGRAMDESCRIPTOR_H
