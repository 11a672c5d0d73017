//===- LocalDetectionTest.cpp - Describing the machine we run on ---------===//

#include "tra/Hardware/LocalDetection.h"

#include "gtest/gtest.h"

using namespace tra::hw;

namespace {

/// Two logical CPUs of a two-socket Xeon with Hyper-Threading (abridged).
const char *const kXeonCPUInfo = R"(processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz
cpu MHz		: 800.000
physical id	: 0
siblings	: 32
cpu cores	: 16
flags		: fpu sse sse2 avx fma avx2 avx512f avx512dq

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz
cpu MHz		: 3500.000
physical id	: 1
siblings	: 32
cpu cores	: 16
flags		: fpu sse sse2 avx fma avx2 avx512f avx512dq
)";

const char *const kArmCPUInfo = R"(processor	: 0
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
CPU implementer	: 0x41
CPU part	: 0xd0c

processor	: 1
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
CPU implementer	: 0x41
CPU part	: 0xd0c
)";

TEST(LocalDetection, ParseX86CPUInfo) {
  CPUInfo info = parseCPUInfo(kXeonCPUInfo);
  EXPECT_EQ(info.model, "Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz");
  EXPECT_EQ(info.logicalCPUs, 2u);
  EXPECT_EQ(info.threadsPerCore, 2u);
  EXPECT_EQ(info.sockets, 2u);
  EXPECT_EQ(info.mhz, 3500);
  EXPECT_TRUE(info.avx512f);
  EXPECT_TRUE(info.avx2 && info.fma && info.avx && info.sse);
  EXPECT_FALSE(info.avx512bf16);
  EXPECT_EQ(f32FlopsPerCycle(info), 64u);
}

TEST(LocalDetection, ParseAArch64CPUInfo) {
  CPUInfo info = parseCPUInfo(kArmCPUInfo);
  EXPECT_EQ(info.model, "AArch64 CPU (implementer 0x41, part 0xd0c)");
  EXPECT_EQ(info.logicalCPUs, 2u);
  EXPECT_EQ(info.threadsPerCore, 1u);
  EXPECT_EQ(info.sockets, 1u);
  EXPECT_TRUE(info.asimd);
  EXPECT_EQ(f32FlopsPerCycle(info), 16u);
}

TEST(LocalDetection, NominalClock) {
  EXPECT_EQ(nominalClockMHz("Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz"), 2900);
  EXPECT_EQ(nominalClockMHz("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz"), 3200);
  EXPECT_FALSE(nominalClockMHz("AMD EPYC 7763 64-Core Processor"));
  EXPECT_FALSE(nominalClockMHz("Odd CPU @ fast"));
}

TEST(LocalDetection, FlopsPerCycle) {
  CPUInfo info;
  EXPECT_EQ(f32FlopsPerCycle(info), 2u);
  info.sse = true;
  EXPECT_EQ(f32FlopsPerCycle(info), 8u);
  info.avx = true;
  EXPECT_EQ(f32FlopsPerCycle(info), 16u);
  info.avx2 = true;
  EXPECT_EQ(f32FlopsPerCycle(info), 16u) << "AVX2 without FMA";
  info.fma = true;
  EXPECT_EQ(f32FlopsPerCycle(info), 32u);
  info.avx512f = true;
  EXPECT_EQ(f32FlopsPerCycle(info), 64u);
}

TEST(LocalDetection, EstimateCPUDevice) {
  // The development machine: 2 cores of a Zen 5 EPYC at 2.1 GHz.
  CPUInfo zen5;
  zen5.model = "AMD EPYC";
  zen5.sse = zen5.avx = zen5.avx2 = zen5.fma = zen5.avx512f = true;
  zen5.avx512bf16 = true;
  std::string how;
  DeviceGroupSpec cpu = estimateCPUDevice(zen5, 2, 2100, 24ull << 30, how);
  EXPECT_EQ(cpu.kind, DeviceKind::CPU);
  EXPECT_EQ(cpu.cores, 2u);
  EXPECT_EQ(cpu.memoryBytes, 24ull << 30);
  EXPECT_DOUBLE_EQ(*cpu.peakFlops[unsigned(DType::F32)], 2 * 2.1e9 * 64);
  EXPECT_DOUBLE_EQ(*cpu.peakFlops[unsigned(DType::BF16)], 2 * 2 * 2.1e9 * 64);
  EXPECT_FALSE(cpu.peakFlops[unsigned(DType::F16)]);
  EXPECT_DOUBLE_EQ(cpu.memoryBandwidth, 2 * 20e9);
  EXPECT_NE(how.find("AVX-512 => 64 f32 flop/cycle/core"), std::string::npos)
      << how;

  // SMT siblings share the FMA units: 32 threads are 16 cores.
  CPUInfo xeon = parseCPUInfo(kXeonCPUInfo);
  cpu = estimateCPUDevice(xeon, 32, 2900, 64ull << 30, how);
  EXPECT_EQ(cpu.cores, 32u);
  EXPECT_DOUBLE_EQ(*cpu.peakFlops[unsigned(DType::F32)], 16 * 2.9e9 * 64);
  EXPECT_DOUBLE_EQ(cpu.memoryBandwidth, 16 * 20e9);
  // Bandwidth saturates per socket: 64 cores on 1 socket.
  xeon.sockets = 1;
  xeon.threadsPerCore = 1;
  cpu = estimateCPUDevice(xeon, 64, 2900, 64ull << 30, how);
  EXPECT_DOUBLE_EQ(cpu.memoryBandwidth, 200e9);
}

TEST(LocalDetection, MemInfoAndCgroups) {
  EXPECT_EQ(parseMemTotal("MemTotal:       24683548 kB\nMemFree: 1 kB\n"),
            24683548ull * 1024);
  EXPECT_FALSE(parseMemTotal("MemFree: 1 kB\n"));
  EXPECT_FALSE(parseMemTotal("MemTotal: lots\n"));
  EXPECT_EQ(parseCgroupCPUMax("200000 100000\n"), 2u);
  EXPECT_EQ(parseCgroupCPUMax("150000 100000"), 2u);
  EXPECT_FALSE(parseCgroupCPUMax("max 100000\n"));
  EXPECT_EQ(parseCgroupMemoryMax("8589934592\n"), 8589934592ull);
  EXPECT_FALSE(parseCgroupMemoryMax("max\n"));
}

GPUProperties makeA100() {
  // What the CUDA driver reports for an A100-SXM4-80GB.
  GPUProperties gpu;
  gpu.name = "NVIDIA A100-SXM4-80GB";
  gpu.totalMemoryBytes = 85097971712;
  gpu.multiprocessors = 108;
  gpu.clockKHz = 1410000;
  gpu.memoryClockKHz = 1593000;
  gpu.memoryBusWidthBits = 5120;
  gpu.computeMajor = 8;
  gpu.computeMinor = 0;
  return gpu;
}

TEST(LocalDetection, EstimateGPUDeviceMatchesDataSheet) {
  llvm::Expected<DeviceGroupSpec> gpu = estimateGPUDevice(makeA100());
  ASSERT_TRUE(bool(gpu)) << llvm::toString(gpu.takeError());
  EXPECT_EQ(gpu->kind, DeviceKind::GPU);
  EXPECT_EQ(gpu->cores, 108u);
  EXPECT_EQ(gpu->memoryBytes, 85097971712u);
  // Data sheet: 19.5 Tflop/s f32, 312 Tflop/s f16/bf16, 2039 GB/s.
  EXPECT_NEAR(*gpu->peakFlops[unsigned(DType::F32)], 19.5e12, 0.1e12);
  EXPECT_NEAR(*gpu->peakFlops[unsigned(DType::F16)], 312e12, 1e12);
  EXPECT_NEAR(*gpu->peakFlops[unsigned(DType::BF16)], 312e12, 1e12);
  EXPECT_NEAR(gpu->memoryBandwidth, 2039e9, 1e9);

  // Turing (T4): tensor cores but no bf16.
  GPUProperties t4 = makeA100();
  t4.computeMajor = 7;
  t4.computeMinor = 5;
  t4.multiprocessors = 40;
  t4.clockKHz = 1590000;
  gpu = estimateGPUDevice(t4);
  ASSERT_TRUE(bool(gpu)) << llvm::toString(gpu.takeError());
  EXPECT_NEAR(*gpu->peakFlops[unsigned(DType::F32)], 8.1e12, 0.1e12);
  EXPECT_NEAR(*gpu->peakFlops[unsigned(DType::F16)], 65e12, 1e12);
  EXPECT_FALSE(gpu->peakFlops[unsigned(DType::BF16)]);
}

TEST(LocalDetection, EstimateGPUDeviceErrors) {
  GPUProperties unknown = makeA100();
  unknown.computeMajor = 3;
  llvm::Expected<DeviceGroupSpec> gpu = estimateGPUDevice(unknown);
  ASSERT_FALSE(bool(gpu));
  EXPECT_EQ(llvm::toString(gpu.takeError()),
            "<local>: GPU \"NVIDIA A100-SXM4-80GB\": unknown compute "
            "capability 3.0");
  GPUProperties noClock = makeA100();
  noClock.clockKHz = 0;
  gpu = estimateGPUDevice(noClock);
  ASSERT_FALSE(bool(gpu));
  EXPECT_EQ(llvm::toString(gpu.takeError()),
            "<local>: GPU \"NVIDIA A100-SXM4-80GB\": the driver reports no SM "
            "count or clock");
}

TEST(LocalDetection, EstimateGPULink) {
  std::string how;
  std::vector<GPUProperties> gpus(8, makeA100());
  // NVML unknown: PCIe 4.0 x16 assumed.
  LinkSpec link = estimateGPULink(gpus, how);
  EXPECT_EQ(link.kind, LinkKind::PCIe);
  EXPECT_NEAR(link.bandwidth, 31.5e9, 0.01e9);
  EXPECT_NE(how.find("assumed"), std::string::npos);
  // 12 NVLink 3 links: 300 GB/s per direction.
  for (GPUProperties &gpu : gpus)
    gpu.nvlinkLinks = 12;
  link = estimateGPULink(gpus, how);
  EXPECT_EQ(link.kind, LinkKind::NVLink);
  EXPECT_DOUBLE_EQ(link.bandwidth, 300e9);
  EXPECT_EQ(link.between, std::make_pair(DeviceKind::GPU, DeviceKind::GPU));
  // One GPU without NVLink: PCIe at the smallest reported width.
  gpus[3].nvlinkLinks = 0;
  for (GPUProperties &gpu : gpus) {
    gpu.pcieGeneration = 4;
    gpu.pcieWidth = 16;
  }
  gpus[5].pcieWidth = 8;
  link = estimateGPULink(gpus, how);
  EXPECT_EQ(link.kind, LinkKind::PCIe);
  EXPECT_DOUBLE_EQ(link.bandwidth, 8 * 1.969e9);
}

TEST(LocalDetection, QueryCUDADriver) {
  // The stand-in driver reports two A100s with 12 NVLinks each and no SM
  // clock attribute (NVML supplies it).
  std::string note;
  std::vector<GPUProperties> gpus =
      queryCUDADevices(note, TRA_FAKE_CUDA_LIBRARY, TRA_FAKE_CUDA_LIBRARY);
  EXPECT_EQ(note, "");
  ASSERT_EQ(gpus.size(), 2u);
  for (const GPUProperties &gpu : gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(gpu.totalMemoryBytes, 85097971712u);
    EXPECT_EQ(gpu.multiprocessors, 108u);
    EXPECT_EQ(gpu.clockKHz, 1410000u);
    EXPECT_EQ(gpu.memoryClockKHz, 1593000u);
    EXPECT_EQ(gpu.memoryBusWidthBits, 5120u);
    EXPECT_EQ(gpu.computeMajor, 8u);
    EXPECT_EQ(gpu.computeMinor, 0u);
    EXPECT_EQ(gpu.nvlinkLinks, 12u);
    EXPECT_EQ(gpu.pcieGeneration, 4u);
    EXPECT_EQ(gpu.pcieWidth, 16u);
  }

  // No NVML: the CUDA figures alone, and the SM clock is missing.
  gpus = queryCUDADevices(note, TRA_FAKE_CUDA_LIBRARY,
                          "/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(note, "NVML not available.");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].clockKHz, 0u);
  EXPECT_EQ(gpus[0].nvlinkLinks, 0u);

  gpus = queryCUDADevices(note, "/nonexistent/libcuda.so.1");
  EXPECT_TRUE(gpus.empty());
  EXPECT_EQ(note, "No CUDA driver (/nonexistent/libcuda.so.1 not found).");
}

MachineSpec makeCPUSpec() {
  CPUInfo info;
  info.model = "Host CPU";
  info.sse = info.avx = info.avx2 = info.fma = true;
  std::string how = "CPU notes.";
  MachineSpec spec;
  spec.name = "local";
  NodeGroupSpec node;
  node.name = "host";
  node.devices.push_back(estimateCPUDevice(info, 4, 3000, 16ull << 30, how));
  spec.nodes.push_back(node);
  spec.description = how;
  return spec;
}

TEST(LocalDetection, DescribeMachineWithoutGPUs) {
  llvm::Expected<HardwareDescription> hw =
      describeLocalMachine(makeCPUSpec(), {}, "No CUDA driver.");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  ASSERT_EQ(hw->numDevices(), 1u);
  EXPECT_EQ(hw->getDevice(0).kind, DeviceKind::CPU);
  EXPECT_EQ(hw->getDevice(0).cores, 4u);
  EXPECT_DOUBLE_EQ(hw->getDevice(0).getPeakFlops(DType::F32), 4 * 3e9 * 32);
  EXPECT_TRUE(hw->getDescription().ends_with("No CUDA driver."));
}

TEST(LocalDetection, DescribeMachineWithGPUs) {
  std::string note;
  std::vector<GPUProperties> gpus =
      queryCUDADevices(note, TRA_FAKE_CUDA_LIBRARY, TRA_FAKE_CUDA_LIBRARY);
  ASSERT_EQ(gpus.size(), 2u);
  GPUProperties other = gpus[0];
  other.name = "NVIDIA A100-SXM4-40GB";
  other.totalMemoryBytes = 42505273344;
  gpus.push_back(other);
  GPUProperties unknown = gpus[0];
  unknown.computeMajor = 2;
  gpus.push_back(unknown);

  llvm::Expected<HardwareDescription> hw =
      describeLocalMachine(makeCPUSpec(), gpus, note);
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  // The GPUs are the devices: two groups (80GB x2, 40GB x1); the GPU of
  // unknown architecture is skipped and the CPU drives the others.
  const MachineSpec &spec = hw->getSpec();
  ASSERT_EQ(spec.nodes.size(), 1u);
  EXPECT_EQ(spec.nodes[0].name, "host");
  ASSERT_EQ(spec.nodes[0].devices.size(), 2u);
  EXPECT_EQ(spec.nodes[0].devices[0].count, 2u);
  EXPECT_EQ(spec.nodes[0].devices[1].count, 1u);
  ASSERT_EQ(hw->numDevices(), 3u);
  for (const Device &device : hw->getDevices())
    EXPECT_EQ(device.kind, DeviceKind::GPU);
  EXPECT_NEAR(hw->getDevice(0).getPeakFlops(DType::BF16), 312e12, 1e12);
  LinkInfo link = hw->link(0, 2);
  EXPECT_EQ(link.linkClass, LinkClass::IntraNode);
  EXPECT_EQ(link.kind, LinkKind::NVLink);
  EXPECT_DOUBLE_EQ(link.bandwidth, 300e9);
  llvm::StringRef description = hw->getDescription();
  EXPECT_TRUE(description.contains("3 CUDA GPU(s) used as the devices"))
      << description.str();
  EXPECT_TRUE(description.contains("unknown compute capability 2.0"))
      << description.str();
  // The host's memory is the node's host tier, over the GPUs' PCIe links.
  const TierSpec *host = hw->getHostMemory(0);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->bytes, makeCPUSpec().nodes[0].devices[0].memoryBytes);
  EXPECT_GT(host->bandwidth, 10e9);
  EXPECT_LT(host->bandwidth, 100e9);
  EXPECT_TRUE(description.contains("Host memory: the CPU's"))
      << description.str();

  // One GPU: no link needed.
  hw = describeLocalMachine(makeCPUSpec(), llvm::ArrayRef(gpus).take_front(1),
                            note);
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->numDevices(), 1u);
  EXPECT_TRUE(hw->getSpec().nodes[0].links.empty());
}

TEST(LocalDetection, DetectsThisMachine) {
  llvm::Expected<HardwareDescription> hw = detectLocalHardware();
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->getName(), "local");
  EXPECT_EQ(hw->numNodes(), 1u);
  ASSERT_GE(hw->numDevices(), 1u);
  for (const Device &device : hw->getDevices()) {
    EXPECT_GT(device.memoryBytes, 0u);
    EXPECT_GT(device.memoryBandwidth, 0);
    EXPECT_GT(device.getPeakFlops(DType::F32), 0);
    EXPECT_GT(device.cores, 0u);
  }
  EXPECT_NE(hw->getDescription().find("Detected at run time"),
            llvm::StringRef::npos);
  // A detected description is a description like any other.
  llvm::Expected<HardwareDescription> again =
      parseHardwareJSON(hw->toJSONText(), "local.json");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(*again, *hw);
  // "--hw local" is detection, and it is deterministic.
  llvm::Expected<HardwareDescription> loaded = loadHardware("local");
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(*loaded, *hw);
}

TEST(LocalDetection, CPUSpecOfThisMachine) {
  llvm::Expected<MachineSpec> spec = detectLocalCPUSpec();
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  ASSERT_EQ(spec->nodes.size(), 1u);
  ASSERT_EQ(spec->nodes[0].devices.size(), 1u);
  const DeviceGroupSpec &cpu = spec->nodes[0].devices[0];
  EXPECT_EQ(cpu.kind, DeviceKind::CPU);
  EXPECT_GE(cpu.cores, 1u);
  EXPECT_GE(cpu.memoryBytes, 64ull << 20);
  EXPECT_TRUE(bool(HardwareDescription::create(*spec, "<local>")));
}

} // namespace
