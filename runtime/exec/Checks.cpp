//===- Checks.cpp - Run-time checks that failed in compiled code ----------===//
//
// Compiled code checks what only the run knows (a gather index, a cache
// position) and, where a check fails, calls tra_exec_check_failed and goes
// on with the value clamped into range, so that no memory outside a buffer
// is touched and every rank of a distributed program still reaches its
// moves. Whoever called the program's `run` asks tra_exec_take_check_failure
// afterwards and reports the run as failed instead of using its results.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <atomic>

namespace {
/// The first failed check since the last take (a string constant of the
/// compiled code), or null. Checks fail on any OpenMP thread.
std::atomic<const char *> firstFailure{nullptr};
} // namespace

extern "C" void tra_exec_check_failed(const char *message) {
  const char *none = nullptr;
  firstFailure.compare_exchange_strong(none, message ? message : "a check");
}

extern "C" const char *tra_exec_take_check_failure(void) {
  return firstFailure.exchange(nullptr);
}
