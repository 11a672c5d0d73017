//===- Hardware.h - Hardware descriptions for the optimizer -----*- C++ -*-===//
//
// A hardware description says what the optimizer may place tiles on: nodes
// (machines), the devices in each node (CPUs or GPUs with their memory, peak
// flop/s and memory bandwidth) and the links between devices. It is read from
// a JSON file (see docs/HardwareDescription.md) or detected on the machine the
// compiler runs on.
//
// The description is kept in two forms:
//   * MachineSpec: the description as written, with node and device groups
//     that carry counts ("six identical servers" is one entry). This is what
//     the JSON format maps to, and what toJSON() writes back.
//   * The flattened view of HardwareDescription: one Device per device
//     instance with a global id, one Node per node instance, and link(a, b)
//     for every ordered pair of devices. This is what the optimizer uses.
//
// This library uses LLVM Support only; it does not depend on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_HARDWARE_HARDWARE_H
#define TRA_HARDWARE_HARDWARE_H

#include "tra/Exec/ParallelCosts.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tra {
namespace hw {

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

/// What kind of processor a device is.
enum class DeviceKind : uint8_t { CPU, GPU };

/// Element types with a peak flop/s figure in the description.
enum class DType : uint8_t { F32, F16, BF16 };
/// Number of DType values; DType converts to an index in [0, kNumDTypes).
constexpr unsigned kNumDTypes = 3;

/// The physical kind of a link; informational for the cost model, which uses
/// bandwidth and latency, but printed in plans.
enum class LinkKind : uint8_t {
  /// A device to itself (only in the flattened view, never in a file).
  Self,
  /// Devices sharing one memory system, e.g. the sockets of one machine.
  SharedMemory,
  PCIe,
  /// NVLink, directly or through NVSwitch.
  NVLink,
  /// AMD Infinity Fabric / xGMI between GPUs.
  InfinityFabric,
  Ethernet,
  InfiniBand,
};

/// Where a link sits relative to nodes.
enum class LinkClass : uint8_t {
  /// Source and destination are the same device.
  Self,
  /// Two devices of the same node.
  IntraNode,
  /// Two devices on different nodes: the network.
  InterNode,
};

/// Spelling of each enumerator in the JSON format ("cpu", "bf16", "pcie",
/// "nvlink", ...) and in printed output.
llvm::StringRef stringifyDeviceKind(DeviceKind kind);
llvm::StringRef stringifyDType(DType type);
llvm::StringRef stringifyLinkKind(LinkKind kind);
llvm::StringRef stringifyLinkClass(LinkClass linkClass);

/// Inverse of the stringify functions; std::nullopt for unknown spellings.
/// symbolizeLinkKind never returns LinkKind::Self: "self" is not a kind a
/// description may state.
std::optional<DeviceKind> symbolizeDeviceKind(llvm::StringRef name);
std::optional<DType> symbolizeDType(llvm::StringRef name);
std::optional<LinkKind> symbolizeLinkKind(llvm::StringRef name);

//===----------------------------------------------------------------------===//
// The description as written
//===----------------------------------------------------------------------===//

/// A CPU's thread_sync_seconds when its description states none: the mean
/// cost of an OpenMP region whose threads wait spinning between regions,
/// measured 1.0 to 1.5 us on the 2-vCPU development VM (a tail of 13 to 36
/// us at the 99th percentile, when the host deschedules a vCPU), rounded up.
constexpr double kDefaultThreadSyncSeconds = 2e-6;

/// `count` identical devices of one node. Units: bytes, bytes/s, flop/s.
struct DeviceGroupSpec {
  DeviceKind kind = DeviceKind::CPU;
  /// Number of identical devices in each node of the group.
  uint64_t count = 1;
  /// Vendor model name; empty when not stated.
  std::string model;
  /// Memory the device may use for tiles, in bytes.
  uint64_t memoryBytes = 0;
  /// Memory bandwidth of one device, in bytes/s (a data-sheet peak or a
  /// measurement).
  double memoryBandwidth = 0;
  /// Peak flop/s of one device, per DType (indexed by the DType's value).
  /// F32 is required; a missing F16 or BF16 figure means "computed at the
  /// F32 rate".
  std::array<std::optional<double>, kNumDTypes> peakFlops;
  /// CPU: threads the device may use (required). GPU: streaming
  /// multiprocessors (optional; 0 when not stated).
  uint64_t cores = 0;
  /// CPU only: what one parallel region costs beyond its work, in seconds
  /// (starting the threads that wait between the regions of a step and
  /// joining them at its end); std::nullopt: kDefaultThreadSyncSeconds.
  std::optional<double> threadSyncSeconds;

  bool operator==(const DeviceGroupSpec &other) const;
  bool operator!=(const DeviceGroupSpec &other) const {
    return !(*this == other);
  }
};

/// A link between devices of one node.
struct LinkSpec {
  LinkKind kind = LinkKind::PCIe;
  /// The two device kinds this link connects, smaller first. std::nullopt:
  /// every pair of devices of the node not covered by a link with `between`.
  std::optional<std::pair<DeviceKind, DeviceKind>> between;
  /// Bandwidth of one transfer from one device to another, per direction,
  /// in bytes/s.
  double bandwidth = 0;
  /// Time from the start of a transfer until its first byte arrives, in
  /// seconds.
  double latency = 0;

  bool operator==(const LinkSpec &other) const;
  bool operator!=(const LinkSpec &other) const { return !(*this == other); }
};

/// `count` identical nodes (machines).
/// A memory tier of each node of a group beyond its devices' memory: the
/// node's host RAM, or a disk the weights stream from. The planner keeps
/// weight tiles there when the devices cannot hold them and moves them to
/// the device before the operation that reads them.
struct TierSpec {
  /// Bytes the tier may hold; 0: no limit stated (a disk tier streaming
  /// the checkpoint file itself).
  uint64_t bytes = 0;
  /// Bytes/s per direction between the tier and each device of the node
  /// (its link to the devices: PCIe for host memory, the drive's read rate
  /// for a disk).
  double bandwidth = 0;
  /// Seconds.
  double latency = 0;

  bool operator==(const TierSpec &other) const;
  bool operator!=(const TierSpec &other) const { return !(*this == other); }
};

struct NodeGroupSpec {
  /// Name of the node group; empty when not stated.
  std::string name;
  uint64_t count = 1;
  std::vector<DeviceGroupSpec> devices;
  std::vector<LinkSpec> links;
  /// Optional tiers ("host_memory", "disk").
  std::optional<TierSpec> hostMemory;
  std::optional<TierSpec> disk;

  bool operator==(const NodeGroupSpec &other) const;
  bool operator!=(const NodeGroupSpec &other) const {
    return !(*this == other);
  }
};

/// The network between nodes: the point-to-point figures of one transfer
/// between two devices on different nodes.
struct NetworkSpec {
  LinkKind kind = LinkKind::Ethernet;
  /// Bytes/s per direction.
  double bandwidth = 0;
  /// Seconds.
  double latency = 0;

  bool operator==(const NetworkSpec &other) const;
  bool operator!=(const NetworkSpec &other) const { return !(*this == other); }
};

/// A whole machine description, as written.
struct MachineSpec {
  std::string name;
  /// Free text: where the figures come from. Empty when not stated.
  std::string description;
  std::vector<NodeGroupSpec> nodes;
  /// Required when the machine has more than one node.
  std::optional<NetworkSpec> network;

  bool operator==(const MachineSpec &other) const;
  bool operator!=(const MachineSpec &other) const { return !(*this == other); }
};

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// An error in a hardware description. It prints as
///   FILE: JSON.PATH: PROBLEM
/// e.g. "hw/bad.json: nodes[0].devices[1].memory_bytes: expected a positive
/// number, got -4", or, for JSON syntax errors, as
///   FILE:LINE:COLUMN: PROBLEM
/// and, for errors that concern the whole file (it cannot be opened), as
///   FILE: PROBLEM
class HardwareError : public llvm::ErrorInfo<HardwareError> {
public:
  static char ID;

  /// An error at `path` (empty: the whole file) of `file`.
  HardwareError(std::string file, std::string path, std::string problem);
  /// A syntax error at a 1-based line and column of `file`.
  HardwareError(std::string file, unsigned line, unsigned column,
                std::string problem);

  llvm::StringRef getFile() const { return file; }
  /// The JSON path of the bad field ("nodes[0].devices[1].memory_bytes",
  /// "(root)" for the top-level value); empty for file and syntax errors.
  llvm::StringRef getPath() const { return path; }
  llvm::StringRef getProblem() const { return problem; }
  /// 1-based position of a syntax error; 0 otherwise.
  unsigned getLine() const { return line; }
  unsigned getColumn() const { return column; }

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string file;
  std::string path;
  std::string problem;
  unsigned line = 0;
  unsigned column = 0;
};

//===----------------------------------------------------------------------===//
// The flattened view
//===----------------------------------------------------------------------===//

/// One device instance.
struct Device {
  /// Global id in [0, numDevices()). Devices are numbered in file order:
  /// node group by node group, node by node, device group by device group.
  unsigned id = 0;
  /// Global id of the node that holds the device.
  unsigned node = 0;
  /// Index of the node group / device group in the MachineSpec.
  unsigned nodeGroup = 0;
  unsigned deviceGroup = 0;
  DeviceKind kind = DeviceKind::CPU;
  /// Vendor model name; empty when not stated.
  std::string model;
  /// Bytes.
  uint64_t memoryBytes = 0;
  /// Bytes/s.
  double memoryBandwidth = 0;
  /// CPU: threads; GPU: streaming multiprocessors, 0 when not stated.
  unsigned cores = 0;
  /// CPU: seconds one parallel region costs beyond its work (the stated
  /// figure or kDefaultThreadSyncSeconds); 0 for GPUs.
  double threadSyncSeconds = 0;
  /// Peak flop/s per DType, with missing F16/BF16 figures resolved to F32.
  std::array<double, kNumDTypes> peakFlops = {0, 0, 0};

  /// Peak flop/s of this device for `type`.
  double getPeakFlops(DType type) const {
    return peakFlops[static_cast<unsigned>(type)];
  }

  /// A CPU's parallel costs (tra/Exec/ParallelCosts.h): its seconds per
  /// parallel region, memory bandwidth and f32 peak over its cores. Invalid
  /// (zeros) for a GPU.
  ::tra::exec::ParallelCosts getParallelCosts() const {
    if (kind != DeviceKind::CPU)
      return {};
    return ::tra::exec::parallelCostsOf(
        memoryBandwidth, getPeakFlops(DType::F32), cores, threadSyncSeconds);
  }
};

/// One node (machine) instance.
struct Node {
  /// Global id in [0, numNodes()).
  unsigned id = 0;
  /// Index of the node group in the MachineSpec.
  unsigned nodeGroup = 0;
  /// The group's name, with "[i]" appended when the group has more than one
  /// node ("server[3]"); "node" or "node[i]" when the group has no name.
  std::string name;
  /// The node's devices are [firstDevice, firstDevice + numDevices).
  unsigned firstDevice = 0;
  unsigned numDevices = 0;
};

/// The cost-relevant figures of moving data from one device to another.
struct LinkInfo {
  LinkClass linkClass = LinkClass::Self;
  LinkKind kind = LinkKind::Self;
  /// Bytes/s per direction. For LinkClass::Self: the device's memory
  /// bandwidth (what a local copy would cost).
  double bandwidth = 0;
  /// Seconds; 0 for LinkClass::Self.
  double latency = 0;

  /// Seconds to move `bytes` over this link: latency + bytes / bandwidth.
  /// Zero for LinkClass::Self: data that stays on its device does not move.
  double transferTime(double bytes) const {
    if (linkClass == LinkClass::Self)
      return 0;
    return latency + bytes / bandwidth;
  }
};

/// A validated hardware description with the flattened view the optimizer
/// uses. Cheap to copy for the sizes that occur (thousands of devices).
class HardwareDescription {
public:
  /// Validates `spec` and builds the flattened view. Errors are
  /// HardwareErrors located in `origin` (a file name, or "<local>") with the
  /// JSON path of the offending field.
  static llvm::Expected<HardwareDescription> create(MachineSpec spec,
                                                    llvm::StringRef origin);

  /// The description as written.
  const MachineSpec &getSpec() const { return spec; }
  llvm::StringRef getName() const { return spec.name; }
  llvm::StringRef getDescription() const { return spec.description; }

  unsigned numDevices() const { return devices.size(); }
  const Device &getDevice(unsigned id) const;
  llvm::ArrayRef<Device> getDevices() const { return devices; }

  unsigned numNodes() const { return nodes.size(); }
  const Node &getNode(unsigned id) const;
  llvm::ArrayRef<Node> getNodes() const { return nodes; }
  /// The devices of node `nodeId`.
  llvm::ArrayRef<Device> getDevicesOfNode(unsigned nodeId) const;

  /// How data moves from device `srcDevice` to device `dstDevice`.
  LinkInfo link(unsigned srcDevice, unsigned dstDevice) const;

  /// The host-memory / disk tier of node `nodeId`; null when its group
  /// states none.
  const TierSpec *getHostMemory(unsigned nodeId) const;
  const TierSpec *getDisk(unsigned nodeId) const;

  /// Sum of the memory of all devices, in bytes.
  uint64_t totalMemoryBytes() const;
  /// Sum of the host memory of all nodes, in bytes (0 without tiers).
  uint64_t totalHostMemoryBytes() const;
  /// Sum of the peak flop/s of all devices for `type`.
  double totalPeakFlops(DType type) const;
  /// Whether every device has the same kind, memory, bandwidth and flop/s.
  bool isHomogeneous() const;

  /// One line: "dgx-8: 1 node, 8 devices (8x gpu NVIDIA A100-SXM4-80GB),
  /// 640 GiB memory, 156 Tflop/s f32 peak".
  std::string summary() const;
  /// Several lines: the summary, each node group with its devices and links,
  /// and the network.
  void printSummary(llvm::raw_ostream &os) const;

  /// The description in the JSON format. Parsing the result gives back an
  /// equal description.
  llvm::json::Value toJSON() const;
  /// toJSON() printed with two-space indentation and a final newline.
  std::string toJSONText() const;

  /// Descriptions are equal when their specs are; the flattened view is a
  /// function of the spec.
  bool operator==(const HardwareDescription &other) const {
    return spec == other.spec;
  }
  bool operator!=(const HardwareDescription &other) const {
    return !(*this == other);
  }

private:
  HardwareDescription() = default;

  MachineSpec spec;
  std::vector<Device> devices;
  std::vector<Node> nodes;
  /// Per node group, per pair of device kinds (cpu-cpu, cpu-gpu, gpu-gpu),
  /// the index of the LinkSpec used between them, or -1 where the pair cannot
  /// occur.
  std::vector<std::array<int, 3>> intraNodeLinks;
};

//===----------------------------------------------------------------------===//
// Reading and detecting
//===----------------------------------------------------------------------===//

/// Parses a description from JSON `text`; `fileName` is used in errors only.
llvm::Expected<HardwareDescription> parseHardwareJSON(llvm::StringRef text,
                                                      llvm::StringRef fileName);

/// Reads and parses the file at `path`.
llvm::Expected<HardwareDescription> parseHardwareFile(llvm::StringRef path);

/// Describes the machine this process runs on: its GPUs if the CUDA driver
/// reports any (one node of GPUs), otherwise its CPU as one device. See
/// LocalDetection.h and docs/HardwareDescription.md for how the figures are
/// estimated.
llvm::Expected<HardwareDescription> detectLocalHardware();

/// The spelling of a `--hw` argument that means "detect this machine".
constexpr llvm::StringLiteral kLocalHardwareSpec = "local";

/// Loads the hardware named by a `--hw` argument: "local" detects this
/// machine (a file named "local" must be given as "./local"); anything else
/// is a path to a JSON description.
llvm::Expected<HardwareDescription> loadHardware(llvm::StringRef spec);

} // namespace hw
} // namespace tra

#endif // TRA_HARDWARE_HARDWARE_H
