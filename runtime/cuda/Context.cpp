//===- Context.cpp - The process's device, streams and error --------------===//

#include "Context.h"

#include "tra/Cuda/ABI.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using namespace tra;
using namespace tra::cuda;

namespace {
/// What initialize() set up.
struct State {
  const DriverApi *api = nullptr;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  DeviceInfo device;
};

State state;
std::once_flag initOnce;
rt::Status initStatus;

/// The copy stream of tile fetches: created by the first fetch, so that a
/// program that fetches nothing has one stream only.
std::mutex copyStreamMutex;
CUstream fetchStream = nullptr;

/// The first error since the last check, and the kernel last launched.
std::mutex errorMutex;
std::string pendingError;
bool errorPending = false;
std::string lastKernel;

/// The host memory pinHostMemory pinned: the pointer it was given, and the
/// start of the range it registered (the driver unregisters by that).
std::mutex pinnedMutex;
std::map<void *, void *> pinnedRanges;

/// Reads an environment variable as a non-negative number; -1 if absent.
int environmentOrdinal(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end || value < 0 || value > 1 << 20)
    return -2;
  return int(value);
}

rt::Status initializeOnce() {
  rt::Result<const DriverApi *> loaded = loadDriver();
  if (!loaded)
    return loaded.status();
  const DriverApi &api = **loaded;
  int version = 0;
  if (api.driverGetVersion(&version) != CUDA_SUCCESS)
    version = 0;
  if (CUresult r = api.init(0); r != CUDA_SUCCESS) {
    if (r == CUDA_ERROR_NO_DEVICE)
      return rt::Error{"no CUDA-capable GPU is visible (cuInit: " +
                       describeResult(api, r) + ")"};
    return rt::Error{"the CUDA driver cannot start (cuInit: " +
                     describeResult(api, r) + ")"};
  }
  int count = 0;
  if (CUresult r = api.deviceGetCount(&count); r != CUDA_SUCCESS || count == 0)
    return rt::Error{"no CUDA-capable GPU is visible" +
                     (r != CUDA_SUCCESS ? " (" + describeResult(api, r) + ")"
                                        : std::string())};
  int ordinal = environmentOrdinal("TRA_CUDA_DEVICE");
  if (ordinal == -2 || ordinal >= count)
    return rt::Error{
        "TRA_CUDA_DEVICE=" + std::string(std::getenv("TRA_CUDA_DEVICE")) +
        " is not a device ordinal below " + std::to_string(count)};
  if (ordinal < 0) {
    int localRank = environmentOrdinal("OMPI_COMM_WORLD_LOCAL_RANK");
    ordinal = localRank >= 0 ? localRank % count : 0;
  }
  CUdevice device;
  if (CUresult r = api.deviceGet(&device, ordinal); r != CUDA_SUCCESS)
    return rt::Error{"cannot open GPU " + std::to_string(ordinal) + ": " +
                     describeResult(api, r)};
  DeviceInfo &info = state.device;
  info.ordinal = ordinal;
  info.count = count;
  info.driverVersion = version;
  char name[256] = {0};
  if (api.deviceGetName(name, sizeof(name) - 1, device) == CUDA_SUCCESS)
    info.name = name;
  api.deviceGetAttribute(&info.major,
                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  api.deviceGetAttribute(&info.minor,
                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  size_t memory = 0;
  if (api.deviceTotalMem(&memory, device) == CUDA_SUCCESS)
    info.totalMemory = memory;
  if (info.major < 8)
    return rt::Error{"GPU " + std::to_string(ordinal) + " (" + info.name +
                     ") has compute capability " + std::to_string(info.major) +
                     "." + std::to_string(info.minor) +
                     "; tra's kernels need 8.0 (sm_80) or newer"};
  if (CUresult r = api.primaryCtxRetain(&state.context, device);
      r != CUDA_SUCCESS)
    return rt::Error{"cannot create a context on GPU " +
                     std::to_string(ordinal) + ": " + describeResult(api, r)};
  if (CUresult r = api.ctxSetCurrent(state.context); r != CUDA_SUCCESS)
    return rt::Error{"cannot use the context of GPU " +
                     std::to_string(ordinal) + ": " + describeResult(api, r)};
  if (CUresult r = api.streamCreate(&state.stream, CU_STREAM_DEFAULT);
      r != CUDA_SUCCESS)
    return rt::Error{"cannot create a stream on GPU " +
                     std::to_string(ordinal) + ": " + describeResult(api, r)};
  state.api = &api;
  return rt::Status::success();
}

/// Makes the context current on the calling thread (once per thread).
bool makeCurrent() {
  thread_local bool current = false;
  if (current)
    return true;
  if (CUresult r = state.api->ctxSetCurrent(state.context); r != CUDA_SUCCESS) {
    recordError("cuCtxSetCurrent", r);
    return false;
  }
  current = true;
  return true;
}

/// Waits for the copy stream, if there is one, even while an error is
/// pending: once the error is reported the program may free the buffers a
/// fetch still reads or writes (a fetch nobody waited for, or one after
/// the failing call).
void waitForFetches() {
  CUstream stream;
  {
    std::lock_guard<std::mutex> lock(copyStreamMutex);
    stream = fetchStream;
  }
  // A copy stream exists only after a successful initialization.
  if (!stream || !makeCurrent())
    return;
  if (CUresult r = state.api->streamSynchronize(stream); r != CUDA_SUCCESS)
    recordError("waiting for the tile fetches (cuStreamSynchronize)", r);
}
} // namespace

rt::Status tra::cuda::initialize() {
  std::call_once(initOnce, [] { initStatus = initializeOnce(); });
  return initStatus;
}

rt::Result<DeviceInfo> tra::cuda::getDevice() {
  if (rt::Status status = initialize(); !status)
    return status;
  return state.device;
}

Active tra::cuda::activate() {
  if (!initialize()) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!errorPending) {
      errorPending = true;
      pendingError = initStatus.message();
    }
    return Active();
  }
  {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (errorPending)
      return Active();
  }
  if (!makeCurrent())
    return Active();
  return Active{state.api, state.stream};
}

CUstream tra::cuda::copyStream(const Active &active) {
  std::lock_guard<std::mutex> lock(copyStreamMutex);
  if (fetchStream)
    return fetchStream;
  // Non-blocking: the copy stream is ordered with the compute stream by
  // events only, not by the legacy default stream.
  CUstream stream = nullptr;
  if (!check(active.api->streamCreate(&stream, CU_STREAM_NON_BLOCKING),
             "creating the copy stream of tile fetches (cuStreamCreate)"))
    return nullptr;
  fetchStream = stream;
  return fetchStream;
}

void tra::cuda::recordError(const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (errorPending)
    return;
  errorPending = true;
  pendingError = message;
}

void tra::cuda::recordError(const std::string &what, CUresult result) {
  const DriverApi *api = state.api;
  if (!api) {
    rt::Result<const DriverApi *> loaded = loadDriver();
    api = loaded ? *loaded : nullptr;
  }
  recordError(what + ": " +
              (api ? describeResult(*api, result)
                   : "CUDA error " + std::to_string(int(result))));
}

bool tra::cuda::check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  recordError(what, result);
  return false;
}

std::string tra::cuda::describeDevice() {
  rt::Result<DeviceInfo> device = getDevice();
  if (!device)
    return "the GPU";
  return "GPU " + std::to_string(device->ordinal) + " (" + device->name +
         ", sm_" + std::to_string(device->major) +
         std::to_string(device->minor) + ")";
}

void tra::cuda::noteKernel(const std::string &name) {
  std::lock_guard<std::mutex> lock(errorMutex);
  lastKernel = name;
}

rt::Status tra::cuda::synchronize() {
  Active active = activate();
  if (active.api) {
    if (CUresult r = active.api->streamSynchronize(active.stream);
        r != CUDA_SUCCESS) {
      std::string where;
      {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!lastKernel.empty())
          where = " (the last kernel launched was " + lastKernel + ")";
      }
      recordError("a GPU operation failed" + where, r);
    }
  }
  waitForFetches();
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!errorPending)
    return rt::Status::success();
  rt::Error error{"GPU: " + pendingError};
  errorPending = false;
  pendingError.clear();
  return error;
}

/// The pending error after a call that failed (it records one).
static rt::Error takeFailure() {
  rt::Status status = synchronize();
  return status ? rt::Error{"GPU: a call failed"} : status.error();
}

rt::Result<void *> tra::cuda::allocate(size_t bytes) {
  Active active = activate();
  if (!active.api)
    return takeFailure();
  void *pointer = poolAllocate(active, bytes, /*managed=*/false);
  if (bytes && !pointer)
    return takeFailure();
  return pointer;
}

void tra::cuda::release(void *pointer) { poolFree(pointer); }

namespace {
rt::Status copy(void *dst, const void *src, size_t bytes, const char *what) {
  Active active = activate();
  if (!active.api)
    return synchronize();
  if (bytes &&
      !check(active.api->memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                     reinterpret_cast<CUdeviceptr>(src), bytes,
                                     active.stream),
             what))
    return synchronize();
  return rt::Status::success();
}
} // namespace

namespace {
/// Registers [host, host + bytes) with the driver: as ordinary memory or,
/// where the driver refuses that, as read-only memory, which is all that
/// copies to the device need (.npy inputs and checkpoints are mapped
/// read-only). The first failure is returned if both fail.
CUresult registerRange(const DriverApi &api, void *host, size_t bytes) {
  CUresult r = api.memHostRegister(host, bytes, 0);
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return r;
  if (api.memHostRegister(host, bytes, CU_MEMHOSTREGISTER_READ_ONLY) ==
      CUDA_SUCCESS)
    return CUDA_SUCCESS;
  return r;
}
} // namespace

rt::Status tra::cuda::pinHostMemory(void *host, size_t bytes) {
  if (!host || !bytes)
    return rt::Error{"no host memory to pin"};
  if (rt::Status status = initialize(); !status)
    return status;
  std::lock_guard<std::mutex> lock(pinnedMutex);
  if (pinnedRanges.count(host))
    return rt::Error{"the host memory is pinned already"};
  // The driver is called directly, not through check(): a failure only
  // leaves the memory pageable and must not become the program's error.
  const DriverApi &api = *state.api;
  if (CUresult r = api.ctxSetCurrent(state.context); r != CUDA_SUCCESS)
    return rt::Error{"cannot pin host memory (cuCtxSetCurrent: " +
                     describeResult(api, r) + ")"};
  void *base = host;
  CUresult r = registerRange(api, host, bytes);
  if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
    // The driver pins whole pages: a tensor that shares its first or last
    // page with one pinned before (neighbours in one mapped checkpoint) is
    // pinned without those pages, which its neighbour's range pins.
    uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    uintptr_t begin = (reinterpret_cast<uintptr_t>(host) + page - 1) / page;
    uintptr_t end = (reinterpret_cast<uintptr_t>(host) + bytes) / page;
    if (begin < end) {
      base = reinterpret_cast<void *>(begin * page);
      r = registerRange(api, base, (end - begin) * page);
    }
  }
  if (r != CUDA_SUCCESS)
    return rt::Error{"cannot pin " + std::to_string(bytes) +
                     " bytes of host memory (cuMemHostRegister: " +
                     describeResult(api, r) + ")"};
  pinnedRanges[host] = base;
  return rt::Status::success();
}

void tra::cuda::unpinHostMemory(void *host) {
  std::lock_guard<std::mutex> lock(pinnedMutex);
  auto pinned = pinnedRanges.find(host);
  if (pinned == pinnedRanges.end())
    return;
  void *base = pinned->second;
  pinnedRanges.erase(pinned);
  // Tile fetches still in flight on the copy stream may read the memory.
  waitForFetches();
  // A failure leaves the range registered until the process exits: nothing
  // a later call could do better, so nothing is recorded.
  if (state.api->ctxSetCurrent(state.context) == CUDA_SUCCESS)
    (void)state.api->memHostUnregister(base);
}

rt::Status tra::cuda::copyToDevice(void *device, const void *host,
                                   size_t bytes) {
  return copy(device, host, bytes, "copying to the GPU (cuMemcpyAsync)");
}

rt::Status tra::cuda::copyToHost(void *host, const void *device, size_t bytes) {
  if (rt::Status status =
          copy(host, device, bytes, "copying from the GPU (cuMemcpyAsync)");
      !status)
    return status;
  // The bytes are on the host once the stream is idle.
  return synchronize();
}

rt::Status tra::cuda::copyOnDevice(void *dst, const void *src, size_t bytes) {
  return copy(dst, src, bytes, "copying on the GPU (cuMemcpyAsync)");
}

rt::Status tra::cuda::fillZero(void *device, size_t bytes) {
  Active active = activate();
  if (!active.api)
    return synchronize();
  if (bytes &&
      !check(active.api->memsetD8Async(reinterpret_cast<CUdeviceptr>(device), 0,
                                       bytes, active.stream),
             "clearing GPU memory (cuMemsetD8Async)"))
    return synchronize();
  return rt::Status::success();
}

void tra::cuda::releaseCachedMemory() {
  Active active = activate();
  if (active.api)
    poolRelease(active);
}

extern "C" int tra_cuda_take_error(char *message, size_t size) {
  rt::Status status = synchronize();
  if (status)
    return 0;
  if (message && size) {
    std::strncpy(message, status.message().c_str(), size - 1);
    message[size - 1] = '\0';
  }
  return 1;
}
