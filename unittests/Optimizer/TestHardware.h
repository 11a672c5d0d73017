//===- TestHardware.h - Hardware descriptions for optimizer tests -*- C++
//-*-===//

#ifndef TRA_UNITTESTS_OPTIMIZER_TESTHARDWARE_H
#define TRA_UNITTESTS_OPTIMIZER_TESTHARDWARE_H

#include "tra/Hardware/Hardware.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <random>
#include <string>

namespace tra_test {

/// `nodes` identical nodes of `perNode` GPUs with round figures: 1 Tflop/s,
/// 1 TB/s memory bandwidth, `memory` bytes; links of `intraBandwidth` within
/// a node, `interBandwidth` between nodes, 1 us latency; with `hostMemory`,
/// that much host memory per node at 10 GB/s to each GPU.
inline ::tra::hw::HardwareDescription
makeHardware(unsigned nodes, unsigned perNode, double intraBandwidth = 100e9,
             double interBandwidth = 10e9, uint64_t memory = 1ull << 34,
             uint64_t hostMemory = 0) {
  namespace hw = ::tra::hw;
  hw::MachineSpec spec;
  spec.name = "test-" + std::to_string(nodes) + "x" + std::to_string(perNode);
  hw::NodeGroupSpec node;
  node.name = "node";
  node.count = nodes;
  hw::DeviceGroupSpec device;
  device.kind = hw::DeviceKind::GPU;
  device.count = perNode;
  device.memoryBytes = memory;
  device.memoryBandwidth = 1e12;
  device.peakFlops[0] = 1e12;
  node.devices.push_back(device);
  if (perNode > 1) {
    hw::LinkSpec link;
    link.kind = hw::LinkKind::NVLink;
    link.bandwidth = intraBandwidth;
    link.latency = 1e-6;
    node.links.push_back(link);
  }
  if (hostMemory)
    node.hostMemory = hw::TierSpec{hostMemory, 10e9, 1e-6};
  spec.nodes.push_back(node);
  if (nodes > 1)
    spec.network =
        hw::NetworkSpec{hw::LinkKind::InfiniBand, interBandwidth, 1e-6};
  auto description = hw::HardwareDescription::create(spec, "<test>");
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    std::abort();
  }
  return *description;
}

/// One node of two GPU groups: `fast` GPUs `ratio` times the peak flop/s
/// and memory bandwidth of the `slow` ones (1 Tflop/s, 1 TB/s), 100 GB/s
/// links between all.
inline ::tra::hw::HardwareDescription
makeMixedHardware(unsigned fast, unsigned slow, double ratio) {
  namespace hw = ::tra::hw;
  hw::MachineSpec spec;
  spec.name = "test-mixed";
  hw::NodeGroupSpec node;
  node.name = "node";
  node.count = 1;
  for (auto [count, speed] : {std::pair<unsigned, double>{fast, ratio},
                              std::pair<unsigned, double>{slow, 1.0}}) {
    hw::DeviceGroupSpec device;
    device.kind = hw::DeviceKind::GPU;
    device.model = speed == 1.0 ? "slow" : "fast";
    device.count = count;
    device.memoryBytes = 1ull << 34;
    device.memoryBandwidth = 1e12 * speed;
    device.peakFlops[0] = 1e12 * speed;
    node.devices.push_back(device);
  }
  hw::LinkSpec link;
  link.kind = hw::LinkKind::NVLink;
  link.bandwidth = 100e9;
  link.latency = 1e-6;
  node.links.push_back(link);
  spec.nodes.push_back(node);
  auto description = hw::HardwareDescription::create(spec, "<test>");
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    std::abort();
  }
  return *description;
}

/// A shipped description from hw/.
inline ::tra::hw::HardwareDescription loadShipped(llvm::StringRef name) {
  auto description = ::tra::hw::parseHardwareFile(
      std::string(TRA_SOURCE_DIR) + "/hw/" + name.str() + ".json");
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    std::abort();
  }
  return *description;
}

} // namespace tra_test

#endif // TRA_UNITTESTS_OPTIMIZER_TESTHARDWARE_H
