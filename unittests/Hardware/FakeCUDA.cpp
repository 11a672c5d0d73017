//===- FakeCUDA.cpp - A CUDA driver and NVML that report two A100s -------===//
//
// Stands in for libcuda.so.1 and libnvidia-ml.so.1 in LocalDetectionTest so
// that the dlopen/function-pointer path of queryCUDADevices is tested on
// machines without a GPU. Signatures and constants follow cuda.h and nvml.h.
// The SM clock attribute fails, as on drivers that no longer report it, so
// the NVML clock fallback is exercised too.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace {
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kNumDevices = 2;
const char *const kBusIds[kNumDevices] = {"00000000:07:00.0",
                                          "00000000:0F:00.0"};
bool initialized = false;
int nvmlHandles[kNumDevices] = {0, 1};
} // namespace

extern "C" {

int cuInit(unsigned flags) {
  if (flags != 0)
    return kInvalidValue;
  initialized = true;
  return kSuccess;
}

int cuDeviceGetCount(int *count) {
  if (!initialized)
    return 3; // CUDA_ERROR_NOT_INITIALIZED
  *count = kNumDevices;
  return kSuccess;
}

int cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= kNumDevices)
    return kInvalidValue;
  *device = ordinal;
  return kSuccess;
}

int cuDeviceGetName(char *name, int length, int device) {
  if (device < 0 || device >= kNumDevices)
    return kInvalidValue;
  std::snprintf(name, length, "NVIDIA A100-SXM4-80GB");
  return kSuccess;
}

int cuDeviceTotalMem_v2(size_t *bytes, int device) {
  if (device < 0 || device >= kNumDevices)
    return kInvalidValue;
  *bytes = 85097971712ull;
  return kSuccess;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (device < 0 || device >= kNumDevices)
    return kInvalidValue;
  switch (attribute) {
  case 16: // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    *value = 108;
    return kSuccess;
  case 36: // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
    *value = 1593000;
    return kSuccess;
  case 37: // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
    *value = 5120;
    return kSuccess;
  case 75: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    *value = 8;
    return kSuccess;
  case 76: // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    *value = 0;
    return kSuccess;
  default: // Including 13, CU_DEVICE_ATTRIBUTE_CLOCK_RATE.
    return kInvalidValue;
  }
}

int cuDeviceGetPCIBusId(char *busId, int length, int device) {
  if (device < 0 || device >= kNumDevices)
    return kInvalidValue;
  std::snprintf(busId, length, "%s", kBusIds[device]);
  return kSuccess;
}

int nvmlInit_v2() { return kSuccess; }
int nvmlShutdown() { return kSuccess; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *busId, void **device) {
  for (int i = 0; i < kNumDevices; ++i) {
    if (std::strcmp(busId, kBusIds[i]) == 0) {
      *device = &nvmlHandles[i];
      return kSuccess;
    }
  }
  return 6; // NVML_ERROR_NOT_FOUND
}

int nvmlDeviceGetNvLinkState(void *, unsigned link, int *active) {
  if (link >= 18)
    return 2; // NVML_ERROR_INVALID_ARGUMENT
  *active = link < 12 ? 1 : 0;
  return kSuccess;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *, unsigned *generation) {
  *generation = 4;
  return kSuccess;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *, unsigned *width) {
  *width = 16;
  return kSuccess;
}

int nvmlDeviceGetMaxClockInfo(void *, int type, unsigned *mhz) {
  if (type == 1) { // NVML_CLOCK_SM
    *mhz = 1410;
    return kSuccess;
  }
  if (type == 2) { // NVML_CLOCK_MEM
    *mhz = 1593;
    return kSuccess;
  }
  return 2;
}

} // extern "C"
