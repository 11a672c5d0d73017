//===- FakeGpuShim.cpp - A host step program presented as a GPU program --===//
//
// A test fixture for the engine's GPU paths with real numbers. The fake CUDA
// driver of unittests/Cuda runs no kernels, but its device memory is host
// memory, so a program compiled for the host computes correctly on buffers
// the engine placed "on the device". This library loads the compiled step
// program named by the environment variable FAKE_GPU_SHIM_<SHIM_NAME> (a
// one-device or a distributed program) and exports its descriptor marked
// as a GPU program (TRA_EXEC_CUDA): the engine then binds it as it binds GPU
// programs, while the rank programs that run are the host code.
//
//===----------------------------------------------------------------------===//

#include "tra/Exec/ABI.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#ifndef SHIM_NAME
#error "SHIM_NAME (the suffix of the FAKE_GPU_SHIM_ variable) must be defined"
#endif
#define SHIM_STRING2(x) #x
#define SHIM_STRING(x) SHIM_STRING2(x)

// ABI.h declares the descriptor const; this one is filled in at load time.
extern "C" TraExecProgram shimProgram __asm__("tra_exec_program");
TraExecProgram shimProgram;

namespace {
void (*wrappedSetThreads)(int64_t) = nullptr;
void (*wrappedSetCosts)(double, double, double) = nullptr;
const char *(*wrappedTakeFailure)() = nullptr;

__attribute__((constructor)) void wrap() {
  const char *variable = "FAKE_GPU_SHIM_" SHIM_STRING(SHIM_NAME);
  const char *path = std::getenv(variable);
  if (!path) {
    std::fprintf(stderr, "FakeGpuShim: %s is not set\n", variable);
    return;
  }
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::fprintf(stderr, "FakeGpuShim: %s\n", dlerror());
    return;
  }
  auto *wrapped =
      static_cast<const TraExecProgram *>(dlsym(handle, "tra_exec_program"));
  wrappedSetThreads = reinterpret_cast<void (*)(int64_t)>(
      dlsym(handle, "tra_exec_set_num_threads"));
  wrappedSetCosts = reinterpret_cast<void (*)(double, double, double)>(
      dlsym(handle, "tra_exec_set_parallel_costs"));
  wrappedTakeFailure = reinterpret_cast<const char *(*)()>(
      dlsym(handle, "tra_exec_take_check_failure"));
  if (!wrapped || !wrappedSetThreads || !wrappedSetCosts ||
      !wrappedTakeFailure) {
    std::fprintf(stderr, "FakeGpuShim: %s is not a tra program\n", path);
    return;
  }
  shimProgram = *wrapped;
  shimProgram.device = TRA_EXEC_CUDA;
}
} // namespace

extern "C" void tra_exec_set_num_threads(int64_t threads) {
  if (wrappedSetThreads)
    wrappedSetThreads(threads);
}

extern "C" void tra_exec_set_parallel_costs(double sync, double bytes,
                                            double macs) {
  if (wrappedSetCosts)
    wrappedSetCosts(sync, bytes, macs);
}

// The checks of the wrapped program's code are recorded in its runtime.
extern "C" const char *tra_exec_take_check_failure(void) {
  return wrappedTakeFailure ? wrappedTakeFailure() : nullptr;
}
