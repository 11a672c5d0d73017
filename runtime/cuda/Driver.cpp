//===- Driver.cpp - The CUDA driver API, loaded at run time ---------------===//

#include "Driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace tra;
using namespace tra::cuda;

namespace {
/// Resolves `name` in `handle` into `slot`; returns false if it is missing.
template <class F> bool resolve(void *handle, const char *name, F &slot) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  return slot != nullptr;
}

rt::Result<const DriverApi *> openDriver() {
  const char *override = std::getenv("TRA_CUDA_DRIVER");
  std::string library = override && *override ? override : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols stay out of the process's namespace.
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return rt::Error{"cannot load the CUDA driver " + library + " (" +
                     (why ? why : "unknown error") +
                     "): no NVIDIA driver is installed"};
  }
  static DriverApi api;
  struct Entry {
    const char *name;
    bool ok;
  };
  Entry entries[] = {
      {"cuInit", resolve(handle, "cuInit", api.init)},
      {"cuDriverGetVersion",
       resolve(handle, "cuDriverGetVersion", api.driverGetVersion)},
      {"cuGetErrorName", resolve(handle, "cuGetErrorName", api.getErrorName)},
      {"cuGetErrorString",
       resolve(handle, "cuGetErrorString", api.getErrorString)},
      {"cuDeviceGetCount",
       resolve(handle, "cuDeviceGetCount", api.deviceGetCount)},
      {"cuDeviceGet", resolve(handle, "cuDeviceGet", api.deviceGet)},
      {"cuDeviceGetName",
       resolve(handle, "cuDeviceGetName", api.deviceGetName)},
      {"cuDeviceGetAttribute",
       resolve(handle, "cuDeviceGetAttribute", api.deviceGetAttribute)},
      {"cuDeviceTotalMem_v2",
       resolve(handle, "cuDeviceTotalMem_v2", api.deviceTotalMem)},
      {"cuDevicePrimaryCtxRetain",
       resolve(handle, "cuDevicePrimaryCtxRetain", api.primaryCtxRetain)},
      {"cuCtxSetCurrent",
       resolve(handle, "cuCtxSetCurrent", api.ctxSetCurrent)},
      {"cuModuleLoadData",
       resolve(handle, "cuModuleLoadData", api.moduleLoadData)},
      {"cuModuleUnload", resolve(handle, "cuModuleUnload", api.moduleUnload)},
      {"cuModuleGetFunction",
       resolve(handle, "cuModuleGetFunction", api.moduleGetFunction)},
      {"cuLaunchKernel", resolve(handle, "cuLaunchKernel", api.launchKernel)},
      {"cuStreamCreate", resolve(handle, "cuStreamCreate", api.streamCreate)},
      {"cuStreamSynchronize",
       resolve(handle, "cuStreamSynchronize", api.streamSynchronize)},
      {"cuStreamWaitEvent",
       resolve(handle, "cuStreamWaitEvent", api.streamWaitEvent)},
      {"cuEventCreate", resolve(handle, "cuEventCreate", api.eventCreate)},
      {"cuEventRecord", resolve(handle, "cuEventRecord", api.eventRecord)},
      {"cuEventDestroy_v2",
       resolve(handle, "cuEventDestroy_v2", api.eventDestroy)},
      {"cuMemAlloc_v2", resolve(handle, "cuMemAlloc_v2", api.memAlloc)},
      {"cuMemAllocManaged",
       resolve(handle, "cuMemAllocManaged", api.memAllocManaged)},
      {"cuMemFree_v2", resolve(handle, "cuMemFree_v2", api.memFree)},
      {"cuMemcpyAsync", resolve(handle, "cuMemcpyAsync", api.memcpyAsync)},
      {"cuMemcpy2DAsync_v2",
       resolve(handle, "cuMemcpy2DAsync_v2", api.memcpy2DAsync)},
      {"cuMemsetD8Async",
       resolve(handle, "cuMemsetD8Async", api.memsetD8Async)},
      {"cuMemsetD16Async",
       resolve(handle, "cuMemsetD16Async", api.memsetD16Async)},
      {"cuMemsetD32Async",
       resolve(handle, "cuMemsetD32Async", api.memsetD32Async)},
      {"cuMemGetInfo_v2", resolve(handle, "cuMemGetInfo_v2", api.memGetInfo)},
      // cuda.h maps cuMemHostRegister to its _v2 (the one that takes flags).
      {"cuMemHostRegister_v2",
       resolve(handle, "cuMemHostRegister_v2", api.memHostRegister)},
      {"cuMemHostUnregister",
       resolve(handle, "cuMemHostUnregister", api.memHostUnregister)},
  };
  for (const Entry &entry : entries)
    if (!entry.ok) {
      dlclose(handle);
      return rt::Error{"the CUDA driver " + library + " has no " + entry.name +
                       ": it is too old or not a CUDA driver"};
    }
  return static_cast<const DriverApi *>(&api);
}
} // namespace

rt::Result<const DriverApi *> tra::cuda::loadDriver() {
  static std::once_flag once;
  static rt::Result<const DriverApi *> loaded{rt::Error{""}};
  std::call_once(once, [] { loaded = openDriver(); });
  return loaded;
}

std::string tra::cuda::describeResult(const DriverApi &api, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (api.getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (api.getErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  std::string s = name ? name : "CUDA error " + std::to_string(int(result));
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}
