//===- Driver.h - The CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// The entry points of libcuda.so.1 that the runtime uses, resolved with
// dlopen/dlsym so that nothing links against the driver. TRA_CUDA_DRIVER
// names another library (the tests' fake driver). Private to runtime/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_CUDA_DRIVER_H
#define TRA_CUDA_DRIVER_H

#include "tra/Runtime/Error.h"

#include <cuda.h>

#include <string>

namespace tra::cuda {

/// The driver's functions (null until loaded).
struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*deviceTotalMem)(size_t *, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*streamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream);
  CUresult (*memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*memsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*memsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*memGetInfo)(size_t *, size_t *);
  CUresult (*memHostRegister)(void *, size_t, unsigned);
  CUresult (*memHostUnregister)(void *);
};

/// Loads the driver library once; the result (and its error) is kept.
rt::Result<const DriverApi *> loadDriver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for `result`.
std::string describeResult(const DriverApi &api, CUresult result);

} // namespace tra::cuda

#endif // TRA_CUDA_DRIVER_H
