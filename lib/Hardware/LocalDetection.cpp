//===- LocalDetection.cpp - Describing the machine we run on -------------===//
//
// detectLocalHardware(): the CPU from the operating system (/proc, sched
// affinity, cgroup limits) and the GPUs from the CUDA driver, opened with
// dlopen at run time so that nothing links against CUDA. Every estimate is
// explained in the "description" of the result and in
// docs/HardwareDescription.md.
//
//===----------------------------------------------------------------------===//

#include "tra/Hardware/LocalDetection.h"

#include "HardwareInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif
#include <unistd.h>

using namespace tra::hw;

//===----------------------------------------------------------------------===//
// Text parsers
//===----------------------------------------------------------------------===//

CPUInfo tra::hw::parseCPUInfo(llvm::StringRef text) {
  CPUInfo info;
  llvm::StringSet<> physicalIds;
  unsigned siblings = 0, coresPerSocket = 0;
  std::string armImplementer, armPart;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [rawKey, rawValue] = line.split(':');
    llvm::StringRef key = rawKey.trim();
    llvm::StringRef value = rawValue.trim();
    if (key == "processor") {
      ++info.logicalCPUs;
    } else if (key == "model name") {
      if (info.model.empty())
        info.model = value.str();
    } else if (key == "cpu MHz") {
      double mhz = 0;
      if (!value.getAsDouble(mhz))
        info.mhz = std::max(info.mhz, mhz);
    } else if (key == "siblings") {
      if (siblings == 0)
        value.getAsInteger(10, siblings);
    } else if (key == "cpu cores") {
      if (coresPerSocket == 0)
        value.getAsInteger(10, coresPerSocket);
    } else if (key == "physical id") {
      physicalIds.insert(value);
    } else if (key == "CPU implementer") {
      armImplementer = value.str();
    } else if (key == "CPU part") {
      armPart = value.str();
    } else if (key == "flags" || key == "Features") {
      llvm::SmallVector<llvm::StringRef> flags;
      value.split(flags, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef flag : flags) {
        info.sse |= flag == "sse";
        info.avx |= flag == "avx";
        info.avx2 |= flag == "avx2";
        info.fma |= flag == "fma";
        info.avx512f |= flag == "avx512f";
        info.avx512bf16 |= flag == "avx512_bf16";
        info.avx512fp16 |= flag == "avx512_fp16";
        info.asimd |= flag == "asimd";
      }
    }
  }
  if (siblings != 0 && coresPerSocket != 0 && siblings >= coresPerSocket &&
      siblings % coresPerSocket == 0)
    info.threadsPerCore = siblings / coresPerSocket;
  info.sockets = std::max<unsigned>(1, physicalIds.size());
  if (info.model.empty() && !armPart.empty())
    info.model = "AArch64 CPU (implementer " + armImplementer + ", part " +
                 armPart + ")";
  return info;
}

std::optional<uint64_t> tra::hw::parseMemTotal(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("MemTotal:"))
      continue;
    llvm::StringRef value = line.trim();
    uint64_t kib = 0;
    if (value.consumeInteger(10, kib) || kib == 0)
      return std::nullopt;
    value = value.trim();
    if (!value.empty() && value != "kB")
      return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<unsigned> tra::hw::parseCgroupCPUMax(llvm::StringRef text) {
  auto [quotaText, periodText] = text.trim().split(' ');
  uint64_t quota = 0, period = 0;
  if (quotaText == "max" || quotaText.getAsInteger(10, quota) ||
      periodText.trim().getAsInteger(10, period) || quota == 0 || period == 0)
    return std::nullopt;
  return static_cast<unsigned>((quota + period - 1) / period);
}

std::optional<uint64_t> tra::hw::parseCgroupMemoryMax(llvm::StringRef text) {
  uint64_t bytes = 0;
  llvm::StringRef value = text.trim();
  if (value == "max" || value.getAsInteger(10, bytes) || bytes == 0)
    return std::nullopt;
  return bytes;
}

std::optional<double> tra::hw::nominalClockMHz(llvm::StringRef model) {
  size_t at = model.rfind("@ ");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef ghzText = model.drop_front(at + 2).trim();
  double ghz = 0;
  if (!ghzText.consume_back("GHz") || ghzText.trim().getAsDouble(ghz) ||
      !(ghz > 0))
    return std::nullopt;
  return ghz * 1000;
}

//===----------------------------------------------------------------------===//
// CPU estimates
//===----------------------------------------------------------------------===//

unsigned tra::hw::f32FlopsPerCycle(const CPUInfo &info) {
  // Two FMA pipes of the widest vector width: lanes x 2 (mul + add) x 2.
  if (info.avx512f)
    return 64;
  if (info.avx2 && info.fma)
    return 32;
  // AVX without FMA: one 8-lane add and one 8-lane mul per cycle.
  if (info.avx)
    return 16;
  if (info.asimd)
    return 16;
  if (info.sse)
    return 8;
  return 2;
}

namespace {

/// Sustained memory bandwidth assumed per physical core and at most per
/// socket (see docs/HardwareDescription.md, "Local detection").
constexpr double kBandwidthPerCore = 20e9;
constexpr double kBandwidthPerSocket = 200e9;

llvm::StringRef simdName(const CPUInfo &info) {
  if (info.avx512f)
    return "AVX-512";
  if (info.avx2 && info.fma)
    return "AVX2+FMA";
  if (info.avx)
    return "AVX";
  if (info.asimd)
    return "ASIMD";
  if (info.sse)
    return "SSE";
  return "scalar";
}

} // namespace

DeviceGroupSpec tra::hw::estimateCPUDevice(const CPUInfo &info,
                                           unsigned usableThreads,
                                           double clockMHz,
                                           uint64_t memoryBytes,
                                           std::string &howDerived) {
  usableThreads = std::max(1u, usableThreads);
  unsigned physicalCores =
      std::max(1u, usableThreads / std::max(1u, info.threadsPerCore));
  unsigned perCycle = f32FlopsPerCycle(info);
  double f32 = physicalCores * clockMHz * 1e6 * perCycle;

  DeviceGroupSpec spec;
  spec.kind = DeviceKind::CPU;
  spec.count = 1;
  spec.model = info.model;
  spec.memoryBytes = memoryBytes;
  spec.cores = usableThreads;
  spec.peakFlops[static_cast<unsigned>(DType::F32)] = f32;
  if (info.avx512bf16)
    spec.peakFlops[static_cast<unsigned>(DType::BF16)] = 2 * f32;
  if (info.avx512fp16)
    spec.peakFlops[static_cast<unsigned>(DType::F16)] = 2 * f32;
  spec.memoryBandwidth =
      std::min(physicalCores * kBandwidthPerCore,
               std::max(1u, info.sockets) * kBandwidthPerSocket);

  howDerived += llvm::formatv(
      "CPU: {0} threads usable ({1} physical cores), {2} MHz, {3} => {4} f32 "
      "flop/cycle/core, peak f32 = cores x clock x flop/cycle{5}; memory "
      "bandwidth estimated as 20 GB/s per physical core (at most 200 GB/s per "
      "socket).",
      usableThreads, physicalCores, llvm::format("%.0f", clockMHz),
      simdName(info), perCycle,
      info.avx512bf16 || info.avx512fp16
          ? "; f16/bf16 at 2x f32 where AVX512_FP16/AVX512_BF16 exist"
          : "");
  return spec;
}

//===----------------------------------------------------------------------===//
// GPU estimates
//===----------------------------------------------------------------------===//

unsigned tra::hw::gpuF32LanesPerSM(unsigned major, unsigned minor) {
  switch (major) {
  case 5:
    return 128;
  case 6:
    return minor == 0 ? 64 : 128;
  case 7:
    return 64;
  case 8:
    return minor == 0 ? 64 : 128;
  case 9:
  case 10:
  case 11:
  case 12:
    return 128;
  default:
    return 0;
  }
}

unsigned tra::hw::gpuF16TensorFlopsPerClockPerSM(unsigned major,
                                                 unsigned minor) {
  switch (major) {
  case 7: // Volta, Turing: 8 tensor cores x 64 FMA.
  case 11:
  case 12: // Consumer Blackwell: as Ampere/Ada GeForce with f16 accumulate.
    return 1024;
  case 8: // A100: 2048; GA10x/Ada: 4 tensor cores x 128 FMA.
    return minor == 0 ? 2048 : 1024;
  case 9: // Hopper.
    return 4096;
  case 10: // Data-centre Blackwell.
    return 8192;
  default:
    return 0;
  }
}

llvm::Expected<DeviceGroupSpec>
tra::hw::estimateGPUDevice(const GPUProperties &gpu) {
  auto fail = [&](const llvm::Twine &why) {
    return detail::makeError("<local>", "", "GPU \"" + gpu.name + "\": " + why);
  };
  unsigned lanes = gpuF32LanesPerSM(gpu.computeMajor, gpu.computeMinor);
  if (lanes == 0)
    return fail("unknown compute capability " + llvm::Twine(gpu.computeMajor) +
                "." + llvm::Twine(gpu.computeMinor));
  if (gpu.multiprocessors == 0 || gpu.clockKHz == 0)
    return fail("the driver reports no SM count or clock");
  if (gpu.memoryClockKHz == 0 || gpu.memoryBusWidthBits == 0)
    return fail("the driver reports no memory clock or bus width");
  if (gpu.totalMemoryBytes == 0)
    return fail("the driver reports no memory");

  double clock = gpu.clockKHz * 1e3;
  DeviceGroupSpec spec;
  spec.kind = DeviceKind::GPU;
  spec.count = 1;
  spec.model = gpu.name;
  spec.memoryBytes = gpu.totalMemoryBytes;
  spec.cores = gpu.multiprocessors;
  spec.memoryBandwidth =
      2.0 * gpu.memoryClockKHz * 1e3 * (gpu.memoryBusWidthBits / 8.0);
  spec.peakFlops[static_cast<unsigned>(DType::F32)] =
      gpu.multiprocessors * lanes * 2.0 * clock;
  if (unsigned tensor =
          gpuF16TensorFlopsPerClockPerSM(gpu.computeMajor, gpu.computeMinor)) {
    double f16 = gpu.multiprocessors * double(tensor) * clock;
    spec.peakFlops[static_cast<unsigned>(DType::F16)] = f16;
    if (gpu.computeMajor >= 8)
      spec.peakFlops[static_cast<unsigned>(DType::BF16)] = f16;
  }
  return spec;
}

namespace {

/// Per-direction bandwidth of one NVLink link of a compute capability.
double nvlinkBandwidthPerLink(unsigned major, unsigned minor) {
  if (major >= 10)
    return 50e9;
  if (major == 8 && minor != 0)
    return 14.0625e9; // GA102 NVLink bridge links.
  return 25e9;
}

/// Per-direction bandwidth of one PCIe lane, after encoding.
double pcieLaneBandwidth(unsigned generation) {
  switch (generation) {
  case 1:
    return 0.25e9;
  case 2:
    return 0.5e9;
  case 3:
    return 0.985e9;
  case 4:
    return 1.969e9;
  case 5:
    return 3.938e9;
  default:
    return 7.563e9;
  }
}

constexpr double kNVLinkLatency = 3e-6;
constexpr double kPCIeLatency = 10e-6;

} // namespace

LinkSpec tra::hw::estimateGPULink(llvm::ArrayRef<GPUProperties> gpus,
                                  std::string &howDerived) {
  LinkSpec link;
  link.between = std::make_pair(DeviceKind::GPU, DeviceKind::GPU);
  bool allNVLink = !gpus.empty() && llvm::all_of(gpus, [](const auto &gpu) {
    return gpu.nvlinkLinks > 0;
  });
  if (allNVLink) {
    double bandwidth = HUGE_VAL;
    for (const GPUProperties &gpu : gpus)
      bandwidth = std::min(
          bandwidth, gpu.nvlinkLinks * nvlinkBandwidthPerLink(
                                           gpu.computeMajor, gpu.computeMinor));
    link.kind = LinkKind::NVLink;
    link.bandwidth = bandwidth;
    link.latency = kNVLinkLatency;
    howDerived += " GPU-GPU: NVLink, active links x per-link bandwidth "
                  "(NVML), assuming every GPU reaches every other at that "
                  "rate (NVSwitch).";
    return link;
  }
  bool allPCIeKnown = !gpus.empty() && llvm::all_of(gpus, [](const auto &gpu) {
    return gpu.pcieGeneration > 0 && gpu.pcieWidth > 0;
  });
  link.kind = LinkKind::PCIe;
  link.latency = kPCIeLatency;
  if (allPCIeKnown) {
    double bandwidth = HUGE_VAL;
    for (const GPUProperties &gpu : gpus)
      bandwidth = std::min(
          bandwidth, gpu.pcieWidth * pcieLaneBandwidth(gpu.pcieGeneration));
    link.bandwidth = bandwidth;
    howDerived += " GPU-GPU: PCIe at the smallest maximum generation and "
                  "width NVML reports.";
    return link;
  }
  link.bandwidth = 16 * pcieLaneBandwidth(4);
  howDerived += " GPU-GPU: PCIe 4.0 x16 assumed (NVML not available).";
  return link;
}

//===----------------------------------------------------------------------===//
// CUDA driver and NVML, opened at run time
//===----------------------------------------------------------------------===//

namespace {

// The few driver API entry points used, with the ABI of cuda.h.
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
constexpr int kAttrClockRate = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRate = 36;
constexpr int kAttrGlobalMemoryBusWidth = 37;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

using CuInitFn = CUresult (*)(unsigned);
using CuDeviceGetCountFn = CUresult (*)(int *);
using CuDeviceGetFn = CUresult (*)(CUdevice *, int);
using CuDeviceGetNameFn = CUresult (*)(char *, int, CUdevice);
using CuDeviceTotalMemFn = CUresult (*)(size_t *, CUdevice);
using CuDeviceGetAttributeFn = CUresult (*)(int *, int, CUdevice);
using CuDeviceGetPCIBusIdFn = CUresult (*)(char *, int, CUdevice);

// NVML, for link topology and clocks the driver API does not give.
using NvmlReturn = int;
using NvmlDevice = void *;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvmlMaxLinks = 18;
constexpr int kNvmlClockSM = 1;
constexpr int kNvmlClockMem = 2;

using NvmlInitFn = NvmlReturn (*)();
using NvmlShutdownFn = NvmlReturn (*)();
using NvmlGetHandleByPciBusIdFn = NvmlReturn (*)(const char *, NvmlDevice *);
using NvmlGetNvLinkStateFn = NvmlReturn (*)(NvmlDevice, unsigned, int *);
using NvmlGetUnsignedFn = NvmlReturn (*)(NvmlDevice, unsigned *);
using NvmlGetMaxClockInfoFn = NvmlReturn (*)(NvmlDevice, int, unsigned *);

template <typename Fn>
Fn lookup(llvm::sys::DynamicLibrary &library, const char *name) {
  return reinterpret_cast<Fn>(library.getAddressOfSymbol(name));
}

/// Fills the NVML-only fields of `gpu`; leaves them 0 when NVML is missing.
class NVML {
public:
  explicit NVML(llvm::StringRef path) {
    std::string error;
    library = llvm::sys::DynamicLibrary::getLibrary(path.str().c_str(), &error);
    if (!library.isValid())
      return;
    auto init = lookup<NvmlInitFn>(library, "nvmlInit_v2");
    shutdown = lookup<NvmlShutdownFn>(library, "nvmlShutdown");
    byBusId = lookup<NvmlGetHandleByPciBusIdFn>(
        library, "nvmlDeviceGetHandleByPciBusId_v2");
    nvlinkState =
        lookup<NvmlGetNvLinkStateFn>(library, "nvmlDeviceGetNvLinkState");
    pcieGeneration = lookup<NvmlGetUnsignedFn>(
        library, "nvmlDeviceGetMaxPcieLinkGeneration");
    pcieWidth =
        lookup<NvmlGetUnsignedFn>(library, "nvmlDeviceGetMaxPcieLinkWidth");
    maxClock =
        lookup<NvmlGetMaxClockInfoFn>(library, "nvmlDeviceGetMaxClockInfo");
    ready = init && shutdown && byBusId && init() == kNvmlSuccess;
  }
  ~NVML() {
    if (ready)
      shutdown();
  }

  bool isReady() const { return ready; }

  void fill(const char *busId, GPUProperties &gpu) {
    NvmlDevice device = nullptr;
    if (!ready || byBusId(busId, &device) != kNvmlSuccess)
      return;
    if (nvlinkState) {
      for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
        int enabled = 0;
        if (nvlinkState(device, link, &enabled) == kNvmlSuccess && enabled)
          ++gpu.nvlinkLinks;
      }
    }
    if (pcieGeneration)
      pcieGeneration(device, &gpu.pcieGeneration);
    if (pcieWidth)
      pcieWidth(device, &gpu.pcieWidth);
    unsigned mhz = 0;
    if (maxClock && gpu.clockKHz == 0 &&
        maxClock(device, kNvmlClockSM, &mhz) == kNvmlSuccess)
      gpu.clockKHz = mhz * 1000;
    if (maxClock && gpu.memoryClockKHz == 0 &&
        maxClock(device, kNvmlClockMem, &mhz) == kNvmlSuccess)
      gpu.memoryClockKHz = mhz * 1000;
  }

private:
  llvm::sys::DynamicLibrary library;
  bool ready = false;
  NvmlShutdownFn shutdown = nullptr;
  NvmlGetHandleByPciBusIdFn byBusId = nullptr;
  NvmlGetNvLinkStateFn nvlinkState = nullptr;
  NvmlGetUnsignedFn pcieGeneration = nullptr;
  NvmlGetUnsignedFn pcieWidth = nullptr;
  NvmlGetMaxClockInfoFn maxClock = nullptr;
};

} // namespace

std::vector<GPUProperties>
tra::hw::queryCUDADevices(std::string &note, llvm::StringRef cudaLibrary,
                          llvm::StringRef nvmlLibrary) {
  std::vector<GPUProperties> gpus;
  std::string error;
  // Not a permanent library: its symbols must not join the process-wide
  // search list that JIT symbol resolution uses.
  llvm::sys::DynamicLibrary cuda =
      llvm::sys::DynamicLibrary::getLibrary(cudaLibrary.str().c_str(), &error);
  if (!cuda.isValid()) {
    note = ("No CUDA driver (" + cudaLibrary + " not found).").str();
    return gpus;
  }
  auto init = lookup<CuInitFn>(cuda, "cuInit");
  auto getCount = lookup<CuDeviceGetCountFn>(cuda, "cuDeviceGetCount");
  auto get = lookup<CuDeviceGetFn>(cuda, "cuDeviceGet");
  auto getName = lookup<CuDeviceGetNameFn>(cuda, "cuDeviceGetName");
  auto totalMem = lookup<CuDeviceTotalMemFn>(cuda, "cuDeviceTotalMem_v2");
  auto getAttribute =
      lookup<CuDeviceGetAttributeFn>(cuda, "cuDeviceGetAttribute");
  auto getBusId = lookup<CuDeviceGetPCIBusIdFn>(cuda, "cuDeviceGetPCIBusId");
  if (!init || !getCount || !get || !getName || !totalMem || !getAttribute) {
    note = "The CUDA driver lacks entry points this build needs.";
    return gpus;
  }
  int count = 0;
  if (CUresult result = init(0); result != kCudaSuccess) {
    note = llvm::formatv("cuInit failed (CUresult {0}); no GPUs used.", result);
    return gpus;
  }
  if (getCount(&count) != kCudaSuccess || count <= 0) {
    note = "The CUDA driver reports no devices.";
    return gpus;
  }

  NVML nvml(nvmlLibrary);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (get(&device, ordinal) != kCudaSuccess)
      continue;
    GPUProperties gpu;
    char name[256] = {0};
    if (getName(name, sizeof(name) - 1, device) == kCudaSuccess)
      gpu.name = name;
    size_t bytes = 0;
    if (totalMem(&bytes, device) == kCudaSuccess)
      gpu.totalMemoryBytes = bytes;
    auto attribute = [&](int which) -> unsigned {
      int value = 0;
      if (getAttribute(&value, which, device) != kCudaSuccess || value < 0)
        return 0;
      return static_cast<unsigned>(value);
    };
    gpu.multiprocessors = attribute(kAttrMultiprocessorCount);
    gpu.clockKHz = attribute(kAttrClockRate);
    gpu.memoryClockKHz = attribute(kAttrMemoryClockRate);
    gpu.memoryBusWidthBits = attribute(kAttrGlobalMemoryBusWidth);
    gpu.computeMajor = attribute(kAttrComputeCapabilityMajor);
    gpu.computeMinor = attribute(kAttrComputeCapabilityMinor);
    char busId[64] = {0};
    if (getBusId && getBusId(busId, sizeof(busId) - 1, device) == kCudaSuccess)
      nvml.fill(busId, gpu);
    gpus.push_back(std::move(gpu));
  }
  note = nvml.isReady() ? "" : "NVML not available.";
  return gpus;
}

//===----------------------------------------------------------------------===//
// The operating system's view
//===----------------------------------------------------------------------===//

namespace {

/// The whole text of a file, including /proc files that report size 0.
std::optional<std::string> readTextFile(const llvm::Twine &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

/// Logical CPUs this process may run on.
unsigned usableThreads(std::string &howDerived) {
  unsigned threads = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    threads = CPU_COUNT(&set);
#endif
  if (threads == 0)
    threads = std::thread::hardware_concurrency();
  if (std::optional<std::string> text =
          readTextFile("/sys/fs/cgroup/cpu.max")) {
    std::optional<unsigned> limit = parseCgroupCPUMax(*text);
    if (limit && *limit < threads) {
      threads = *limit;
      howDerived += " Threads limited by the cgroup cpu.max quota.";
    }
  }
  return std::max(1u, threads);
}

std::optional<uint64_t> physicalMemory(std::string &howDerived) {
  std::optional<uint64_t> bytes;
  if (std::optional<std::string> text = readTextFile("/proc/meminfo"))
    bytes = parseMemTotal(*text);
  if (!bytes) {
    long pages = sysconf(_SC_PHYS_PAGES);
    long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageSize > 0)
      bytes = uint64_t(pages) * uint64_t(pageSize);
  }
  if (std::optional<std::string> text =
          readTextFile("/sys/fs/cgroup/memory.max")) {
    std::optional<uint64_t> limit = parseCgroupMemoryMax(*text);
    if (limit && (!bytes || *limit < *bytes)) {
      bytes = limit;
      howDerived += " Memory limited by the cgroup memory.max limit.";
    }
  }
  return bytes;
}

/// The clock to assume for peak flop/s, in MHz, and where it came from.
/// Stable sources come first so that detection gives the same description
/// every time it runs.
double cpuClockMHz(const CPUInfo &info, std::string &source) {
  if (std::optional<std::string> text =
          readTextFile("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency")) {
    uint64_t khz = 0;
    if (!llvm::StringRef(*text).trim().getAsInteger(10, khz) && khz > 0) {
      source = "base frequency from cpufreq";
      return khz / 1000.0;
    }
  }
  if (std::optional<double> mhz = nominalClockMHz(info.model)) {
    source = "nominal clock in the model name";
    return *mhz;
  }
  if (std::optional<std::string> text = readTextFile(
          "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) {
    uint64_t khz = 0;
    if (!llvm::StringRef(*text).trim().getAsInteger(10, khz) && khz > 0) {
      source = "maximum frequency from cpufreq";
      return khz / 1000.0;
    }
  }
  // The current clock: it varies between reads on machines that scale
  // their frequency, so it comes last.
  if (info.mhz > 0) {
    source = "cpu MHz in /proc/cpuinfo";
    return info.mhz;
  }
  source = "no clock reported; 2000 MHz assumed";
  return 2000;
}

std::string hostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == 0)
    return "localhost";
  return name;
}

} // namespace

llvm::Expected<MachineSpec> tra::hw::detectLocalCPUSpec() {
  std::string notes;
  CPUInfo info;
  if (std::optional<std::string> text = readTextFile("/proc/cpuinfo"))
    info = parseCPUInfo(*text);
  unsigned threads = usableThreads(notes);
  std::optional<uint64_t> memory = physicalMemory(notes);
  if (!memory)
    return detail::makeError("<local>", "",
                             "cannot determine the size of "
                             "the physical memory");
  std::string clockSource;
  double mhz = cpuClockMHz(info, clockSource);

  std::string howDerived =
      "Detected at run time (--hw local). Memory: MemTotal of /proc/meminfo.";
  howDerived += notes;
  howDerived += " Clock: " + clockSource + ". ";
  DeviceGroupSpec cpu =
      estimateCPUDevice(info, threads, mhz, *memory, howDerived);

  MachineSpec spec;
  spec.name = "local";
  spec.description = std::move(howDerived);
  NodeGroupSpec node;
  node.name = hostName();
  node.devices.push_back(std::move(cpu));
  spec.nodes.push_back(std::move(node));
  return spec;
}

llvm::Expected<HardwareDescription>
tra::hw::describeLocalMachine(MachineSpec spec,
                              llvm::ArrayRef<GPUProperties> gpus,
                              llvm::StringRef note) {
  std::vector<DeviceGroupSpec> gpuGroups;
  std::vector<GPUProperties> usedGPUs;
  std::string skipped;
  for (const GPUProperties &gpu : gpus) {
    llvm::Expected<DeviceGroupSpec> device = estimateGPUDevice(gpu);
    if (!device) {
      skipped += " Skipped " + llvm::toString(device.takeError()) + ".";
      continue;
    }
    usedGPUs.push_back(gpu);
    // Consecutive identical GPUs form one group.
    if (!gpuGroups.empty()) {
      DeviceGroupSpec counted = *device;
      counted.count = gpuGroups.back().count;
      if (counted == gpuGroups.back()) {
        ++gpuGroups.back().count;
        continue;
      }
    }
    gpuGroups.push_back(std::move(*device));
  }

  std::string &description = spec.description;
  if (gpuGroups.empty()) {
    if (!note.empty())
      description += (" " + note).str();
    description += skipped;
    return HardwareDescription::create(std::move(spec), "<local>");
  }

  // With GPUs, the GPUs are the devices; the host CPU drives them, and its
  // memory is the node's host-memory tier (weights the GPUs cannot hold
  // stream from it over each GPU's PCIe link).
  assert(spec.nodes.size() == 1 && "a local machine is one node");
  NodeGroupSpec &node = spec.nodes.front();
  uint64_t hostBytes = 0;
  for (const DeviceGroupSpec &cpu : node.devices)
    hostBytes = llvm::SaturatingAdd(
        hostBytes, llvm::SaturatingMultiply(cpu.memoryBytes, cpu.count));
  node.devices = std::move(gpuGroups);
  node.links.clear();
  description = llvm::formatv(
      "Detected at run time (--hw local). {0} CUDA GPU(s) used as the "
      "devices; the host CPU drives them. GPU: peak f32 = SMs x FP32 "
      "lanes/SM x 2 x max SM clock; f16/bf16 = SMs x dense tensor-core "
      "flop/clock/SM x max SM clock; memory bandwidth = 2 x memory clock x "
      "bus width.",
      usedGPUs.size());
  if (!note.empty())
    description += (" " + note).str();
  description += skipped;
  if (usedGPUs.size() > 1)
    node.links.push_back(estimateGPULink(usedGPUs, description));
  if (hostBytes > 0) {
    bool pcieKnown = llvm::all_of(usedGPUs, [](const GPUProperties &gpu) {
      return gpu.pcieGeneration > 0 && gpu.pcieWidth > 0;
    });
    double bandwidth = 16 * pcieLaneBandwidth(4);
    if (pcieKnown) {
      bandwidth = HUGE_VAL;
      for (const GPUProperties &gpu : usedGPUs)
        bandwidth = std::min(
            bandwidth, gpu.pcieWidth * pcieLaneBandwidth(gpu.pcieGeneration));
    }
    node.hostMemory = TierSpec{hostBytes, bandwidth, kPCIeLatency};
    description += pcieKnown ? " Host memory: the CPU's, over each GPU's PCIe "
                               "link (generation and width from NVML)."
                             : " Host memory: the CPU's, over PCIe 4.0 x16 "
                               "(assumed; NVML not available).";
  }
  return HardwareDescription::create(std::move(spec), "<local>");
}

llvm::Expected<HardwareDescription> tra::hw::detectLocalHardware() {
  llvm::Expected<MachineSpec> spec = detectLocalCPUSpec();
  if (!spec)
    return spec.takeError();
  std::string note;
  std::vector<GPUProperties> gpus = queryCUDADevices(note);
  return describeLocalMachine(std::move(*spec), gpus, note);
}
