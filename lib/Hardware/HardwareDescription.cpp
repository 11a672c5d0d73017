//===- HardwareDescription.cpp - Validated hardware descriptions ---------===//
//
// Validation of a MachineSpec, the flattened view (devices, nodes, links),
// printing and serialization.
//
//===----------------------------------------------------------------------===//

#include "tra/Hardware/Hardware.h"

#include "HardwareInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <map>

using namespace tra::hw;
using namespace tra::hw::detail;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

llvm::StringRef tra::hw::stringifyDeviceKind(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::CPU:
    return "cpu";
  case DeviceKind::GPU:
    return "gpu";
  }
  llvm_unreachable("unknown DeviceKind");
}

llvm::StringRef tra::hw::stringifyDType(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown DType");
}

llvm::StringRef tra::hw::stringifyLinkKind(LinkKind kind) {
  switch (kind) {
  case LinkKind::Self:
    return "self";
  case LinkKind::SharedMemory:
    return "shared-memory";
  case LinkKind::PCIe:
    return "pcie";
  case LinkKind::NVLink:
    return "nvlink";
  case LinkKind::InfinityFabric:
    return "infinity-fabric";
  case LinkKind::Ethernet:
    return "ethernet";
  case LinkKind::InfiniBand:
    return "infiniband";
  }
  llvm_unreachable("unknown LinkKind");
}

llvm::StringRef tra::hw::stringifyLinkClass(LinkClass linkClass) {
  switch (linkClass) {
  case LinkClass::Self:
    return "self";
  case LinkClass::IntraNode:
    return "intra-node";
  case LinkClass::InterNode:
    return "inter-node";
  }
  llvm_unreachable("unknown LinkClass");
}

std::optional<DeviceKind> tra::hw::symbolizeDeviceKind(llvm::StringRef name) {
  for (DeviceKind kind : {DeviceKind::CPU, DeviceKind::GPU})
    if (name == stringifyDeviceKind(kind))
      return kind;
  return std::nullopt;
}

std::optional<DType> tra::hw::symbolizeDType(llvm::StringRef name) {
  for (DType type : {DType::F32, DType::F16, DType::BF16})
    if (name == stringifyDType(type))
      return type;
  return std::nullopt;
}

std::optional<LinkKind> tra::hw::symbolizeLinkKind(llvm::StringRef name) {
  for (LinkKind kind :
       {LinkKind::SharedMemory, LinkKind::PCIe, LinkKind::NVLink,
        LinkKind::InfinityFabric, LinkKind::Ethernet, LinkKind::InfiniBand})
    if (name == stringifyLinkKind(kind))
      return kind;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Spec equality
//===----------------------------------------------------------------------===//

bool DeviceGroupSpec::operator==(const DeviceGroupSpec &other) const {
  return kind == other.kind && count == other.count && model == other.model &&
         memoryBytes == other.memoryBytes &&
         memoryBandwidth == other.memoryBandwidth &&
         peakFlops == other.peakFlops && cores == other.cores &&
         threadSyncSeconds == other.threadSyncSeconds;
}

bool LinkSpec::operator==(const LinkSpec &other) const {
  return kind == other.kind && between == other.between &&
         bandwidth == other.bandwidth && latency == other.latency;
}

bool TierSpec::operator==(const TierSpec &other) const {
  return bytes == other.bytes && bandwidth == other.bandwidth &&
         latency == other.latency;
}

bool NodeGroupSpec::operator==(const NodeGroupSpec &other) const {
  return name == other.name && count == other.count &&
         devices == other.devices && links == other.links &&
         hostMemory == other.hostMemory && disk == other.disk;
}

bool NetworkSpec::operator==(const NetworkSpec &other) const {
  return kind == other.kind && bandwidth == other.bandwidth &&
         latency == other.latency;
}

bool MachineSpec::operator==(const MachineSpec &other) const {
  return name == other.name && description == other.description &&
         nodes == other.nodes && network == other.network;
}

//===----------------------------------------------------------------------===//
// Errors and shared helpers
//===----------------------------------------------------------------------===//

char HardwareError::ID = 0;

HardwareError::HardwareError(std::string file, std::string path,
                             std::string problem)
    : file(std::move(file)), path(std::move(path)),
      problem(std::move(problem)) {}

HardwareError::HardwareError(std::string file, unsigned line, unsigned column,
                             std::string problem)
    : file(std::move(file)), problem(std::move(problem)), line(line),
      column(column) {}

void HardwareError::log(llvm::raw_ostream &os) const {
  os << file;
  if (line != 0)
    os << ':' << line << ':' << column;
  else if (!path.empty())
    os << ": " << path;
  os << ": " << problem;
}

std::error_code HardwareError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

std::string detail::indexPath(const llvm::Twine &parent,
                              llvm::StringRef arrayKey, size_t index) {
  return (memberPath(parent, arrayKey) + "[" + llvm::Twine(index) + "]").str();
}

std::string detail::memberPath(const llvm::Twine &parent, llvm::StringRef key) {
  std::string prefix = parent.str();
  if (prefix.empty())
    return key.str();
  return prefix + "." + key.str();
}

std::string detail::formatNumber(double value) {
  if (std::isfinite(value) && value == std::trunc(value) &&
      std::fabs(value) < 1e18)
    return std::to_string(static_cast<long long>(value));
  return llvm::formatv("{0}", llvm::format("%.15g", value)).str();
}

llvm::Error detail::makeError(llvm::StringRef file, const llvm::Twine &path,
                              const llvm::Twine &problem) {
  return llvm::make_error<HardwareError>(file.str(), path.str(), problem.str());
}

llvm::Error detail::checkPositive(llvm::StringRef file, const llvm::Twine &path,
                                  double value) {
  if (std::isfinite(value) && value > 0)
    return llvm::Error::success();
  return makeError(file, path,
                   "expected a positive number, got " + formatNumber(value));
}

llvm::Error detail::checkNonNegative(llvm::StringRef file,
                                     const llvm::Twine &path, double value) {
  if (std::isfinite(value) && value >= 0)
    return llvm::Error::success();
  return makeError(
      file, path, "expected a non-negative number, got " + formatNumber(value));
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

/// Index of an unordered pair of device kinds: cpu-cpu 0, cpu-gpu 1,
/// gpu-gpu 2.
unsigned kindPairIndex(DeviceKind a, DeviceKind b) {
  return static_cast<unsigned>(a) + static_cast<unsigned>(b);
}

/// The pair with the smaller kind first.
std::pair<DeviceKind, DeviceKind> orderedPair(DeviceKind a, DeviceKind b) {
  return a <= b ? std::make_pair(a, b) : std::make_pair(b, a);
}

std::string describePair(std::pair<DeviceKind, DeviceKind> pair) {
  return (stringifyDeviceKind(pair.first) + " and " +
          stringifyDeviceKind(pair.second))
      .str();
}

/// Validates everything that a MachineSpec can get wrong, reporting the JSON
/// path of the first offending field.
class Validator {
public:
  explicit Validator(llvm::StringRef origin) : origin(origin) {}

  llvm::Error validate(const MachineSpec &spec) {
    if (spec.name.empty())
      return makeError(origin, key::name, "expected a non-empty string");
    if (spec.nodes.empty())
      return makeError(origin, key::nodes, "expected a non-empty array");
    uint64_t totalNodes = 0;
    uint64_t totalDevices = 0;
    for (auto [i, group] : llvm::enumerate(spec.nodes)) {
      std::string path = indexPath("", key::nodes, i);
      if (llvm::Error err = validateNodeGroup(group, path))
        return err;
      uint64_t perNode = 0;
      for (const DeviceGroupSpec &devices : group.devices)
        perNode += devices.count;
      if (group.count > kMaxDevices - totalNodes || perNode > kMaxDevices ||
          group.count * perNode > kMaxDevices - totalDevices)
        return makeError(origin, memberPath(path, key::count),
                         "too many devices or nodes; at most " +
                             llvm::Twine(kMaxDevices) + " are supported");
      totalNodes += group.count;
      totalDevices += group.count * perNode;
    }
    if (spec.network)
      return validateNetwork(*spec.network);
    if (totalNodes > 1)
      return makeError(origin, key::network,
                       "missing required key: the machine has " +
                           llvm::Twine(totalNodes) +
                           " nodes and needs a network between them");
    return llvm::Error::success();
  }

  /// For each pair of device kinds that occurs in a node of `group`, the
  /// index of the link that serves it (-1 where the pair cannot occur).
  /// Assumes validateNodeGroup succeeded.
  static std::array<int, 3> resolveLinks(const NodeGroupSpec &group) {
    std::array<int, 3> result = {-1, -1, -1};
    std::array<uint64_t, 2> perKind = countKinds(group);
    for (DeviceKind a : {DeviceKind::CPU, DeviceKind::GPU}) {
      for (DeviceKind b : {DeviceKind::CPU, DeviceKind::GPU}) {
        if (a > b || !pairOccurs(perKind, a, b))
          continue;
        result[kindPairIndex(a, b)] = findLink(group, orderedPair(a, b));
      }
    }
    return result;
  }

private:
  static std::array<uint64_t, 2> countKinds(const NodeGroupSpec &group) {
    std::array<uint64_t, 2> perKind = {0, 0};
    for (const DeviceGroupSpec &devices : group.devices)
      perKind[static_cast<unsigned>(devices.kind)] += devices.count;
    return perKind;
  }

  /// Whether a node holds two distinct devices of kinds `a` and `b`.
  static bool pairOccurs(const std::array<uint64_t, 2> &perKind, DeviceKind a,
                         DeviceKind b) {
    uint64_t na = perKind[static_cast<unsigned>(a)];
    uint64_t nb = perKind[static_cast<unsigned>(b)];
    return a == b ? na >= 2 : na >= 1 && nb >= 1;
  }

  /// The link with exactly this `between` pair, else the one without
  /// `between`; -1 if neither exists.
  static int findLink(const NodeGroupSpec &group,
                      std::pair<DeviceKind, DeviceKind> pair) {
    int fallback = -1;
    for (auto [k, link] : llvm::enumerate(group.links)) {
      if (link.between == pair)
        return static_cast<int>(k);
      if (!link.between)
        fallback = static_cast<int>(k);
    }
    return fallback;
  }

  llvm::Error validateNodeGroup(const NodeGroupSpec &group,
                                const std::string &path) {
    if (group.count == 0)
      return checkPositive(origin, memberPath(path, key::count), 0);
    if (group.devices.empty())
      return makeError(origin, memberPath(path, key::devices),
                       "expected a non-empty array");
    for (auto [j, devices] : llvm::enumerate(group.devices))
      if (llvm::Error err =
              validateDeviceGroup(devices, indexPath(path, key::devices, j)))
        return err;
    for (auto [name, tier] :
         {std::make_pair(key::hostMemory, &group.hostMemory),
          std::make_pair(key::disk, &group.disk)}) {
      if (!*tier)
        continue;
      std::string tierPath = memberPath(path, name);
      if (name == key::hostMemory && (*tier)->bytes == 0)
        return checkPositive(origin, memberPath(tierPath, key::bytes), 0);
      if (llvm::Error err = checkPositive(
              origin, memberPath(tierPath, key::bandwidth), (*tier)->bandwidth))
        return err;
      if (llvm::Error err = checkNonNegative(
              origin, memberPath(tierPath, key::latency), (*tier)->latency))
        return err;
    }
    return validateLinks(group, path);
  }

  llvm::Error validateDeviceGroup(const DeviceGroupSpec &devices,
                                  const std::string &path) {
    if (devices.count == 0)
      return checkPositive(origin, memberPath(path, key::count), 0);
    if (devices.count > kMaxDevices)
      return makeError(origin, memberPath(path, key::count),
                       "too many devices; at most " + llvm::Twine(kMaxDevices) +
                           " are supported");
    if (devices.memoryBytes == 0)
      return checkPositive(origin, memberPath(path, key::memoryBytes), 0);
    if (llvm::Error err =
            checkPositive(origin, memberPath(path, key::memoryBandwidth),
                          devices.memoryBandwidth))
      return err;
    std::string flopsPath = memberPath(path, key::peakFlops);
    if (!devices.peakFlops[static_cast<unsigned>(DType::F32)])
      return makeError(origin, memberPath(flopsPath, "f32"),
                       "missing required key");
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      const std::optional<double> &flops =
          devices.peakFlops[static_cast<unsigned>(type)];
      if (!flops)
        continue;
      if (llvm::Error err = checkPositive(
              origin, memberPath(flopsPath, stringifyDType(type)), *flops))
        return err;
    }
    std::string coresPath = memberPath(path, key::cores);
    if (devices.kind == DeviceKind::CPU && devices.cores == 0)
      return makeError(origin, coresPath,
                       "missing required key: a cpu device states the threads "
                       "it may use");
    if (devices.cores > std::numeric_limits<unsigned>::max())
      return makeError(origin, coresPath,
                       "too large: " + llvm::Twine(devices.cores));
    if (devices.threadSyncSeconds) {
      std::string syncPath = memberPath(path, key::threadSyncSeconds);
      if (devices.kind != DeviceKind::CPU)
        return makeError(origin, syncPath,
                         "only a cpu device has threads to synchronise");
      if (llvm::Error err =
              checkPositive(origin, syncPath, *devices.threadSyncSeconds))
        return err;
      // A region costing a second or more is a unit mistake (microseconds
      // given as seconds).
      if (*devices.threadSyncSeconds >= 1)
        return makeError(origin, syncPath,
                         "expected seconds below 1, got " +
                             formatNumber(*devices.threadSyncSeconds) +
                             " (a parallel region costs microseconds)");
    }
    return llvm::Error::success();
  }

  llvm::Error validateLinks(const NodeGroupSpec &group,
                            const std::string &path) {
    std::array<uint64_t, 2> perKind = countKinds(group);
    std::map<std::optional<std::pair<DeviceKind, DeviceKind>>, size_t> seen;
    for (auto [k, link] : llvm::enumerate(group.links)) {
      std::string linkPath = indexPath(path, key::links, k);
      if (link.kind == LinkKind::Self)
        return makeError(origin, memberPath(linkPath, key::kind),
                         "\"self\" is not a link kind a description may use");
      if (link.between) {
        std::string betweenPath = memberPath(linkPath, key::between);
        if (link.between->first > link.between->second)
          return makeError(origin, betweenPath,
                           "the pair must be ordered (cpu before gpu)");
        for (DeviceKind kind : {link.between->first, link.between->second})
          if (perKind[static_cast<unsigned>(kind)] == 0)
            return makeError(origin, betweenPath,
                             "the node has no " + stringifyDeviceKind(kind) +
                                 " devices");
      }
      auto [it, inserted] = seen.try_emplace(link.between, k);
      if (!inserted)
        return makeError(origin, linkPath,
                         "duplicate link " +
                             (link.between
                                  ? "between " + describePair(*link.between)
                                  : std::string("without \"between\"")) +
                             "; " + indexPath(path, key::links, it->second) +
                             " already gives it");
      if (llvm::Error err = checkPositive(
              origin, memberPath(linkPath, key::bandwidth), link.bandwidth))
        return err;
      if (llvm::Error err = checkNonNegative(
              origin, memberPath(linkPath, key::latency), link.latency))
        return err;
    }
    for (DeviceKind a : {DeviceKind::CPU, DeviceKind::GPU}) {
      for (DeviceKind b : {DeviceKind::CPU, DeviceKind::GPU}) {
        if (a > b || !pairOccurs(perKind, a, b))
          continue;
        if (findLink(group, {a, b}) >= 0)
          continue;
        std::string linksPath = memberPath(path, key::links);
        if (group.links.empty())
          return makeError(origin, linksPath,
                           "missing required key: a node with more than one "
                           "device needs links between its devices");
        return makeError(origin, linksPath,
                         "no link between " + describePair({a, b}) +
                             " devices; add one with \"between\": [\"" +
                             stringifyDeviceKind(a) + "\", \"" +
                             stringifyDeviceKind(b) +
                             "\"] or one without \"between\"");
      }
    }
    return llvm::Error::success();
  }

  llvm::Error validateNetwork(const NetworkSpec &network) {
    if (network.kind == LinkKind::Self)
      return makeError(origin, memberPath(key::network, key::kind),
                       "\"self\" is not a link kind a description may use");
    if (llvm::Error err =
            checkPositive(origin, memberPath(key::network, key::bandwidth),
                          network.bandwidth))
      return err;
    return checkNonNegative(origin, memberPath(key::network, key::latency),
                            network.latency);
  }

  llvm::StringRef origin;
};

} // namespace

//===----------------------------------------------------------------------===//
// HardwareDescription
//===----------------------------------------------------------------------===//

llvm::Expected<HardwareDescription>
HardwareDescription::create(MachineSpec spec, llvm::StringRef origin) {
  if (llvm::Error err = Validator(origin).validate(spec))
    return std::move(err);

  HardwareDescription result;
  for (auto [g, group] : llvm::enumerate(spec.nodes)) {
    result.intraNodeLinks.push_back(Validator::resolveLinks(group));
    for (uint64_t n = 0; n < group.count; ++n) {
      Node node;
      node.id = result.nodes.size();
      node.nodeGroup = g;
      std::string base = group.name.empty() ? "node" : group.name;
      node.name =
          group.count > 1 ? (base + "[" + llvm::Twine(n) + "]").str() : base;
      node.firstDevice = result.devices.size();
      for (auto [d, devices] : llvm::enumerate(group.devices)) {
        double f32 = *devices.peakFlops[static_cast<unsigned>(DType::F32)];
        for (uint64_t i = 0; i < devices.count; ++i) {
          Device device;
          device.id = result.devices.size();
          device.node = node.id;
          device.nodeGroup = g;
          device.deviceGroup = d;
          device.kind = devices.kind;
          device.model = devices.model;
          device.memoryBytes = devices.memoryBytes;
          device.memoryBandwidth = devices.memoryBandwidth;
          device.cores = static_cast<unsigned>(devices.cores);
          if (devices.kind == DeviceKind::CPU)
            device.threadSyncSeconds =
                devices.threadSyncSeconds.value_or(kDefaultThreadSyncSeconds);
          for (unsigned t = 0; t < kNumDTypes; ++t)
            device.peakFlops[t] = devices.peakFlops[t].value_or(f32);
          result.devices.push_back(std::move(device));
        }
      }
      node.numDevices = result.devices.size() - node.firstDevice;
      result.nodes.push_back(std::move(node));
    }
  }
  result.spec = std::move(spec);
  return result;
}

const Device &HardwareDescription::getDevice(unsigned id) const {
  assert(id < devices.size() && "device id out of range");
  return devices[id];
}

const Node &HardwareDescription::getNode(unsigned id) const {
  assert(id < nodes.size() && "node id out of range");
  return nodes[id];
}

llvm::ArrayRef<Device>
HardwareDescription::getDevicesOfNode(unsigned nodeId) const {
  const Node &node = getNode(nodeId);
  return llvm::ArrayRef<Device>(devices).slice(node.firstDevice,
                                               node.numDevices);
}

LinkInfo HardwareDescription::link(unsigned srcDevice,
                                   unsigned dstDevice) const {
  const Device &src = getDevice(srcDevice);
  const Device &dst = getDevice(dstDevice);
  LinkInfo info;
  if (srcDevice == dstDevice) {
    info.linkClass = LinkClass::Self;
    info.kind = LinkKind::Self;
    info.bandwidth = src.memoryBandwidth;
    info.latency = 0;
    return info;
  }
  if (src.node != dst.node) {
    assert(spec.network && "validated: more than one node has a network");
    info.linkClass = LinkClass::InterNode;
    info.kind = spec.network->kind;
    info.bandwidth = spec.network->bandwidth;
    info.latency = spec.network->latency;
    return info;
  }
  int index = intraNodeLinks[src.nodeGroup][kindPairIndex(src.kind, dst.kind)];
  assert(index >= 0 && "validated: every occurring pair has a link");
  const LinkSpec &linkSpec = spec.nodes[src.nodeGroup].links[index];
  info.linkClass = LinkClass::IntraNode;
  info.kind = linkSpec.kind;
  info.bandwidth = linkSpec.bandwidth;
  info.latency = linkSpec.latency;
  return info;
}

const TierSpec *HardwareDescription::getHostMemory(unsigned nodeId) const {
  const std::optional<TierSpec> &tier =
      spec.nodes[getNode(nodeId).nodeGroup].hostMemory;
  return tier ? &*tier : nullptr;
}

const TierSpec *HardwareDescription::getDisk(unsigned nodeId) const {
  const std::optional<TierSpec> &tier =
      spec.nodes[getNode(nodeId).nodeGroup].disk;
  return tier ? &*tier : nullptr;
}

uint64_t HardwareDescription::totalHostMemoryBytes() const {
  uint64_t total = 0;
  for (const Node &node : nodes)
    if (const TierSpec *tier = getHostMemory(node.id))
      total = llvm::SaturatingAdd(total, tier->bytes);
  return total;
}

uint64_t HardwareDescription::totalMemoryBytes() const {
  uint64_t total = 0;
  // Saturating: a million devices of nearly 2^63 bytes each are valid.
  for (const Device &device : devices)
    total = llvm::SaturatingAdd(total, device.memoryBytes);
  return total;
}

double HardwareDescription::totalPeakFlops(DType type) const {
  double total = 0;
  for (const Device &device : devices)
    total += device.getPeakFlops(type);
  return total;
}

bool HardwareDescription::isHomogeneous() const {
  return llvm::all_of(devices, [&](const Device &device) {
    const Device &first = devices.front();
    return device.kind == first.kind &&
           device.memoryBytes == first.memoryBytes &&
           device.memoryBandwidth == first.memoryBandwidth &&
           device.peakFlops == first.peakFlops;
  });
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {

/// "80 GiB", "1.5 TiB", "512 MiB".
std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = bytes;
  unsigned unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return llvm::formatv("{0} {1}", llvm::format("%.4g", value), units[unit])
      .str();
}

/// A rate with a decimal prefix: "19.5 Tflop/s", "300 GB/s".
std::string formatRate(double value, llvm::StringRef unit) {
  const char *prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  unsigned prefix = 0;
  while (value >= 1000 && prefix + 1 < std::size(prefixes)) {
    value /= 1000;
    ++prefix;
  }
  return llvm::formatv("{0} {1}{2}", llvm::format("%.4g", value),
                       prefixes[prefix], unit)
      .str();
}

/// "3 us", "50 us", "1.2 ms", "0 s".
std::string formatSeconds(double seconds) {
  if (seconds == 0)
    return "0 s";
  if (seconds < 1e-3)
    return llvm::formatv("{0} us", llvm::format("%.4g", seconds * 1e6)).str();
  if (seconds < 1)
    return llvm::formatv("{0} ms", llvm::format("%.4g", seconds * 1e3)).str();
  return llvm::formatv("{0} s", llvm::format("%.4g", seconds)).str();
}

std::string describeLink(LinkKind kind, double bandwidth, double latency) {
  return (stringifyLinkKind(kind) + " " + formatRate(bandwidth, "B/s") +
          ", latency " + formatSeconds(latency))
      .str();
}

} // namespace

std::string HardwareDescription::summary() const {
  // Count devices per (kind, model), in order of first appearance.
  llvm::SmallVector<std::pair<std::string, unsigned>> kinds;
  for (const Device &device : devices) {
    std::string label = stringifyDeviceKind(device.kind).str();
    if (!device.model.empty())
      label += " " + device.model;
    auto *it = llvm::find_if(
        kinds, [&](const auto &entry) { return entry.first == label; });
    if (it == kinds.end())
      kinds.push_back({label, 1});
    else
      ++it->second;
  }
  std::string result;
  llvm::raw_string_ostream os(result);
  os << spec.name << ": " << numNodes()
     << (numNodes() == 1 ? " node, " : " nodes, ") << numDevices()
     << (numDevices() == 1 ? " device (" : " devices (");
  llvm::interleaveComma(kinds, os, [&](const auto &entry) {
    os << entry.second << "x " << entry.first;
  });
  os << "), " << formatBytes(totalMemoryBytes()) << " memory, "
     << formatRate(totalPeakFlops(DType::F32), "flop/s") << " f32 peak";
  return result;
}

void HardwareDescription::printSummary(llvm::raw_ostream &os) const {
  os << summary() << "\n";
  unsigned firstDevice = 0;
  for (auto [g, group] : llvm::enumerate(spec.nodes)) {
    uint64_t perNode = 0;
    for (const DeviceGroupSpec &devices : group.devices)
      perNode += devices.count;
    unsigned lastDevice = firstDevice + group.count * perNode - 1;
    os << "  node group " << g;
    if (!group.name.empty())
      os << " \"" << group.name << "\"";
    os << ": " << group.count << (group.count == 1 ? " node" : " nodes")
       << " x " << perNode << (perNode == 1 ? " device" : " devices")
       << " (devices " << firstDevice;
    if (lastDevice != firstDevice)
      os << "-" << lastDevice;
    os << ")\n";
    for (const DeviceGroupSpec &devices : group.devices) {
      os << "    " << devices.count << "x "
         << stringifyDeviceKind(devices.kind);
      if (!devices.model.empty())
        os << " " << devices.model;
      os << ": " << formatBytes(devices.memoryBytes) << ", "
         << formatRate(devices.memoryBandwidth, "B/s");
      for (DType type : {DType::F32, DType::F16, DType::BF16}) {
        const std::optional<double> &flops =
            devices.peakFlops[static_cast<unsigned>(type)];
        if (flops)
          os << ", " << stringifyDType(type) << " "
             << formatRate(*flops, "flop/s");
      }
      if (devices.cores != 0)
        os << ", " << devices.cores
           << (devices.kind == DeviceKind::CPU ? " threads" : " SMs");
      if (devices.threadSyncSeconds)
        os << ", " << formatNumber(*devices.threadSyncSeconds * 1e6)
           << " us per parallel region";
      os << "\n";
    }
    for (const LinkSpec &link : group.links) {
      os << "    link ";
      if (link.between)
        os << stringifyDeviceKind(link.between->first) << "-"
           << stringifyDeviceKind(link.between->second);
      else
        os << "(all pairs)";
      os << ": " << describeLink(link.kind, link.bandwidth, link.latency)
         << "\n";
    }
    for (auto [name, tier] : {std::make_pair("host memory", &group.hostMemory),
                              std::make_pair("disk", &group.disk)}) {
      if (!*tier)
        continue;
      os << "    " << name << ": "
         << ((*tier)->bytes ? formatBytes((*tier)->bytes)
                            : std::string("no stated limit"))
         << ", " << formatRate((*tier)->bandwidth, "B/s") << " to each device, "
         << formatNumber((*tier)->latency * 1e6) << " us\n";
    }
    firstDevice = lastDevice + 1;
  }
  if (spec.network)
    os << "  network: "
       << describeLink(spec.network->kind, spec.network->bandwidth,
                       spec.network->latency)
       << "\n";
}

//===----------------------------------------------------------------------===//
// Serialization
//===----------------------------------------------------------------------===//

llvm::json::Value HardwareDescription::toJSON() const {
  llvm::json::Array nodeArray;
  for (const NodeGroupSpec &group : spec.nodes) {
    llvm::json::Array deviceArray;
    for (const DeviceGroupSpec &devices : group.devices) {
      llvm::json::Object flops;
      for (DType type : {DType::F32, DType::F16, DType::BF16})
        if (const std::optional<double> &value =
                devices.peakFlops[static_cast<unsigned>(type)])
          flops[stringifyDType(type)] = *value;
      llvm::json::Object object{
          {key::kind, stringifyDeviceKind(devices.kind)},
          {key::count, devices.count},
          {key::memoryBytes, devices.memoryBytes},
          {key::memoryBandwidth, devices.memoryBandwidth},
          {key::peakFlops, std::move(flops)},
      };
      if (!devices.model.empty())
        object[key::model] = devices.model;
      if (devices.cores != 0)
        object[key::cores] = devices.cores;
      if (devices.threadSyncSeconds)
        object[key::threadSyncSeconds] = *devices.threadSyncSeconds;
      deviceArray.push_back(std::move(object));
    }
    llvm::json::Array linkArray;
    for (const LinkSpec &link : group.links) {
      llvm::json::Object object{
          {key::kind, stringifyLinkKind(link.kind)},
          {key::bandwidth, link.bandwidth},
          {key::latency, link.latency},
      };
      if (link.between)
        object[key::between] =
            llvm::json::Array{stringifyDeviceKind(link.between->first),
                              stringifyDeviceKind(link.between->second)};
      linkArray.push_back(std::move(object));
    }
    llvm::json::Object object{
        {key::count, group.count},
        {key::devices, std::move(deviceArray)},
    };
    if (!group.name.empty())
      object[key::name] = group.name;
    if (!linkArray.empty())
      object[key::links] = std::move(linkArray);
    for (auto [name, tier] :
         {std::make_pair(key::hostMemory, &group.hostMemory),
          std::make_pair(key::disk, &group.disk)}) {
      if (!*tier)
        continue;
      llvm::json::Object tierObject{{key::bandwidth, (*tier)->bandwidth},
                                    {key::latency, (*tier)->latency}};
      if ((*tier)->bytes)
        tierObject[key::bytes] = (*tier)->bytes;
      object[name] = std::move(tierObject);
    }
    nodeArray.push_back(std::move(object));
  }
  llvm::json::Object root{
      {key::version, kFormatVersion},
      {key::name, spec.name},
      {key::nodes, std::move(nodeArray)},
  };
  if (!spec.description.empty())
    root[key::description] = spec.description;
  if (spec.network)
    root[key::network] = llvm::json::Object{
        {key::kind, stringifyLinkKind(spec.network->kind)},
        {key::bandwidth, spec.network->bandwidth},
        {key::latency, spec.network->latency},
    };
  return root;
}

std::string HardwareDescription::toJSONText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", toJSON()) << "\n";
  return text;
}
