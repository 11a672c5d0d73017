//===- FakeDriver.cpp - A CUDA driver on host memory, for tests -----------===//
//
// Implements the driver entry points runtime/cuda resolves, on host memory:
// device pointers are host pointers, copies are memcpy (so they are done
// when issued, and events only need to exist), kernels are not run but
// recorded. FAKE_CUDA_MODE selects a failure: "no-device" (cuInit
// fails), "old" (a CUDA 12.4 driver), "sm75" (a Turing GPU);
// FAKE_CUDA_MEMORY_LIMIT=BYTES gives the device that much memory (a program
// that allocates more gets CUDA_ERROR_OUT_OF_MEMORY). Pinned host memory
// (cuMemHostRegister) is recorded, and ranges that share a page refused as
// the real driver refuses them. The fake_* functions let a test steer and
// inspect it.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace {
std::string mode() {
  const char *m = std::getenv("FAKE_CUDA_MODE");
  return m ? m : "";
}
int contextTag, moduleTag;
// The streams created, in order (the compute stream, then the copy stream).
int streamTags[4];
int streamsCreated = 0;
struct Function {
  std::string name;
};
// Stable addresses, freed at exit.
std::deque<Function> functions;

// Steering and records.
size_t memoryLimit = SIZE_MAX, memoryUsed = 0;
int allocations = 0, frees = 0, moduleLoads = 0, launches = 0;
CUresult launchResult = CUDA_SUCCESS, syncResult = CUDA_SUCCESS;
std::string lastLaunch;
unsigned lastGrid[3], lastBlock[3];
std::vector<std::pair<void *, size_t>> blocks;
// Events: live ones (a call on another one fails) and what was done with
// them.
std::set<CUevent> events;
int eventsCreated = 0, eventRecords = 0, eventWaits = 0;
CUresult eventRecordResult = CUDA_SUCCESS;
// Copies issued on each stream (by index in streamTags; 4: another one).
int copiesOnStream[5];
// Registered host ranges (start, bytes) and their flags; a failure to give
// every registration (until cleared), or only those without
// CU_MEMHOSTREGISTER_READ_ONLY (a read-only mapping).
struct HostRange {
  char *start;
  size_t bytes;
  unsigned flags;
};
std::vector<HostRange> hostRanges;
CUresult hostRegisterResult = CUDA_SUCCESS;
bool readOnlyHostMemory = false;

int streamIndex(CUstream s) {
  for (int i = 0; i < streamsCreated; ++i)
    if (s == reinterpret_cast<CUstream>(&streamTags[i]))
      return i;
  return 4;
}
} // namespace

extern "C" {
// ---- steering (called by the tests through dlsym) ----
void fake_cuda_set_memory_limit(size_t bytes) { memoryLimit = bytes; }
void fake_cuda_fail_next_launch(int result) { launchResult = CUresult(result); }
void fake_cuda_fail_next_sync(int result) { syncResult = CUresult(result); }
int fake_cuda_allocations() { return allocations; }
int fake_cuda_frees() { return frees; }
int fake_cuda_module_loads() { return moduleLoads; }
int fake_cuda_launches() { return launches; }
const char *fake_cuda_last_launch() { return lastLaunch.c_str(); }
unsigned fake_cuda_last_grid(int i) { return lastGrid[i]; }
unsigned fake_cuda_last_block(int i) { return lastBlock[i]; }
void fake_cuda_fail_next_event_record(int result) {
  eventRecordResult = CUresult(result);
}
int fake_cuda_streams() { return streamsCreated; }
int fake_cuda_copies_on_stream(int index) { return copiesOnStream[index]; }
int fake_cuda_events_created() { return eventsCreated; }
int fake_cuda_events_live() { return int(events.size()); }
int fake_cuda_event_records() { return eventRecords; }
int fake_cuda_event_waits() { return eventWaits; }
void fake_cuda_fail_host_registers(int result) {
  hostRegisterResult = CUresult(result);
}
void fake_cuda_set_read_only_host_memory(int readOnly) {
  readOnlyHostMemory = readOnly != 0;
}
size_t fake_cuda_pinned_bytes() {
  size_t bytes = 0;
  for (const HostRange &range : hostRanges)
    bytes += range.bytes;
  return bytes;
}
int fake_cuda_pinned_ranges() { return int(hostRanges.size()); }
unsigned fake_cuda_last_pin_flags() {
  return hostRanges.empty() ? ~0u : hostRanges.back().flags;
}

// ---- the driver API ----
CUresult cuInit(unsigned) {
  return mode() == "no-device" ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  *v = mode() == "old" ? 12040 : 13000;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    *s = "CUDA_ERROR_OUT_OF_MEMORY";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *s = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_FOUND:
    *s = "CUDA_ERROR_NOT_FOUND";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_HANDLE:
    *s = "CUDA_ERROR_INVALID_HANDLE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_PERMITTED:
    *s = "CUDA_ERROR_NOT_PERMITTED";
    return CUDA_SUCCESS;
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    *s = "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    *s = "out of memory";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *s = "an illegal memory access was encountered";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuDeviceGetCount(int *n) {
  *n = 2;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int length, CUdevice d) {
  std::snprintf(name, size_t(length), "Fake GPU %d", int(d));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *v = mode() == "sm75" ? 7 : 9;
  else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *v = mode() == "sm75" ? 5 : 0;
  else
    *v = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(&contextTag);
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  ++moduleLoads;
  if (std::strncmp(static_cast<const char *>(image), "FAKE", 4) != 0)
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  *m = reinterpret_cast<CUmodule>(&moduleTag);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule, const char *name) {
  if (std::strncmp(name, "missing", 7) == 0)
    return CUDA_ERROR_NOT_FOUND;
  functions.push_back(Function{name});
  *f = reinterpret_cast<CUfunction>(&functions.back());
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned,
                        CUstream, void **, void **) {
  CUresult r = launchResult;
  launchResult = CUDA_SUCCESS;
  if (r != CUDA_SUCCESS)
    return r;
  ++launches;
  lastLaunch = reinterpret_cast<Function *>(f)->name;
  lastGrid[0] = gx, lastGrid[1] = gy, lastGrid[2] = gz;
  lastBlock[0] = bx, lastBlock[1] = by, lastBlock[2] = bz;
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned) {
  if (streamsCreated == 4)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *s = reinterpret_cast<CUstream>(&streamTags[streamsCreated++]);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) {
  CUresult r = syncResult;
  syncResult = CUDA_SUCCESS;
  return r;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned) {
  if (streamIndex(s) == 4 || !events.count(e))
    return CUDA_ERROR_INVALID_HANDLE;
  ++eventWaits;
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *e, unsigned) {
  // Distinct addresses, never dereferenced.
  *e = reinterpret_cast<CUevent>(new char);
  events.insert(*e);
  ++eventsCreated;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  CUresult r = eventRecordResult;
  eventRecordResult = CUDA_SUCCESS;
  if (r != CUDA_SUCCESS)
    return r;
  if (streamIndex(s) == 4 || !events.count(e))
    return CUDA_ERROR_INVALID_HANDLE;
  ++eventRecords;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) {
  if (!events.erase(e))
    return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<char *>(e);
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  static const bool limited = [] {
    if (const char *limit = std::getenv("FAKE_CUDA_MEMORY_LIMIT"))
      memoryLimit = std::strtoull(limit, nullptr, 10);
    return true;
  }();
  (void)limited;
  if (memoryUsed + bytes > memoryLimit)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *block = std::malloc(bytes);
  memoryUsed += bytes;
  blocks.push_back({block, bytes});
  ++allocations;
  *p = reinterpret_cast<CUdeviceptr>(block);
  return CUDA_SUCCESS;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned) {
  return cuMemAlloc_v2(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  for (auto it = blocks.begin(); it != blocks.end(); ++it)
    if (it->first == reinterpret_cast<void *>(p)) {
      memoryUsed -= it->second;
      blocks.erase(it);
      std::free(reinterpret_cast<void *>(p));
      ++frees;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream s) {
  ++copiesOnStream[streamIndex(s)];
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
               bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *copy, CUstream s) {
  ++copiesOnStream[streamIndex(s)];
  // Device or unified addresses (host memory is addressable here too).
  auto addressable = [](CUmemorytype type) {
    return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED;
  };
  if (!addressable(copy->srcMemoryType) || !addressable(copy->dstMemoryType) ||
      copy->srcPitch < copy->WidthInBytes ||
      copy->dstPitch < copy->WidthInBytes)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t row = 0; row < copy->Height; ++row)
    std::memmove(
        reinterpret_cast<char *>(copy->dstDevice) + row * copy->dstPitch,
        reinterpret_cast<const char *>(copy->srcDevice) + row * copy->srcPitch,
        copy->WidthInBytes);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  std::memset(reinterpret_cast<void *>(p), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD16Async(CUdeviceptr p, unsigned short v, size_t n, CUstream) {
  auto *q = reinterpret_cast<unsigned short *>(p);
  for (size_t i = 0; i < n; ++i)
    q[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, CUstream) {
  auto *q = reinterpret_cast<unsigned *>(p);
  for (size_t i = 0; i < n; ++i)
    q[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo_v2(size_t *freeBytes, size_t *total) {
  *total = memoryLimit == SIZE_MAX ? size_t(80) << 30 : memoryLimit;
  *freeBytes = *total - memoryUsed;
  return CUDA_SUCCESS;
}
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
  if (hostRegisterResult != CUDA_SUCCESS)
    return hostRegisterResult;
  if (!p || !bytes)
    return CUDA_ERROR_INVALID_VALUE;
  if (readOnlyHostMemory && !(flags & CU_MEMHOSTREGISTER_READ_ONLY))
    return CUDA_ERROR_INVALID_VALUE;
  // The driver pins whole pages: ranges that share one overlap.
  auto page = [](const char *a) { return uintptr_t(a) / 4096; };
  char *start = static_cast<char *>(p);
  for (const HostRange &range : hostRanges)
    if (page(start) <= page(range.start + range.bytes - 1) &&
        page(range.start) <= page(start + bytes - 1))
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  hostRanges.push_back({start, bytes, flags});
  return CUDA_SUCCESS;
}
CUresult cuMemHostUnregister(void *p) {
  for (auto it = hostRanges.begin(); it != hostRanges.end(); ++it)
    if (it->start == p) {
      hostRanges.erase(it);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
} // extern "C"
