//===- HardwareModelTest.cpp - The flattened view and serialization ------===//

#include "tra/Hardware/Hardware.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace tra::hw;

namespace {

DeviceGroupSpec makeGPU(uint64_t count) {
  DeviceGroupSpec gpu;
  gpu.kind = DeviceKind::GPU;
  gpu.count = count;
  gpu.model = "Test GPU";
  gpu.memoryBytes = 16ull << 30;
  gpu.memoryBandwidth = 1e12;
  gpu.peakFlops[unsigned(DType::F32)] = 10e12;
  gpu.peakFlops[unsigned(DType::F16)] = 100e12;
  return gpu;
}

DeviceGroupSpec makeCPU() {
  DeviceGroupSpec cpu;
  cpu.kind = DeviceKind::CPU;
  cpu.count = 1;
  cpu.memoryBytes = 256ull << 30;
  cpu.memoryBandwidth = 0.1e12;
  cpu.cores = 32;
  cpu.peakFlops[unsigned(DType::F32)] = 2e12;
  return cpu;
}

LinkSpec makeLink(LinkKind kind, double bandwidth, double latency,
                  std::optional<std::pair<DeviceKind, DeviceKind>> between) {
  LinkSpec link;
  link.kind = kind;
  link.bandwidth = bandwidth;
  link.latency = latency;
  link.between = between;
  return link;
}

/// Two nodes of one CPU and two GPUs (CPU-GPU over PCIe, GPU-GPU over
/// NVLink), then one node with one GPU, on a network.
MachineSpec makeMixedSpec() {
  MachineSpec spec;
  spec.name = "mixed";
  spec.description = "A test machine; 0.1 is not exact in binary.";
  NodeGroupSpec big;
  big.name = "big";
  big.count = 2;
  big.devices = {makeCPU(), makeGPU(2)};
  big.links = {makeLink(LinkKind::NVLink, 100e9, 2e-6,
                        std::make_pair(DeviceKind::GPU, DeviceKind::GPU)),
               makeLink(LinkKind::PCIe, 0.1 * 250e9, 1e-5, std::nullopt)};
  NodeGroupSpec small;
  small.devices = {makeGPU(1)};
  spec.nodes = {big, small};
  NetworkSpec network;
  network.kind = LinkKind::InfiniBand;
  network.bandwidth = 25e9;
  network.latency = 1.5e-6;
  spec.network = network;
  return spec;
}

HardwareDescription create(MachineSpec spec) {
  llvm::Expected<HardwareDescription> hw =
      HardwareDescription::create(std::move(spec), "test");
  if (!hw) {
    ADD_FAILURE() << llvm::toString(hw.takeError());
    std::abort();
  }
  return std::move(*hw);
}

TEST(HardwareModel, FlattenedDevicesAndNodes) {
  HardwareDescription hw = create(makeMixedSpec());
  ASSERT_EQ(hw.numNodes(), 3u);
  ASSERT_EQ(hw.numDevices(), 7u);
  // Node by node, device group by device group.
  const DeviceKind expectedKinds[] = {
      DeviceKind::CPU, DeviceKind::GPU, DeviceKind::GPU, DeviceKind::CPU,
      DeviceKind::GPU, DeviceKind::GPU, DeviceKind::GPU};
  const unsigned expectedNodes[] = {0, 0, 0, 1, 1, 1, 2};
  for (unsigned i = 0; i < 7; ++i) {
    EXPECT_EQ(hw.getDevice(i).id, i);
    EXPECT_EQ(hw.getDevice(i).kind, expectedKinds[i]) << i;
    EXPECT_EQ(hw.getDevice(i).node, expectedNodes[i]) << i;
  }
  EXPECT_EQ(hw.getDevice(4).deviceGroup, 1u);
  EXPECT_EQ(hw.getDevice(6).nodeGroup, 1u);
  EXPECT_EQ(hw.getNode(0).name, "big[0]");
  EXPECT_EQ(hw.getNode(1).name, "big[1]");
  EXPECT_EQ(hw.getNode(2).name, "node");
  EXPECT_EQ(hw.getNode(1).firstDevice, 3u);
  EXPECT_EQ(hw.getNode(1).numDevices, 3u);
  EXPECT_EQ(hw.getDevicesOfNode(2).size(), 1u);
  EXPECT_EQ(hw.getDevice(0).cores, 32u);
}

TEST(HardwareModel, LinkClasses) {
  HardwareDescription hw = create(makeMixedSpec());
  LinkInfo self = hw.link(1, 1);
  EXPECT_EQ(self.linkClass, LinkClass::Self);
  EXPECT_EQ(self.bandwidth, 1e12);
  EXPECT_EQ(self.transferTime(1e9), 0);

  // The specific gpu-gpu link wins over the link without "between".
  LinkInfo nvlink = hw.link(1, 2);
  EXPECT_EQ(nvlink.linkClass, LinkClass::IntraNode);
  EXPECT_EQ(nvlink.kind, LinkKind::NVLink);
  EXPECT_DOUBLE_EQ(nvlink.transferTime(1e9), 2e-6 + 1e9 / 100e9);

  LinkInfo pcie = hw.link(2, 0);
  EXPECT_EQ(pcie.linkClass, LinkClass::IntraNode);
  EXPECT_EQ(pcie.kind, LinkKind::PCIe);

  LinkInfo network = hw.link(0, 6);
  EXPECT_EQ(network.linkClass, LinkClass::InterNode);
  EXPECT_EQ(network.kind, LinkKind::InfiniBand);
  EXPECT_EQ(network.bandwidth, 25e9);
  EXPECT_EQ(network.latency, 1.5e-6);
  EXPECT_EQ(hw.link(4, 1).linkClass, LinkClass::InterNode);
}

TEST(HardwareModel, PeakFlopsFallBackToF32) {
  HardwareDescription hw = create(makeMixedSpec());
  const Device &gpu = hw.getDevice(1);
  EXPECT_EQ(gpu.getPeakFlops(DType::F32), 10e12);
  EXPECT_EQ(gpu.getPeakFlops(DType::F16), 100e12);
  EXPECT_EQ(gpu.getPeakFlops(DType::BF16), 10e12);
  // The spec keeps what was written: no bf16 figure.
  EXPECT_FALSE(
      hw.getSpec().nodes[0].devices[1].peakFlops[unsigned(DType::BF16)]);
}

TEST(HardwareModel, Totals) {
  HardwareDescription hw = create(makeMixedSpec());
  EXPECT_EQ(hw.totalMemoryBytes(), 2 * (256ull << 30) + 5 * (16ull << 30));
  EXPECT_DOUBLE_EQ(hw.totalPeakFlops(DType::F32), 2 * 2e12 + 5 * 10e12);
  EXPECT_FALSE(hw.isHomogeneous());

  MachineSpec gpus;
  gpus.name = "gpus";
  NodeGroupSpec node;
  node.devices = {makeGPU(3)};
  node.links = {makeLink(LinkKind::PCIe, 32e9, 1e-5, std::nullopt)};
  gpus.nodes = {node};
  EXPECT_TRUE(create(gpus).isHomogeneous());
}

TEST(HardwareModel, RoundTrip) {
  HardwareDescription hw = create(makeMixedSpec());
  llvm::Expected<HardwareDescription> again =
      parseHardwareJSON(hw.toJSONText(), "roundtrip.json");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(*again, hw);
  EXPECT_EQ(again->getSpec(), hw.getSpec());
  // Optional fields stay absent and written ones stay written.
  EXPECT_TRUE(again->getSpec().nodes[1].name.empty());
  EXPECT_TRUE(again->getSpec().nodes[0].devices[0].model.empty());
  EXPECT_EQ(again->getSpec().nodes[0].links[1].bandwidth, 0.1 * 250e9);
  // A change is seen.
  MachineSpec changed = makeMixedSpec();
  changed.nodes[0].links[0].latency = 3e-6;
  EXPECT_NE(create(changed), hw);
}

TEST(HardwareModel, Summary) {
  HardwareDescription hw = create(makeMixedSpec());
  EXPECT_EQ(hw.summary(), "mixed: 3 nodes, 7 devices (2x cpu, 5x gpu Test "
                          "GPU), 592 GiB memory, 54 Tflop/s f32 peak");
  std::string text;
  llvm::raw_string_ostream os(text);
  hw.printSummary(os);
  EXPECT_NE(text.find("node group 0 \"big\": 2 nodes x 3 devices (devices "
                      "0-5)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2x gpu Test GPU: 16 GiB, 1 TB/s, f32 10 Tflop/s, f16 "
                      "100 Tflop/s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("link gpu-gpu: nvlink 100 GB/s, latency 2 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("network: infiniband 25 GB/s, latency 1.5 us"),
            std::string::npos)
      << text;
}

TEST(HardwareModel, Stringify) {
  for (DeviceKind kind : {DeviceKind::CPU, DeviceKind::GPU})
    EXPECT_EQ(symbolizeDeviceKind(stringifyDeviceKind(kind)), kind);
  for (DType type : {DType::F32, DType::F16, DType::BF16})
    EXPECT_EQ(symbolizeDType(stringifyDType(type)), type);
  for (LinkKind kind :
       {LinkKind::SharedMemory, LinkKind::PCIe, LinkKind::NVLink,
        LinkKind::InfinityFabric, LinkKind::Ethernet, LinkKind::InfiniBand})
    EXPECT_EQ(symbolizeLinkKind(stringifyLinkKind(kind)), kind);
  EXPECT_FALSE(symbolizeLinkKind("self"));
  EXPECT_EQ(stringifyLinkClass(LinkClass::InterNode), "inter-node");
}

TEST(HardwareModel, CreateRejectsInvalidSpecs) {
  MachineSpec noNetwork = makeMixedSpec();
  noNetwork.network.reset();
  llvm::Expected<HardwareDescription> hw =
      HardwareDescription::create(noNetwork, "<built>");
  ASSERT_FALSE(bool(hw));
  EXPECT_EQ(llvm::toString(hw.takeError()),
            "<built>: network: missing required key: the machine has 3 nodes "
            "and needs a network between them");

  MachineSpec selfLink = makeMixedSpec();
  selfLink.nodes[0].links[0].kind = LinkKind::Self;
  hw = HardwareDescription::create(selfLink, "<built>");
  ASSERT_FALSE(bool(hw));
  EXPECT_EQ(llvm::toString(hw.takeError()),
            "<built>: nodes[0].links[0].kind: \"self\" is not a link kind a "
            "description may use");
}

} // namespace
