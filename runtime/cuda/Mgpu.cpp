//===- Mgpu.cpp - MLIR's GPU calling convention on tra's runtime ----------===//
//
// The functions that code lowered by MLIR's gpu-to-llvm calls (ABI.h).
// Modules are loaded when a kernel is first looked up, not when the program
// is loaded (the translation of gpu.binary calls mgpuModuleLoad from a
// global constructor), so that loading a program never touches the GPU and
// a missing driver is reported by the program's driver, not at start-up.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "tra/Cuda/ABI.h"

#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

using namespace tra;
using namespace tra::cuda;

namespace {
/// A module handed to mgpuModuleLoad.
struct Module {
  const void *data = nullptr;
  size_t size = 0;
  std::mutex mutex;
  CUmodule module = nullptr;
  bool failed = false;
  std::unordered_map<std::string, CUfunction> functions;
};

/// Kernel names by function, for errors.
std::mutex namesMutex;
std::unordered_map<CUfunction, std::string> &kernelNames() {
  static auto *names = new std::unordered_map<CUfunction, std::string>;
  return *names;
}

/// The handle returned for streams and events: they all stand for the one
/// stream.
char streamHandle;

} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t size) {
  auto *module = new Module;
  module->data = data;
  module->size = size;
  return module;
}

extern "C" void mgpuModuleUnload(void *handle) {
  auto *module = static_cast<Module *>(handle);
  if (!module)
    return;
  {
    std::lock_guard<std::mutex> lock(namesMutex);
    for (auto &[name, function] : module->functions)
      kernelNames().erase(function);
  }
  if (module->module) {
    if (rt::Result<const DriverApi *> api = loadDriver())
      (*api)->moduleUnload(module->module);
  }
  delete module;
}

extern "C" void *mgpuModuleGetFunction(void *handle, const char *name) {
  auto *module = static_cast<Module *>(handle);
  Active active = activate();
  if (!active.api || !module)
    return nullptr;
  std::lock_guard<std::mutex> lock(module->mutex);
  auto it = module->functions.find(name);
  if (it != module->functions.end())
    return it->second;
  if (module->failed)
    return nullptr;
  if (!module->module) {
    if (CUresult r = active.api->moduleLoadData(&module->module, module->data);
        r != CUDA_SUCCESS) {
      module->failed = true;
      module->module = nullptr;
      // Kernels are compiled by the CUDA 13 toolkit; an older driver may
      // not load them.
      rt::Result<DeviceInfo> device = getDevice();
      std::string driver =
          device && device->driverVersion < 13000
              ? " (the driver supports CUDA " +
                    std::to_string(device->driverVersion / 1000) + "." +
                    std::to_string(device->driverVersion % 1000 / 10) +
                    "; the kernels were built with CUDA 13: a driver for "
                    "CUDA 13.0 or newer is needed)"
              : "";
      recordError("cannot load the program's GPU kernels on " +
                      describeDevice() + driver + " (cuModuleLoadData)",
                  r);
      return nullptr;
    }
  }
  CUfunction function = nullptr;
  if (CUresult r =
          active.api->moduleGetFunction(&function, module->module, name);
      r != CUDA_SUCCESS) {
    recordError(std::string("the program has no GPU kernel ") + name +
                    " (cuModuleGetFunction)",
                r);
    return nullptr;
  }
  module->functions.emplace(name, function);
  std::lock_guard<std::mutex> namesLock(namesMutex);
  kernelNames()[function] = name;
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ,
                                 int32_t sharedMemoryBytes, void *,
                                 void **params, void **extra, size_t) {
  Active active = activate();
  if (!active.api || !function)
    return;
  std::string name = "?";
  {
    std::lock_guard<std::mutex> lock(namesMutex);
    auto it = kernelNames().find(static_cast<CUfunction>(function));
    if (it != kernelNames().end())
      name = it->second;
  }
  auto fits = [](intptr_t v) { return v >= 0 && v <= 0x7fffffff; };
  if (!fits(gridX) || !fits(gridY) || !fits(gridZ) || !fits(blockX) ||
      !fits(blockY) || !fits(blockZ) || sharedMemoryBytes < 0) {
    recordError("launching GPU kernel " + name +
                ": grid or block size out of range");
    return;
  }
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return; // Nothing to do: an empty iteration space.
  noteKernel(name);
  CUresult r = active.api->launchKernel(
      static_cast<CUfunction>(function), unsigned(gridX), unsigned(gridY),
      unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
      unsigned(sharedMemoryBytes), active.stream, params, extra);
  if (r != CUDA_SUCCESS)
    recordError("launching GPU kernel " + name + " (grid " +
                    std::to_string(gridX) + "x" + std::to_string(gridY) + "x" +
                    std::to_string(gridZ) + ", block " +
                    std::to_string(blockX) + "x" + std::to_string(blockY) +
                    "x" + std::to_string(blockZ) + ")",
                r);
}

extern "C" void *mgpuStreamCreate(void) { return &streamHandle; }
extern "C" void mgpuStreamDestroy(void *) {}
extern "C" void mgpuStreamSynchronize(void *) {
  Active active = activate();
  if (!active.api)
    return;
  if (CUresult r = active.api->streamSynchronize(active.stream);
      r != CUDA_SUCCESS)
    recordError("waiting for the GPU (cuStreamSynchronize)", r);
}
extern "C" void mgpuStreamWaitEvent(void *, void *) {}
extern "C" void *mgpuEventCreate(void) { return &streamHandle; }
extern "C" void mgpuEventDestroy(void *) {}
extern "C" void mgpuEventSynchronize(void *) { mgpuStreamSynchronize(nullptr); }
extern "C" void mgpuEventRecord(void *, void *) {}

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *, int8_t isHostShared) {
  Active active = activate();
  if (!active.api)
    return nullptr;
  return poolAllocate(active, size_t(sizeBytes), isHostShared != 0);
}

extern "C" void mgpuMemFree(void *ptr, void *) { poolFree(ptr); }

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *) {
  tra_cuda_memcpy(dst, src, int64_t(sizeBytes));
}

extern "C" void mgpuMemset32(void *dst, uint32_t value, size_t count, void *) {
  Active active = activate();
  if (!active.api || count == 0)
    return;
  check(active.api->memsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                   count, active.stream),
        "filling GPU memory (cuMemsetD32Async)");
}

extern "C" void mgpuMemset16(void *dst, uint16_t value, size_t count, void *) {
  Active active = activate();
  if (!active.api || count == 0)
    return;
  check(active.api->memsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                   count, active.stream),
        "filling GPU memory (cuMemsetD16Async)");
}

extern "C" void mgpuSetDefaultDevice(int32_t) {
  // The device is chosen once per process (initialize()).
}

//===----------------------------------------------------------------------===//
// Copies issued by host code (tra-map-to-gpu)
//===----------------------------------------------------------------------===//

extern "C" void tra_cuda_memcpy(void *dst, const void *src, int64_t bytes) {
  Active active = activate();
  if (!active.api || bytes <= 0)
    return;
  check(active.api->memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                reinterpret_cast<CUdeviceptr>(src),
                                size_t(bytes), active.stream),
        "copying GPU memory (cuMemcpyAsync)");
}

namespace {
/// One dimension of a strided copy: its size and the strides (in bytes) of
/// the destination and the source along it.
struct CopyDim {
  int64_t size, dstStride, srcStride;
};

/// The stream a strided copy is issued on, and the names its errors give
/// the driver's calls.
struct CopyTarget {
  const DriverApi *api;
  CUstream stream;
  const char *runCall;  // cuMemcpyAsync
  const char *rowsCall; // cuMemcpy2DAsync
};

/// A strided copy reduced to rows of `width` bytes: `rows` of them, copied
/// by one 2-D copy, at each index of the dimensions of `outer` (none: one
/// 2-D copy).
struct StridedCopy {
  bool empty = false;
  int64_t width = 0;
  CopyDim rows = {1, 0, 0};
  std::vector<CopyDim> outer;
};

/// Checks the arguments of a strided copy and merges its dimensions into
/// `plan`; records an error naming `caller` and returns false if they are
/// invalid.
bool planStridedCopy(const char *caller, int64_t elementBytes, int64_t rank,
                     const int64_t *sizes, const int64_t *dstStrides,
                     const int64_t *srcStrides, StridedCopy &plan) {
  if (rank < 1 || rank > 4 || elementBytes < 1) {
    recordError(std::string(caller) + ": invalid rank " + std::to_string(rank));
    return false;
  }
  // Dimensions of more than one element, outermost first, with neighbours
  // that are one run in both buffers merged.
  std::vector<CopyDim> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) {
      plan.empty = true;
      return true;
    }
    if (sizes[d] < 0 || dstStrides[d] < 0 || srcStrides[d] < 0) {
      recordError(std::string(caller) + ": a negative size or stride");
      return false;
    }
    if (sizes[d] > 1)
      dims.push_back({sizes[d], dstStrides[d] * elementBytes,
                      srcStrides[d] * elementBytes});
  }
  for (size_t d = dims.size(); d-- > 1;) {
    CopyDim &outer = dims[d - 1], &inner = dims[d];
    if (outer.dstStride == inner.size * inner.dstStride &&
        outer.srcStride == inner.size * inner.srcStride) {
      inner.size *= outer.size;
      dims.erase(dims.begin() + (d - 1));
    }
  }
  // A row: the innermost dimension if it is contiguous in both buffers,
  // else one element.
  plan.width = elementBytes;
  if (!dims.empty() && dims.back().dstStride == elementBytes &&
      dims.back().srcStride == elementBytes) {
    plan.width *= dims.back().size;
    dims.pop_back();
  }
  // The innermost remaining dimension is the rows of a 2-D copy (one row
  // if none remains); the others are looped over on the host.
  plan.rows = {1, plan.width, plan.width};
  if (!dims.empty()) {
    plan.rows = dims.back();
    dims.pop_back();
  }
  plan.outer = std::move(dims);
  return true;
}

/// Copies `rows` rows of `width` bytes, each `dstPitch` / `srcPitch` bytes
/// after the last, with one cuMemcpy2DAsync (or one copy per row where a
/// pitch exceeds what the driver takes).
bool copyRows(const CopyTarget &target, char *dst, const char *src,
              int64_t width, int64_t rows, int64_t dstPitch, int64_t srcPitch) {
  if (rows == 1 || (dstPitch == width && srcPitch == width))
    return check(target.api->memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                         reinterpret_cast<CUdeviceptr>(src),
                                         size_t(width * rows), target.stream),
                 target.runCall);
  if (dstPitch > INT32_MAX || srcPitch > INT32_MAX) {
    for (int64_t r = 0; r < rows; ++r)
      if (!copyRows(target, dst + r * dstPitch, src + r * srcPitch, width, 1,
                    dstPitch, srcPitch))
        return false;
    return true;
  }
  // Unified addresses: the source may be host memory (a weight the plan
  // keeps in host memory, sliced by a rank's fetch).
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  copy.srcPitch = size_t(srcPitch);
  copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  copy.dstPitch = size_t(dstPitch);
  copy.WidthInBytes = size_t(width);
  copy.Height = size_t(rows);
  return check(target.api->memcpy2DAsync(&copy, target.stream),
               target.rowsCall);
}

/// Issues the copies of `plan` on `target`'s stream; returns false (the
/// error recorded) when one fails.
bool issueStridedCopy(const CopyTarget &target, void *dst, const void *src,
                      const StridedCopy &plan) {
  if (plan.empty)
    return true;
  char *to = static_cast<char *>(dst);
  const char *from = static_cast<const char *>(src);
  const std::vector<CopyDim> &dims = plan.outer;
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    int64_t dstOffset = 0, srcOffset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      dstOffset += index[d] * dims[d].dstStride;
      srcOffset += index[d] * dims[d].srcStride;
    }
    if (!copyRows(target, to + dstOffset, from + srcOffset, plan.width,
                  plan.rows.size, plan.rows.dstStride, plan.rows.srcStride))
      return false;
    size_t d = dims.size();
    while (d > 0 && ++index[d - 1] == dims[d - 1].size)
      index[--d] = 0;
    if (d == 0)
      return true;
  }
}
} // namespace

extern "C" void tra_cuda_copy_strided(void *dst, const void *src,
                                      int64_t elementBytes, int64_t rank,
                                      int64_t size0, int64_t size1,
                                      int64_t size2, int64_t size3,
                                      int64_t dstStride0, int64_t dstStride1,
                                      int64_t dstStride2, int64_t dstStride3,
                                      int64_t srcStride0, int64_t srcStride1,
                                      int64_t srcStride2, int64_t srcStride3) {
  Active active = activate();
  if (!active.api)
    return;
  const int64_t sizes[] = {size0, size1, size2, size3};
  const int64_t dstStrides[] = {dstStride0, dstStride1, dstStride2, dstStride3};
  const int64_t srcStrides[] = {srcStride0, srcStride1, srcStride2, srcStride3};
  StridedCopy plan;
  if (!planStridedCopy("tra_cuda_copy_strided", elementBytes, rank, sizes,
                       dstStrides, srcStrides, plan))
    return;
  issueStridedCopy({active.api, active.stream,
                    "copying GPU memory (cuMemcpyAsync)",
                    "copying strided GPU memory (cuMemcpy2DAsync)"},
                   dst, src, plan);
}

//===----------------------------------------------------------------------===//
// Tile fetches: strided copies on the copy stream
//===----------------------------------------------------------------------===//

namespace {
/// The events of tile fetches. A wait uses what the event captured when
/// the wait was issued, so an event may be recorded again as soon as the
/// waits for it are issued: events are kept for reuse, not destroyed (the
/// driver's cuEventCreate and cuEventDestroy cost more than a record).
struct Fetches {
  std::mutex mutex;
  std::vector<CUevent> idle;
  /// The "copy done" event of each fetch not waited for yet.
  std::unordered_map<int64_t, CUevent> inFlight;
  int64_t nextHandle = 0;
};

Fetches &fetches() {
  // Never destroyed, like the pool: static destructors may still run GPU
  // code at exit.
  static auto *instance = new Fetches;
  return *instance;
}

/// An idle event, or a new one; null (the error recorded) if the driver
/// cannot create one.
CUevent takeEvent(const Active &active) {
  Fetches &f = fetches();
  {
    std::lock_guard<std::mutex> lock(f.mutex);
    if (!f.idle.empty()) {
      CUevent event = f.idle.back();
      f.idle.pop_back();
      return event;
    }
  }
  // No timing: events that only order streams are cheaper to record.
  CUevent event = nullptr;
  if (!check(active.api->eventCreate(&event, CU_EVENT_DISABLE_TIMING),
             "starting a tile fetch (cuEventCreate)"))
    return nullptr;
  return event;
}

void giveBackEvent(CUevent event) {
  Fetches &f = fetches();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.idle.push_back(event);
}
} // namespace

extern "C" int64_t
tra_cuda_fetch_start(void *dst, const void *src, int64_t elementBytes,
                     int64_t rank, int64_t size0, int64_t size1, int64_t size2,
                     int64_t size3, int64_t dstStride0, int64_t dstStride1,
                     int64_t dstStride2, int64_t dstStride3, int64_t srcStride0,
                     int64_t srcStride1, int64_t srcStride2,
                     int64_t srcStride3) {
  Active active = activate();
  if (!active.api)
    return -1;
  const int64_t sizes[] = {size0, size1, size2, size3};
  const int64_t dstStrides[] = {dstStride0, dstStride1, dstStride2, dstStride3};
  const int64_t srcStrides[] = {srcStride0, srcStride1, srcStride2, srcStride3};
  StridedCopy plan;
  if (!planStridedCopy("tra_cuda_fetch_start", elementBytes, rank, sizes,
                       dstStrides, srcStrides, plan))
    return -1;
  CUstream stream = copyStream(active);
  if (!stream)
    return -1;
  CUevent issued = takeEvent(active);
  if (!issued)
    return -1;
  CUevent done = takeEvent(active);
  if (!done) {
    giveBackEvent(issued);
    return -1;
  }
  // The copy starts after the work issued so far on the compute stream,
  // which may still read `dst` (the tile fetched before into the same
  // buffer) or write `src`.
  bool ok =
      check(active.api->eventRecord(issued, active.stream),
            "starting a tile fetch (cuEventRecord)") &&
      check(active.api->streamWaitEvent(stream, issued, 0),
            "starting a tile fetch (cuStreamWaitEvent)") &&
      issueStridedCopy({active.api, stream, "fetching a tile (cuMemcpyAsync)",
                        "fetching a tile (cuMemcpy2DAsync)"},
                       dst, src, plan) &&
      check(active.api->eventRecord(done, stream),
            "starting a tile fetch (cuEventRecord)");
  giveBackEvent(issued);
  if (!ok) {
    giveBackEvent(done);
    return -1;
  }
  Fetches &f = fetches();
  std::lock_guard<std::mutex> lock(f.mutex);
  int64_t handle = f.nextHandle++;
  f.inFlight.emplace(handle, done);
  return handle;
}

extern "C" void tra_cuda_fetch_wait(int64_t handle) {
  // The handle is forgotten even while an error is pending (then nothing
  // waits for the copy: tra_cuda_take_error does).
  CUevent done = nullptr;
  {
    Fetches &f = fetches();
    std::lock_guard<std::mutex> lock(f.mutex);
    auto it = f.inFlight.find(handle);
    if (it != f.inFlight.end()) {
      done = it->second;
      f.inFlight.erase(it);
    }
  }
  Active active = activate();
  if (!active.api) {
    if (done)
      giveBackEvent(done);
    return;
  }
  if (!done) {
    recordError("tra_cuda_fetch_wait: no tile fetch has handle " +
                std::to_string(handle) +
                " (it was waited for already, or never started)");
    return;
  }
  check(active.api->streamWaitEvent(active.stream, done, 0),
        "waiting for a tile fetch (cuStreamWaitEvent)");
  giveBackEvent(done);
}

extern "C" void tra_cuda_read(void *host, const void *device, int64_t bytes) {
  if (bytes <= 0)
    return;
  Active active = activate();
  bool ok = active.api &&
            check(active.api->memcpyAsync(reinterpret_cast<CUdeviceptr>(host),
                                          reinterpret_cast<CUdeviceptr>(device),
                                          size_t(bytes), active.stream),
                  "reading GPU memory (cuMemcpyAsync)") &&
            check(active.api->streamSynchronize(active.stream),
                  "waiting for the GPU (cuStreamSynchronize)");
  // Zeros rather than garbage for the host code that goes on until the
  // error is reported: a position 0 passes every range check.
  if (!ok)
    std::memset(host, 0, size_t(bytes));
}

extern "C" void tra_cuda_write(void *device, const void *host, int64_t bytes) {
  tra_cuda_memcpy(device, host, bytes);
}
