//===- Context.h - The process's device, stream, pool and error -*- C++ -*-===//
//
// The state behind Cuda.h and ABI.h: the driver, the device and its primary
// context, the stream (and the copy stream of tile fetches), the caching
// allocator, the loaded modules and the first error. Private to runtime/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CUDA_CONTEXT_H
#define TRA_CUDA_CONTEXT_H

#include "Driver.h"

#include "tra/Cuda/Cuda.h"

#include <cstddef>
#include <string>

namespace tra::cuda {

/// The driver and stream of an initialized process, or null (with the
/// initialization error recorded) if initialization failed.
struct Active {
  const DriverApi *api = nullptr;
  CUstream stream = nullptr;
};

/// Initializes on first use. When that fails, or an error is pending,
/// returns an Active with a null `api`: the caller does nothing.
Active activate();

/// The copy stream of tile fetches (tra_cuda_fetch_start), created on first
/// use, after `active` (from activate()). Null, with the error recorded, if
/// it cannot be created.
CUstream copyStream(const Active &active);

/// Records `what` failing with `result` as the pending error unless one is
/// pending already. `what` names the call and what it was for.
void recordError(const std::string &what, CUresult result);
void recordError(const std::string &message);

/// Checks `result` of the call `what`; records and returns false on failure.
bool check(CUresult result, const char *what);

/// Remembers the name of the kernel last launched (for errors that the
/// stream reports later).
void noteKernel(const std::string &name);

/// The pool (Allocator.cpp).
void *poolAllocate(const Active &active, size_t bytes, bool managed);
void poolFree(void *pointer);
void poolRelease(const Active &active);

} // namespace tra::cuda

#endif // TRA_CUDA_CONTEXT_H
