//===- CostModel.cpp - Time and memory estimates for plans ----------------===//

#include "tra/Optimizer/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;
namespace hw = ::tra::hw;

int64_t plan::getElementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return std::max<int64_t>(1, (bits + 7) / 8);
}

hw::DType plan::getHardwareDType(Type type) {
  if (type.isF16())
    return hw::DType::F16;
  if (type.isBF16())
    return hw::DType::BF16;
  return hw::DType::F32;
}

CostModel::CostModel(const hw::HardwareDescription &hw,
                     CostModelOptions options)
    : hw(hw), options(options), numDevices(hw.numDevices()),
      numNodes(hw.numNodes()) {
  nodeOf.reserve(numDevices);
  for (const hw::Device &device : hw.getDevices())
    nodeOf.push_back(device.node);
  // Device classes: devices of one node group and kind have the same links
  // (every node of a group is alike).
  std::map<std::pair<unsigned, hw::DeviceKind>, unsigned> classes;
  deviceClass.reserve(numDevices);
  for (const hw::Device &device : hw.getDevices())
    deviceClass.push_back(
        classes.try_emplace({device.nodeGroup, device.kind}, classes.size())
            .first->second);
  numDeviceClasses = classes.size();
  intraNodeLinks.assign(numDeviceClasses * numDeviceClasses, hw::LinkInfo());
  // Up to two devices of each class in the first node of its group: enough
  // for a link between two distinct devices of any pair of classes.
  std::vector<SmallVector<unsigned, 2>> examples(numDeviceClasses);
  std::vector<bool> groupSeen;
  for (const hw::Node &node : hw.getNodes()) {
    if (node.nodeGroup >= groupSeen.size())
      groupSeen.resize(node.nodeGroup + 1, false);
    if (groupSeen[node.nodeGroup])
      continue;
    groupSeen[node.nodeGroup] = true;
    for (unsigned d = node.firstDevice; d < node.firstDevice + node.numDevices;
         ++d)
      if (examples[deviceClass[d]].size() < 2)
        examples[deviceClass[d]].push_back(d);
  }
  for (unsigned a = 0; a < numDeviceClasses; ++a)
    for (unsigned b = 0; b < numDeviceClasses; ++b) {
      if (examples[a].empty() || examples[b].empty() ||
          nodeOf[examples[a][0]] != nodeOf[examples[b][0]])
        continue;
      unsigned src = examples[a][0];
      unsigned dst = examples[b][0] != src    ? examples[b][0]
                     : examples[b].size() > 1 ? examples[b][1]
                                              : src;
      // A class with one device per node has no link to its own class.
      if (src != dst)
        intraNodeLinks[a * numDeviceClasses + b] = hw.link(src, dst);
    }
  for (unsigned d = 0; d < numDevices; ++d)
    if (nodeOf[d] != nodeOf[0]) {
      networkLink = hw.link(0, d);
      break;
    }
}

const hw::TierSpec *CostModel::getStreamTier(unsigned device) const {
  unsigned node = nodeOf[device];
  if (const hw::TierSpec *host = hw.getHostMemory(node))
    return host;
  return hw.getDisk(node);
}

double CostModel::getStreamTime(unsigned device, double bytes) const {
  const hw::TierSpec *tier = getStreamTier(device);
  if (!tier)
    return std::numeric_limits<double>::infinity();
  return tier->latency + bytes / tier->bandwidth;
}

double CostModel::getKernelTime(unsigned device, hw::DType type, double flops,
                                double bytes, bool contraction) const {
  const hw::Device &d = hw.getDevice(device);
  double efficiency = contraction ? options.contractionEfficiency
                                  : options.elementwiseEfficiency;
  double computeTime = flops / (d.getPeakFlops(type) * efficiency);
  double memoryTime = bytes / (d.memoryBandwidth * options.memoryEfficiency);
  return std::max(computeTime, memoryTime);
}

TransferAccumulator::TransferAccumulator(const CostModel &model)
    : model(model), send(model.getNumDevices(), 0.0),
      recv(model.getNumDevices(), 0.0),
      nicOut(model.getHardware().numNodes(), 0.0),
      nicIn(model.getHardware().numNodes(), 0.0) {}

void TransferAccumulator::addAll(ArrayRef<Flow> flows) {
  double intraBytes = 0, interBytes = 0;
  double newLatency = latency, newBusiest = busiest;
  for (const Flow &flow : flows) {
    if (flow.src == flow.dst)
      continue;
    hw::LinkInfo link = model.getLink(flow.src, flow.dst);
    bool interNode = link.linkClass == hw::LinkClass::InterNode;
    (interNode ? interBytes : intraBytes) += flow.bytes;
    if (flow.bytes <= 0)
      continue;
    double seconds = flow.bytes / link.bandwidth;
    newBusiest = std::max(newBusiest, send[flow.src] += seconds);
    newBusiest = std::max(newBusiest, recv[flow.dst] += seconds);
    if (interNode) {
      newBusiest =
          std::max(newBusiest, nicOut[model.getNodeOf(flow.src)] += seconds);
      newBusiest =
          std::max(newBusiest, nicIn[model.getNodeOf(flow.dst)] += seconds);
    }
    // One more latency than the data needs: starting the transfer (a
    // collective's launch and synchronization).
    newLatency = std::max(newLatency, (flow.steps + 1) * link.latency);
  }
  bytes.intraNode += intraBytes;
  bytes.interNode += interBytes;
  latency = newLatency;
  busiest = newBusiest;
}

void TransferAccumulator::clear() {
  std::fill(send.begin(), send.end(), 0.0);
  std::fill(recv.begin(), recv.end(), 0.0);
  std::fill(nicOut.begin(), nicOut.end(), 0.0);
  std::fill(nicIn.begin(), nicIn.end(), 0.0);
  latency = busiest = 0;
  bytes = TrafficBytes();
}

namespace {
/// A FlowSink that keeps the flows (for the overloads on a list).
struct FlowList final : FlowSink {
  explicit FlowList(SmallVectorImpl<Flow> &flows) : flows(flows) {}
  void add(const Flow &flow) override { flows.push_back(flow); }
  SmallVectorImpl<Flow> &flows;
};
} // namespace

double CostModel::getTransferTime(ArrayRef<Flow> flows) const {
  TransferAccumulator accumulator(*this);
  for (const Flow &flow : flows)
    accumulator.add(flow);
  return accumulator.getTime();
}

TrafficBytes CostModel::getTrafficBytes(ArrayRef<Flow> flows) const {
  TransferAccumulator accumulator(*this);
  for (const Flow &flow : flows)
    accumulator.add(flow);
  return accumulator.getBytes();
}

SmallVector<unsigned, 8>
CostModel::getRingOrder(ArrayRef<unsigned> group) const {
  SmallVector<unsigned, 8> ring(group.begin(), group.end());
  llvm::sort(ring, [&](unsigned a, unsigned b) {
    return std::make_pair(nodeOf[a], a) < std::make_pair(nodeOf[b], b);
  });
  return ring;
}

/// Flows of a collective over the copies of every tile, accounted as a ring:
/// each device sends `fraction` of its tile to the next one. The latency is
/// that of recursive halving / doubling (`steps` = log2 of the group per
/// phase), which reaches the same per-device bytes (Rabenseifner).
static void addRingFlows(const CostModel &model, const TensorDist &dist,
                         ArrayRef<int64_t> shape, int64_t elementBytes,
                         double fraction, unsigned steps, FlowSink &flows) {
  for (int64_t t = 0, e = dist.getNumTiles(); t < e; ++t) {
    double bytes = double(dist.getTileElements(shape, t)) * elementBytes;
    for (unsigned g = 0; g < dist.groups; ++g) {
      SmallVector<unsigned, 8> ring =
          model.getRingOrder(dist.getGroupDevices(t, g));
      if (ring.size() < 2)
        continue;
      for (size_t i = 0; i < ring.size(); ++i)
        flows.add(
            {ring[i], ring[(i + 1) % ring.size()], bytes * fraction, steps});
    }
  }
}

/// ceil(log2(n)) for n >= 1 (once per flow of a chain: no loop).
static unsigned ceilLog2(unsigned n) { return llvm::Log2_32_Ceil(n); }

void CostModel::addAllReduceFlows(const TensorDist &dist,
                                  ArrayRef<int64_t> shape, int64_t elementBytes,
                                  SmallVectorImpl<Flow> &flows) const {
  FlowList list(flows);
  addAllReduceFlows(dist, shape, elementBytes, list);
}

void CostModel::addAllReduceFlows(const TensorDist &dist,
                                  ArrayRef<int64_t> shape, int64_t elementBytes,
                                  FlowSink &flows) const {
  double q = dist.getGroupSize();
  addRingFlows(*this, dist, shape, elementBytes, 2 * (q - 1) / q,
               2 * ceilLog2(dist.getGroupSize()), flows);
}

void CostModel::addReduceScatterFlows(const TensorDist &dist,
                                      ArrayRef<int64_t> shape,
                                      int64_t elementBytes,
                                      SmallVectorImpl<Flow> &flows) const {
  FlowList list(flows);
  addReduceScatterFlows(dist, shape, elementBytes, list);
}

void CostModel::addReduceScatterFlows(const TensorDist &dist,
                                      ArrayRef<int64_t> shape,
                                      int64_t elementBytes,
                                      FlowSink &flows) const {
  double q = dist.getGroupSize();
  addRingFlows(*this, dist, shape, elementBytes, (q - 1) / q,
               ceilLog2(dist.getGroupSize()), flows);
}

namespace {
/// For one dimension: the tiles of the source that overlap each target tile,
/// with the overlap length.
using Overlaps = SmallVector<SmallVector<std::pair<int64_t, int64_t>, 2>, 8>;

Overlaps computeOverlaps(const TensorDist &from, const TensorDist &to,
                         ArrayRef<int64_t> shape, unsigned dim) {
  Overlaps overlaps(to.grid[dim]);
  for (int64_t tc = 0; tc < to.grid[dim]; ++tc) {
    auto [begin, end] = to.getTileRange(shape, dim, tc);
    for (int64_t fc = 0; fc < from.grid[dim]; ++fc) {
      auto [fb, fe] = from.getTileRange(shape, dim, fc);
      int64_t length = std::min(end, fe) - std::max(begin, fb);
      if (length > 0)
        overlaps[tc].push_back({fc, length});
    }
  }
  return overlaps;
}
} // namespace

/// Sends `bytes` from one of `holders` to every device of `needing` along
/// chains: needing devices are grouped by node, and each node's chain starts
/// at a holder on that node, or else continues the previous node's chain.
/// `holders` must be ordered by node (stably: the order within a node picks
/// the chain's start). The flows are appended to `chain`.
///
/// The holders on `node`: the run [begin, end) of `holders` (ordered by
/// node) found by walking on from `begin`, which nodes visited in ascending
/// order keep moving forward.
static std::pair<size_t, size_t> findLocalHolders(const CostModel &model,
                                                  ArrayRef<unsigned> holders,
                                                  unsigned node, size_t begin) {
  while (begin < holders.size() && model.getNodeOf(holders[begin]) < node)
    ++begin;
  size_t end = begin;
  while (end < holders.size() && model.getNodeOf(holders[end]) == node)
    ++end;
  return {begin, end};
}

static void addChainFlows(const CostModel &model, ArrayRef<unsigned> holders,
                          SmallVectorImpl<unsigned> &needing, double bytes,
                          unsigned salt, SmallVectorImpl<Flow> &chain) {
  if (needing.size() == 1) {
    // The common case (a tile moving to one device): its first holder on
    // that node, else any holder; one step.
    auto [h, localEnd] =
        findLocalHolders(model, holders, model.getNodeOf(needing[0]), 0);
    unsigned prev = localEnd > h ? holders[h + salt % (localEnd - h)]
                                 : holders[salt % holders.size()];
    chain.push_back({prev, needing[0], bytes, 1});
    return;
  }
  auto byNode = [&](unsigned a, unsigned b) {
    return std::make_pair(model.getNodeOf(a), a) <
           std::make_pair(model.getNodeOf(b), b);
  };
  // Canonical distributions list devices by id, and ids go node by node:
  // usually sorted already.
  if (!llvm::is_sorted(needing, byNode))
    llvm::sort(needing, byNode);
  // One flow per needing device, written through a pointer (push_back
  // would store and reload the size for every flow).
  size_t base = chain.size();
  chain.resize_for_overwrite(base + needing.size());
  Flow *out = chain.data() + base;
  int64_t tail = -1;
  unsigned steps = 0;
  size_t h = 0;
  for (size_t i = 0; i < needing.size();) {
    unsigned node = model.getNodeOf(needing[i]);
    // Nodes ascend in `needing`: the walk over `holders` goes on.
    size_t localEnd;
    std::tie(h, localEnd) = findLocalHolders(model, holders, node, h);
    unsigned prev;
    if (localEnd > h) {
      prev = holders[h + salt % (localEnd - h)];
      steps = 0;
    } else if (tail >= 0) {
      prev = unsigned(tail);
    } else {
      prev = holders[salt % holders.size()];
      steps = 0;
    }
    for (; i < needing.size() && model.getNodeOf(needing[i]) == node; ++i) {
      // Bytes flow along the chain; the latency is that of a binomial tree
      // over the same devices.
      *out++ = {prev, needing[i], bytes, ceilLog2(++steps + 1)};
      prev = needing[i];
    }
    tail = prev;
  }
}

void CostModel::addMoveFlows(const TensorDist &from, const TensorDist &to,
                             ArrayRef<int64_t> shape, int64_t elementBytes,
                             SmallVectorImpl<Flow> &flows) const {
  FlowList list(flows);
  addMoveFlows(from, to, shape, elementBytes, list);
}

/// CostModel::addMoveFlows into any sink (a final class's add inlines).
template <typename Sink>
static void addMoveFlowsTo(const CostModel &model, const TensorDist &from,
                           const TensorDist &to, ArrayRef<int64_t> shape,
                           int64_t elementBytes, Sink &flows) {
  unsigned rank = to.getRank();
  SmallVector<Overlaps, 4> overlaps;
  for (unsigned d = 0; d < rank; ++d)
    overlaps.push_back(computeOverlaps(from, to, shape, d));
  SmallVector<int64_t, 4> coords, pick(rank, 0), fromCoords(rank, 0);
  SmallVector<unsigned, 16> needing;
  SmallVector<unsigned, 16> holdersByNode;
  SmallVector<Flow, 256> chain;
  auto nodeOf = [&](unsigned device) { return model.getNodeOf(device); };
  // Which devices hold the source tile: beyond a few, marked once per tile
  // pair, so that finding the devices that need it is linear in the
  // devices, not in the product of holders and wanters (a replicated tile
  // on thousands).
  std::vector<uint8_t> holds(model.getNumDevices(), 0);
  for (int64_t t = 0, e = to.getNumTiles(); t < e; ++t) {
    to.getTileCoords(t, coords);
    ArrayRef<unsigned> want = to.getTileDevices(t);
    // Odometer over the overlapping source tiles.
    std::fill(pick.begin(), pick.end(), 0);
    while (true) {
      int64_t elements = 1;
      bool empty = false;
      for (unsigned d = 0; d < rank; ++d) {
        const auto &list = overlaps[d][coords[d]];
        if (list.empty()) {
          empty = true;
          break;
        }
        fromCoords[d] = list[pick[d]].first;
        elements *= list[pick[d]].second;
      }
      if (empty)
        break;
      int64_t f = from.getTileIndex(fromCoords);
      ArrayRef<unsigned> holders = from.getTileDevices(f);
      needing.clear();
      if (holders.size() * want.size() <= 64) {
        for (unsigned device : want)
          if (!llvm::is_contained(holders, device))
            needing.push_back(device);
      } else {
        for (unsigned device : holders)
          holds[device] = 1;
        for (unsigned device : want)
          if (!holds[device])
            needing.push_back(device);
        for (unsigned device : holders)
          holds[device] = 0;
      }
      if (!needing.empty() && elements > 0) {
        if (!llvm::is_sorted(holders, [&](unsigned a, unsigned b) {
              return nodeOf(a) < nodeOf(b);
            })) {
          // Ordered by node, keeping the order within a node.
          SmallVector<std::pair<unsigned, unsigned>, 16> keyed;
          for (auto [i, device] : llvm::enumerate(holders))
            keyed.push_back({nodeOf(device), unsigned(i)});
          llvm::sort(keyed);
          holdersByNode.clear();
          for (auto [node, i] : keyed)
            holdersByNode.push_back(holders[i]);
          holders = holdersByNode;
        }
        addChainFlows(model, holders, needing, double(elements) * elementBytes,
                      unsigned(t + f), chain);
        // Flows go to the sink in batches (TransferAccumulator::addAll).
        if (chain.size() >= 256) {
          flows.addAll(chain);
          chain.clear();
        }
      }
      int d = int(rank) - 1;
      for (; d >= 0; --d) {
        if (++pick[d] < int64_t(overlaps[d][coords[d]].size()))
          break;
        pick[d] = 0;
      }
      if (d < 0)
        break;
    }
  }
  flows.addAll(chain);
}

void CostModel::addMoveFlows(const TensorDist &from, const TensorDist &to,
                             ArrayRef<int64_t> shape, int64_t elementBytes,
                             FlowSink &flows) const {
  addMoveFlowsTo(*this, from, to, shape, elementBytes, flows);
}

void CostModel::addMoveFlows(const TensorDist &from, const TensorDist &to,
                             ArrayRef<int64_t> shape, int64_t elementBytes,
                             TransferAccumulator &flows) const {
  addMoveFlowsTo(*this, from, to, shape, elementBytes, flows);
}

std::optional<TensorDist>
CostModel::getReduceScatterResult(const TensorDist &from,
                                  ArrayRef<int64_t> shape, unsigned dim) const {
  int64_t q = from.getGroupSize();
  // Uneven tiles are not cut further (an all-reduce completes them).
  if (!from.weights.empty())
    return std::nullopt;
  TensorDist to;
  to.grid = from.grid;
  to.unit = from.unit;
  to.copies = from.groups;
  to.grid[dim] *= q;
  int64_t units = (shape[dim] + to.unit[dim] - 1) / to.unit[dim];
  if (to.grid[dim] > units)
    return std::nullopt;
  for (int64_t c = 0; c < from.grid[dim]; ++c) {
    auto range = from.getTileRange(shape, dim, c);
    if (to.getTileRange(shape, dim, c * q).first != range.first ||
        to.getTileRange(shape, dim, c * q + q - 1).second != range.second)
      return std::nullopt;
  }
  SmallVector<int64_t, 4> coords;
  for (int64_t t = 0, e = to.getNumTiles(); t < e; ++t) {
    to.getTileCoords(t, coords);
    int64_t j = coords[dim] % q;
    coords[dim] /= q;
    for (unsigned g = 0; g < from.groups; ++g)
      to.devices.push_back(
          from.getGroupDevices(from.getTileIndex(coords), g)[j]);
  }
  to.canonicalize(shape);
  return to;
}

MoveStep CostModel::makeStep(MoveStep::Kind kind, const TensorDist &from,
                             const TensorDist &to, unsigned dim,
                             const TransferAccumulator &flows) const {
  MoveStep step;
  step.kind = kind;
  step.from = from;
  step.to = to;
  step.dim = dim;
  step.time = flows.getTime();
  step.bytes = flows.getBytes();
  return step;
}

MoveStep CostModel::getMove(const TensorDist &from, const TensorDist &to,
                            ArrayRef<int64_t> shape,
                            int64_t elementBytes) const {
  TransferAccumulator flows(*this);
  addMoveFlows(from, to, shape, elementBytes, flows);
  return makeStep(MoveStep::Kind::Repartition, from, to, 0, flows);
}

CostModel::MoveScaling CostModel::getMoveScaling(const TensorDist &from,
                                                 const TensorDist &to,
                                                 ArrayRef<int64_t> shape,
                                                 int64_t elementBytes) const {
  TransferAccumulator flows(*this);
  addMoveFlows(from, to, shape, elementBytes, flows);
  double bytes = double(elementBytes);
  for (int64_t extent : shape)
    bytes *= double(extent);
  MoveScaling scaling;
  scaling.latency = flows.getLatency();
  scaling.secondsPerByte = bytes > 0 ? flows.getBusiest() / bytes : 0.0;
  return scaling;
}

SmallVector<MoveStep, 4>
CostModel::getReductionOptions(const TensorDist &from, ArrayRef<int64_t> shape,
                               int64_t elementBytes) const {
  SmallVector<MoveStep, 4> options;
  if (!from.partial)
    return options;
  TransferAccumulator flows(*this);
  addAllReduceFlows(from, shape, elementBytes, flows);
  options.push_back(makeStep(MoveStep::Kind::AllReduce, from,
                             from.withoutPartial(), 0, flows));
  flows.clear();
  addReduceScatterFlows(from, shape, elementBytes, flows);
  for (unsigned dim = 0; dim < from.getRank(); ++dim)
    if (std::optional<TensorDist> scattered =
            getReduceScatterResult(from, shape, dim))
      options.push_back(makeStep(MoveStep::Kind::ReduceScatter, from,
                                 *scattered, dim, flows));
  return options;
}

Conversion CostModel::getConversion(const TensorDist &from,
                                    const TensorDist &to,
                                    ArrayRef<int64_t> shape,
                                    int64_t elementBytes) const {
  Conversion best;
  if (from == to)
    return best;
  auto finish = [&](Conversion conversion, const TensorDist &mid) {
    if (mid != to)
      conversion.steps.push_back(getMove(mid, to, shape, elementBytes));
    for (const MoveStep &step : conversion.steps)
      conversion.time += step.time;
    return conversion;
  };
  if (!from.partial)
    return finish(Conversion(), from);
  bool first = true;
  for (MoveStep &reduction : getReductionOptions(from, shape, elementBytes)) {
    TensorDist mid = reduction.to;
    Conversion candidate;
    candidate.steps.push_back(std::move(reduction));
    candidate = finish(std::move(candidate), mid);
    if (first || candidate.time < best.time)
      best = std::move(candidate);
    first = false;
  }
  return best;
}

Conversion CostModel::getReduction(const TensorDist &from,
                                   ArrayRef<int64_t> shape,
                                   int64_t elementBytes) const {
  Conversion best;
  for (MoveStep &step : getReductionOptions(from, shape, elementBytes))
    if (best.steps.empty() || step.time < best.time) {
      best.time = step.time;
      best.steps.assign(1, std::move(step));
    }
  return best;
}
