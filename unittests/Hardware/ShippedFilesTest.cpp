//===- ShippedFilesTest.cpp - The descriptions under hw/ ------------------===//

#include "tra/Hardware/Hardware.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <set>

using namespace tra::hw;

namespace {

std::string hwPath(llvm::StringRef name) {
  llvm::SmallString<256> path(TRA_SOURCE_DIR);
  llvm::sys::path::append(path, "hw", name);
  return std::string(path);
}

HardwareDescription load(llvm::StringRef name) {
  llvm::Expected<HardwareDescription> hw = parseHardwareFile(hwPath(name));
  if (!hw) {
    ADD_FAILURE() << llvm::toString(hw.takeError());
    std::abort();
  }
  return std::move(*hw);
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

/// Every file under hw/ parses, round-trips through toJSON, and has
/// positive figures; so does any file added later.
TEST(ShippedFiles, EveryFileParsesAndRoundTrips) {
  std::error_code ec;
  std::set<std::string> names;
  for (llvm::sys::fs::directory_iterator it(hwPath(""), ec), end;
       !ec && it != end; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".json")
      names.insert(llvm::sys::path::filename(it->path()).str());
  ASSERT_FALSE(ec) << ec.message();
  for (const char *expected :
       {"cpu-1node.json", "cpu-8nodes.json", "gpu-1.json", "gpu-4.json",
        "dgx-8.json", "gpu-6x4.json"})
    EXPECT_TRUE(names.count(expected)) << expected;

  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    HardwareDescription hw = load(name);
    EXPECT_EQ(hw.getName().str() + ".json", name);
    EXPECT_FALSE(hw.getDescription().empty()) << "cite the data sheets";
    for (const Device &device : hw.getDevices()) {
      EXPECT_GT(device.memoryBytes, 0u);
      EXPECT_GT(device.memoryBandwidth, 0);
      EXPECT_GT(device.getPeakFlops(DType::F32), 0);
      EXPECT_FALSE(device.model.empty());
    }
    llvm::Expected<HardwareDescription> again =
        parseHardwareJSON(hw.toJSONText(), name + " (round trip)");
    ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
    EXPECT_EQ(*again, hw);
  }
}

TEST(ShippedFiles, CPUOneNode) {
  HardwareDescription hw = load("cpu-1node.json");
  EXPECT_EQ(hw.numNodes(), 1u);
  ASSERT_EQ(hw.numDevices(), 1u);
  const Device &cpu = hw.getDevice(0);
  EXPECT_EQ(cpu.kind, DeviceKind::CPU);
  EXPECT_EQ(cpu.cores, 2u);
  EXPECT_EQ(cpu.memoryBytes, uint64_t(24 * kGiB));
  EXPECT_DOUBLE_EQ(cpu.getPeakFlops(DType::F32), 2 * 2.1e9 * 64);
  // No f16 figure: f16 runs at the f32 rate.
  EXPECT_EQ(cpu.getPeakFlops(DType::F16), cpu.getPeakFlops(DType::F32));
  // The measured cost of a parallel region, and what it makes worth two
  // threads: 4 x 1.5 us x 2 = 12 us of one core, 240 KB at 20 GB/s per
  // core, 806400 multiply-adds at 67.2 G/s per core.
  EXPECT_DOUBLE_EQ(cpu.threadSyncSeconds, 1.5e-6);
  ::tra::exec::ParallelCosts costs = cpu.getParallelCosts();
  EXPECT_DOUBLE_EQ(::tra::exec::minParallelSeconds(costs, 2), 12e-6);
  EXPECT_EQ(::tra::exec::minParallelBytes(costs, 2), 240000);
  EXPECT_EQ(::tra::exec::minParallelMacs(costs, 2), 806400);
  EXPECT_EQ(hw.link(0, 0).linkClass, LinkClass::Self);
}

TEST(ShippedFiles, CPUEightNodes) {
  HardwareDescription hw = load("cpu-8nodes.json");
  EXPECT_EQ(hw.numNodes(), 8u);
  ASSERT_EQ(hw.numDevices(), 8u);
  for (const Device &device : hw.getDevices()) {
    EXPECT_EQ(device.kind, DeviceKind::CPU);
    EXPECT_EQ(device.cores, 16u);
    EXPECT_EQ(device.memoryBytes, uint64_t(64 * kGiB));
    EXPECT_EQ(device.node, device.id);
  }
  LinkInfo link = hw.link(0, 7);
  EXPECT_EQ(link.linkClass, LinkClass::InterNode);
  EXPECT_EQ(link.kind, LinkKind::Ethernet);
  EXPECT_DOUBLE_EQ(link.bandwidth, 1.25e9); // 10 Gb/s.
  EXPECT_TRUE(hw.isHomogeneous());
}

TEST(ShippedFiles, OneGPU) {
  HardwareDescription hw = load("gpu-1.json");
  EXPECT_EQ(hw.numNodes(), 1u);
  ASSERT_EQ(hw.numDevices(), 1u);
  EXPECT_EQ(hw.getDevice(0).kind, DeviceKind::GPU);
  EXPECT_DOUBLE_EQ(hw.getDevice(0).getPeakFlops(DType::BF16), 312e12);
  EXPECT_EQ(hw.getDevice(0).memoryBytes, uint64_t(80 * kGiB));
}

TEST(ShippedFiles, FourGPUsOnPCIe) {
  HardwareDescription hw = load("gpu-4.json");
  EXPECT_EQ(hw.numNodes(), 1u);
  ASSERT_EQ(hw.numDevices(), 4u);
  LinkInfo link = hw.link(0, 3);
  EXPECT_EQ(link.linkClass, LinkClass::IntraNode);
  EXPECT_EQ(link.kind, LinkKind::PCIe);
  EXPECT_DOUBLE_EQ(link.bandwidth, 31.5e9);
}

TEST(ShippedFiles, DGXEight) {
  HardwareDescription hw = load("dgx-8.json");
  EXPECT_EQ(hw.numNodes(), 1u);
  ASSERT_EQ(hw.numDevices(), 8u);
  for (unsigned a = 0; a < 8; ++a) {
    for (unsigned b = 0; b < 8; ++b) {
      LinkInfo link = hw.link(a, b);
      if (a == b) {
        EXPECT_EQ(link.linkClass, LinkClass::Self);
        continue;
      }
      EXPECT_EQ(link.linkClass, LinkClass::IntraNode);
      EXPECT_EQ(link.kind, LinkKind::NVLink);
      EXPECT_DOUBLE_EQ(link.bandwidth, 300e9);
    }
  }
  EXPECT_EQ(hw.totalMemoryBytes(), uint64_t(640 * kGiB));
  EXPECT_DOUBLE_EQ(hw.totalPeakFlops(DType::F16), 8 * 312e12);
}

TEST(ShippedFiles, SixServersOfFourGPUs) {
  HardwareDescription hw = load("gpu-6x4.json");
  EXPECT_EQ(hw.numNodes(), 6u);
  ASSERT_EQ(hw.numDevices(), 24u);
  EXPECT_EQ(hw.getDevice(4).node, 1u);
  EXPECT_EQ(hw.getDevicesOfNode(5).front().id, 20u);
  EXPECT_EQ(hw.getNode(2).name, "server[2]");

  LinkInfo network = hw.link(0, 4);
  EXPECT_EQ(network.linkClass, LinkClass::InterNode);
  EXPECT_DOUBLE_EQ(network.bandwidth, 12.5e9); // 100 Gb/s.
  LinkInfo pcie = hw.link(4, 7);
  EXPECT_EQ(pcie.linkClass, LinkClass::IntraNode);
  EXPECT_EQ(pcie.kind, LinkKind::PCIe);
  EXPECT_GT(pcie.bandwidth, network.bandwidth);
}

} // namespace
