//===- Driver.h - Command line of compiled tra executables ------*- C++ -*-===//
//
//   PROGRAM --input NAME=FILE.npy ... --output NAME=FILE.npy ...
//           [--weights FILE.safetensors|FILE.safetensors.index.json|DIR]...
//           [--threads N] [--profile] [--list] [--output-per-rank]
//
// A distributed program runs under `mpirun -np N` (N ranks, one per device
// of its plan): every rank reads only its tiles of each input (.npy files
// are memory-mapped, safetensors tiles read by byte range), and rank 0
// gathers the outputs and writes them. With --output-per-rank, each rank
// instead writes the tiles it owns of `--output NAME=DIR/STEM.npy` as
// DIR/STEM.rankR.npy and rank 0 writes DIR/STEM.tiles.json, which lists
// every tile's file, rank, offsets and shape (docs/DistributedRuntime.md).
//
// NAME is an argument or result name of the entry function (its `tra.name`).
// Arguments not given with --input are looked up by name in the --weights
// checkpoints. Every input must match the argument's shape and element type
// exactly (a bf16 argument may also be read from an f32 .npy file, since
// NumPy has no bfloat16). Errors name the argument and the file and give
// exit code 1; outputs are written atomically, only after the program ran,
// and all or none of them (each completes in a temporary file before any
// replaces its destination; two --output naming one file are refused).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_DRIVER_H
#define TRA_EXEC_DRIVER_H

#include "tra/Exec/ABI.h"
#include "tra/Runtime/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tra::exec {

/// What a distributed program needs from MPI: the tra MPI runtime
/// (runtime/include/tra/Runtime/Mpi.h) provides it in the executables
/// linked with TRAExecMainMPI; the driver itself does not depend on MPI.
struct Communicator {
  /// Start-up checks (rank count, plan fingerprint); exits on failure.
  void (*init)(int *argc, char ***argv, int64_t requiredRanks,
               uint64_t fingerprint, const char *program);
  int (*rank)(void);
  void (*send)(const void *data, int64_t bytes, int dest, int tag);
  void (*recv)(void *data, int64_t bytes, int source, int tag);
  /// Aborts the whole job with a message naming this rank.
  void (*fatal)(const char *message);
  /// All-reduce over ranks (tra_mpi_allreduce: the dtype and op codes of
  /// tra/Runtime/Mpi.h; null ranks: all of them).
  void (*allreduce)(void *data, int64_t count, int dtype, int op,
                    const int *ranks, int nranks);
  int64_t (*bytesSent)(void);
  int64_t (*messagesSent)(void);
  void (*finalize)(int printProfile);
};

/// What a program compiled for a GPU (device TRA_EXEC_CUDA) needs: device
/// memory and copies. runtime/cuda provides it in the executables linked with
/// TRAExecMainCUDA (runtime/cuda/MainCuda.cpp); the driver itself does not
/// depend on CUDA.
struct Accelerator {
  /// Opens the device; the error says what is missing.
  rt::Status (*initialize)();
  /// "GPU 0 (NVIDIA H200, sm_90)".
  std::string (*describe)();
  rt::Result<void *> (*allocate)(size_t bytes);
  void (*release)(void *pointer);
  rt::Status (*copyToDevice)(void *device, const void *host, size_t bytes);
  /// Returns once the bytes are on the host.
  rt::Status (*copyToHost)(void *host, const void *device, size_t bytes);
  rt::Status (*fillZero)(void *device, size_t bytes);
  /// Waits for the device; returns the first error of its work.
  rt::Status (*synchronize)();
  /// A distributed program: connects this rank's device with the devices of
  /// the other `numRanks` ranks (collective over all of them, after
  /// initialize; `comm` carries the bootstrap). The error says what failed
  /// on this rank.
  rt::Status (*connect)(const Communicator &comm, int numRanks);
  /// Ends what connect started (before the communicator finalizes).
  void (*disconnect)();
  /// What this rank's program moved between the devices since connect, as
  /// --profile prints it ("handed NCCL ...").
  std::string (*describeMoves)();
  /// Optional (may be null): page-locks the host memory of an input the
  /// program fetches from a memory tier, so that its copies to the device
  /// run directly and asynchronously. A failure leaves the memory pageable
  /// (the program runs as well, its fetches slower) and is no error of the
  /// device. What was pinned is unpinned (unpinHost) before it is freed.
  rt::Status (*pinHost)(void *host, size_t bytes);
  void (*unpinHost)(void *host);
};

/// Runs `program` as the command line `argv` asks and returns the process
/// exit code (0 on success, 1 on any error, reported on stderr). A
/// distributed program (numRanks > 0) needs `communicator`: every rank reads
/// only its tiles of the inputs, runs its program, and rank 0 gathers and
/// writes the outputs. A program compiled for a GPU needs `accelerator`: its
/// inputs are copied to device memory, and its outputs back; a distributed
/// one also connects the ranks' devices (Accelerator::connect) first.
int runProgram(const TraExecProgram &program, int argc, char **argv,
               const Communicator *communicator = nullptr,
               const Accelerator *accelerator = nullptr);

} // namespace tra::exec

#endif // TRA_EXEC_DRIVER_H
