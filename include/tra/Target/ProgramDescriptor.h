//===- ProgramDescriptor.h - The runtime ABI's program descriptor -*- C++
//-*-===//
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

#include "tra/Exec/ParallelCosts.h"
#include "tra/Target/EntrySignature.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
namespace tra {

/// What the descriptor records about where the program runs.
struct ProgramTarget {
  /// The executable's default thread count (0: all cores).
  int64_t numThreads = 0;
  /// An NVIDIA GPU program (TRA_EXEC_CUDA): `run` takes device pointers.
  bool cuda = false;
  /// The hardware description's name.
  std::string hardware;
  /// The CPU's parallel costs (tra/Exec/ParallelCosts.h); invalid (zeros)
  /// when not known.
  ::tra::exec::ParallelCosts parallelCosts;
};

/// Adds `tra_exec_program` (layout TRA_EXEC_ABI_VERSION of
/// runtime/exec/include/tra/Exec/ABI.h) to `module`, the LLVM IR of a program
/// lowered with the C interface of its entry (`_mlir_ciface_<symbol>`), with a
/// `run` function that calls it, `profiledOps` as the names of the ops the
/// program times, and `target`. With `distributed`, the descriptor lists one
/// program per rank instead of one `run`. Fails if an entry's C interface
/// function is missing or does not take one buffer per tensor.
llvm::Error
addProgramDescriptor(llvm::Module &module, const EntrySignature &signature,
                     ArrayRef<std::string> profiledOps,
                     const ProgramTarget &target,
                     const DistributedSignature *distributed = nullptr);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_PROGRAMDESCRIPTOR_H
