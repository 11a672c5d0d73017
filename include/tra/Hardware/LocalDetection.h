//===- LocalDetection.h - Describing the machine we run on ------*- C++ -*-===//
//
// The pieces of detectLocalHardware(), exposed so that each estimate can be
// tested on fixed inputs (a /proc/cpuinfo of another machine, the properties
// of a GPU we do not have).
//
// The estimates (documented in docs/HardwareDescription.md):
//   CPU peak f32 flop/s = physical cores x clock x f32 flop/cycle/core, where
//     flop/cycle/core is 64 with AVX-512F, 32 with AVX2+FMA, 16 with AVX,
//     8 with SSE, 16 with AArch64 ASIMD, 2 otherwise;
//     bf16 = 2 x f32 with AVX512_BF16, f16 = 2 x f32 with AVX512_FP16.
//   CPU memory bandwidth = 20 GB/s per physical core, at most 200 GB/s per
//     socket.
//   GPU peak f32 flop/s = SMs x FP32 lanes/SM x 2 x max SM clock; f16/bf16
//     from the dense tensor-core rate per SM per clock of the architecture.
//   GPU memory bandwidth = 2 x memory clock x bus width.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_HARDWARE_LOCALDETECTION_H
#define TRA_HARDWARE_LOCALDETECTION_H

#include "tra/Hardware/Hardware.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tra {
namespace hw {

/// What /proc/cpuinfo says about the processor.
struct CPUInfo {
  /// "model name" (x86) or a name built from the CPU part (AArch64).
  std::string model;
  /// Clock in MHz ("cpu MHz"); 0 when not stated.
  double mhz = 0;
  /// Logical CPUs listed ("processor" entries).
  unsigned logicalCPUs = 0;
  /// Logical CPUs per physical core ("siblings" / "cpu cores"); 1 when not
  /// stated.
  unsigned threadsPerCore = 1;
  /// Distinct "physical id" values; 1 when not stated.
  unsigned sockets = 1;
  bool sse = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  /// AArch64 Advanced SIMD ("asimd" in Features).
  bool asimd = false;
};

/// Parses the text of /proc/cpuinfo (x86 or AArch64 layout).
CPUInfo parseCPUInfo(llvm::StringRef text);

/// The nominal clock in a model name such as "Intel(R) Xeon(R) Gold 6326 CPU
/// @ 2.90GHz", in MHz; std::nullopt when the name states none.
std::optional<double> nominalClockMHz(llvm::StringRef model);

/// MemTotal of a /proc/meminfo text, in bytes.
std::optional<uint64_t> parseMemTotal(llvm::StringRef text);

/// The limit of a cgroup v2 "cpu.max" file ("QUOTA PERIOD" or "max PERIOD"),
/// rounded up to whole CPUs; std::nullopt when unlimited or malformed.
std::optional<unsigned> parseCgroupCPUMax(llvm::StringRef text);

/// The limit of a cgroup v2 "memory.max" file in bytes; std::nullopt when
/// "max" or malformed.
std::optional<uint64_t> parseCgroupMemoryMax(llvm::StringRef text);

/// Peak f32 flop/cycle of one physical core with the SIMD units `info` lists.
unsigned f32FlopsPerCycle(const CPUInfo &info);

/// The CPU of this machine as one device. `usableThreads` is the number of
/// logical CPUs this process may run on; `clockMHz` the clock to assume.
/// Appends a sentence on how the figures were derived to `howDerived`.
DeviceGroupSpec estimateCPUDevice(const CPUInfo &info, unsigned usableThreads,
                                  double clockMHz, uint64_t memoryBytes,
                                  std::string &howDerived);

/// What the CUDA driver (and, where available, NVML) reports about one GPU.
struct GPUProperties {
  std::string name;
  uint64_t totalMemoryBytes = 0;
  unsigned multiprocessors = 0;
  /// Maximum SM clock and memory clock, in kHz.
  unsigned clockKHz = 0;
  unsigned memoryClockKHz = 0;
  unsigned memoryBusWidthBits = 0;
  unsigned computeMajor = 0;
  unsigned computeMinor = 0;
  /// Active NVLink links of this GPU (from NVML); 0 when none or unknown.
  unsigned nvlinkLinks = 0;
  /// Maximum PCIe generation and width (from NVML); 0 when unknown.
  unsigned pcieGeneration = 0;
  unsigned pcieWidth = 0;
};

/// FP32 lanes per SM for a compute capability; 0 when unknown.
unsigned gpuF32LanesPerSM(unsigned major, unsigned minor);
/// Dense f16 tensor-core flop per SM per clock; 0 when the architecture has
/// no tensor cores or is unknown.
unsigned gpuF16TensorFlopsPerClockPerSM(unsigned major, unsigned minor);

/// A device group for one GPU from its properties. Fails (with a message
/// naming the GPU) when the properties are too incomplete to estimate.
llvm::Expected<DeviceGroupSpec> estimateGPUDevice(const GPUProperties &gpu);

/// The link between the GPUs of one machine: NVLink when every GPU has
/// active NVLink links (bandwidth from the smallest link count), otherwise
/// PCIe at the smallest generation and width reported, otherwise PCIe 4.0
/// x16. Appends how it was derived to `howDerived`.
LinkSpec estimateGPULink(llvm::ArrayRef<GPUProperties> gpus,
                         std::string &howDerived);

/// Queries the CUDA driver (`cudaLibrary`, opened at run time) and NVML
/// (`nvmlLibrary`, optional). Returns no GPUs when there is no driver or no
/// device; `note` then says why (and otherwise notes a missing NVML).
std::vector<GPUProperties>
queryCUDADevices(std::string &note,
                 llvm::StringRef cudaLibrary = "libcuda.so.1",
                 llvm::StringRef nvmlLibrary = "libnvidia-ml.so.1");

/// Describes this machine from the operating system's view only (no GPUs).
llvm::Expected<MachineSpec> detectLocalCPUSpec();

/// The description of a machine whose CPU is `cpuSpec` (from
/// detectLocalCPUSpec) and whose CUDA driver reports `gpus`: with no usable
/// GPU, the CPU; otherwise the GPUs (identical consecutive GPUs grouped) with
/// a GPU-GPU link from estimateGPULink, and the CPU only drives them. `note`
/// (from queryCUDADevices) is appended to the description.
llvm::Expected<HardwareDescription>
describeLocalMachine(MachineSpec cpuSpec, llvm::ArrayRef<GPUProperties> gpus,
                     llvm::StringRef note);

} // namespace hw
} // namespace tra

#endif // TRA_HARDWARE_LOCALDETECTION_H
