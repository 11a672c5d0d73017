//===- Distributed.h - Programs that run as one MPI job ---------*- C++ -*-===//
//
// A planned module (every function planned for N devices, see
// tra-decompose) becomes one program per rank (tra-localize), lowered like a
// one-device program except that its tile moves go to the mpi dialect and
// the tra MPI runtime; the descriptor lists every rank's program and the
// tiles it reads and writes; the executable links the MPI driver
// (runtime/mpi/MainMPI.cpp). Run it with `mpirun -np N`.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TARGET_DISTRIBUTED_H
#define TRA_TARGET_DISTRIBUTED_H

#include "tra/Target/CodegenOptions.h"
#include "tra/Target/EntrySignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace tra {

/// Splits the entry of the planned `module` into one function per rank
/// (tra-localize) and lowers them all to the LLVM dialect, their tile moves
/// to MPI. Returns the signatures; `module` is lowered in place.
FailureOr<DistributedSignature>
lowerDistributedToLLVMDialect(ModuleOp module, const CodegenOptions &options);

/// Compiles a planned `module` to a distributed object / executable.
LogicalResult compileDistributedToObject(ModuleOp module, StringRef output,
                                         const CodegenOptions &options);
LogicalResult compileDistributedToExecutable(ModuleOp module, StringRef output,
                                             const CodegenOptions &options);

/// Compiles a planned `module` (see compileDistributedToObject) into the
/// shared library `output`: the descriptor lists every rank's program
/// (`TraExecRankProgram`). Its MPI calls are left to the MPI runtime of the
/// process that loads it (tra-llama-worker, linked with runtime/mpi and
/// exporting its symbols), so that the loader and the library share one MPI
/// state. `module` is lowered in place.
LogicalResult compileDistributedToSharedLibrary(ModuleOp module,
                                                StringRef output,
                                                const CodegenOptions &options);

} // namespace tra
} // namespace mlir

#endif // TRA_TARGET_DISTRIBUTED_H
