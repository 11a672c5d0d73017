//===- Library.h - Loading programs compiled into shared libraries -*- C++ -*-//
//
// A shared library compiled by tra defines the program descriptor
// `tra_exec_program` (ABI.h) and the runtime functions its code calls.
// ProgramLibrary loads one into the calling process and checks its
// descriptor; the engine (runtime/engine) runs one-device programs this way
// in tra-llama and the Python package, and the rank programs of a
// distributed one in tra-llama-worker (whose MPI calls resolve to the
// worker's MPI runtime).
// No MLIR or LLVM dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_LIBRARY_H
#define TRA_EXEC_LIBRARY_H

#include "tra/Exec/ABI.h"
#include "tra/Runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tra::exec {

/// Succeeds if `program` is a descriptor this runtime understands (its ABI
/// version, its tensor tables, its output aliases, and for a distributed
/// program every rank's tile table), else fails with what is wrong with it.
rt::Status checkDescriptor(const TraExecProgram &program);

/// What a program fetched from the memory tiers of its node (tra_comm.fetch:
/// weights its plan keeps in host memory or on disk), by TraExecTier.
struct TierFetches {
  int64_t bytes[TRA_EXEC_TIER_DISK + 1] = {};
  int64_t tiles[TRA_EXEC_TIER_DISK + 1] = {};
  /// Nanoseconds the copy thread copied non-blocking fetches, and the
  /// program waited for them (ABI.h tra_exec_fetch_copy_ns / _wait_ns).
  int64_t copyNs = 0, waitNs = 0;
  bool empty() const {
    return tiles[TRA_EXEC_TIER_HOST] == 0 && tiles[TRA_EXEC_TIER_DISK] == 0;
  }
};

/// A shared library compiled by tra, loaded with dlopen (RTLD_NOW: an
/// unresolved symbol is an error at load time; RTLD_LOCAL: several
/// libraries, each with its own `tra_exec_program`, can be loaded at once).
/// Closed on destruction.
class ProgramLibrary {
public:
  /// Loads `path` and checks its descriptor; errors name the file.
  static rt::Result<std::unique_ptr<ProgramLibrary>>
  open(const std::string &path);
  ~ProgramLibrary();
  ProgramLibrary(const ProgramLibrary &) = delete;
  ProgramLibrary &operator=(const ProgramLibrary &) = delete;

  /// The descriptor the library defines.
  const TraExecProgram &program() const { return *descriptor; }
  const std::string &path() const { return file; }
  /// Whether the library holds one program per MPI rank (run them through
  /// `program().ranks`) rather than one program for this process.
  bool isDistributed() const { return descriptor->numRanks > 0; }
  /// Runs the one-device program: `buffers` holds numInputs + numOutputs
  /// pointers, inputs then outputs, each to a dense row-major buffer of the
  /// descriptor's shape and element type. Fails, naming the check, if a
  /// run-time check of the compiled code failed (an index or a position out
  /// of range): the outputs are then not the model's. Must not be called on
  /// a distributed library. (A GPU program's checks run on the host when its
  /// work is issued.)
  rt::Status run(void *const *buffers) const;
  /// Runs rank `rank`'s program of a distributed library (`buffers` as
  /// TraExecRankProgram::run takes them); fails as run() does.
  rt::Status runRank(int64_t rank, void *const *buffers) const;
  /// Fails, naming it, if a run-time check failed in the library's code since
  /// the last call (and clears it); for callers of the descriptor's `run`
  /// functions.
  rt::Status takeCheckFailure() const;
  /// The input whose buffer `run` may also be given as output `output`'s
  /// (the output then starts as that input, updated in place; ABI.h
  /// `outputAliases`), or -1: none, no such output, or a distributed
  /// program.
  int64_t outputAliasedInput(size_t output) const;
  /// Sets the thread count of the library's BLAS calls and OpenMP loops (at
  /// least 1), and the parallel costs its descriptor carries.
  void setNumThreads(int64_t threads) const;
  /// What the library's code fetched from the memory tiers since it was
  /// loaded (nothing for a library compiled before fetches existed).
  TierFetches tierFetches() const;
  /// How often run() and runRank() ran.
  int64_t numRuns() const { return runs; }
  /// "fetched N bytes in T tiles from host memory[, M bytes in U tiles from
  /// disk] per run (R runs)[; copies X ms per run, Y ms of them not hidden
  /// behind compute]", or "" if the runs fetched nothing.
  std::string describeTierFetches() const;

private:
  ProgramLibrary() = default;
  void *handle = nullptr;
  const TraExecProgram *descriptor = nullptr;
  void (*setThreads)(int64_t) = nullptr;
  void (*setCosts)(double, double, double) = nullptr;
  const char *(*takeFailure)() = nullptr;
  int64_t (*tierBytes)(int32_t) = nullptr;
  int64_t (*tierTiles)(int32_t) = nullptr;
  int64_t (*fetchCopyNs)() = nullptr;
  int64_t (*fetchWaitNs)() = nullptr;
  mutable int64_t runs = 0;
  std::string file;
};

} // namespace tra::exec

#endif // TRA_EXEC_LIBRARY_H
