//===- Report.cpp - Reading plans back: EXPLAIN and Graphviz --------------===//

#include "tra/Optimizer/Report.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Optimizer/IndexSpace.h"
#include "tra/Optimizer/Recompute.h"

#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

std::string plan::formatBytes(double bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  if (u == 0)
    return llvm::formatv("{0:F0} B", bytes).str();
  return llvm::formatv("{0:F2} {1}", bytes, units[u]).str();
}

std::string plan::formatSeconds(double seconds) {
  if (seconds >= 1)
    return llvm::formatv("{0:F3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F1} us", seconds * 1e6).str();
}

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

static std::string typeText(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t extent : tensor.getShape())
    os << extent << "x";
  os << tensor.getElementType();
  return text;
}

static std::string describeOp(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto einsum = llvm::dyn_cast<EinsumOp>(op)) {
    text += " \"" + einsum.getSpec().str() + "\" " +
            stringifyCombinerKind(einsum.getCombiner()).str();
    if (einsum.getAggregation() != AggregationKind::sum)
      text +=
          " reduce " + stringifyAggregationKind(einsum.getAggregation()).str();
  } else if (auto map = llvm::dyn_cast<MapOp>(op)) {
    if (map.getSpec())
      text += " \"" + map.getSpec()->str() + "\"";
  } else if (auto reduce = llvm::dyn_cast<AllReduceOp>(op)) {
    text +=
        " " + stringifyAggregationKind(*reduce.getFrom().getPartial()).str();
  } else if (auto scatter = llvm::dyn_cast<ReduceScatterOp>(op)) {
    text += " " +
            stringifyAggregationKind(*scatter.getFrom().getPartial()).str() +
            " dim " + std::to_string(scatter.getDim());
  }
  if (op->hasAttr(kRecomputedAttrName))
    text += " (recomputed)";
  return text;
}

static std::string splitText(SplitAttr split) {
  std::vector<std::string> axes;
  for (auto [name, count] :
       llvm::zip_equal(split.getIndices(), split.getCounts()))
    axes.push_back(std::string(1, name) + "=" + std::to_string(count));
  if (split.getReplicas() > 1)
    axes.insert(axes.begin() +
                    std::min<size_t>(split.getReplicaPosition(), axes.size()),
                "x" + std::to_string(split.getReplicas()));
  // An uneven split: the parts' weights, "e=2 4:1".
  if (!split.getWeights().empty() && !axes.empty()) {
    std::vector<std::string> weights;
    for (int64_t w : split.getWeights())
      weights.push_back(std::to_string(w));
    axes.front() += " " + llvm::join(weights, ":");
  }
  std::string text = axes.empty() ? "-" : llvm::join(axes, " ");
  // A pipeline stage on later devices.
  if (split.getFirstDevice())
    text += " @" + std::to_string(split.getFirstDevice());
  return text;
}

static std::string devicesText(DistAttr dist) {
  SmallVector<unsigned, 16> devices;
  for (int64_t d : dist.getDevices())
    devices.push_back(unsigned(d));
  return formatDeviceSet(devices);
}

/// The units of the split indices of `space`, read from the distributions
/// an operation reads and writes.
static void recoverUnits(IndexSpace &space, ArrayAttr operands,
                         ArrayAttr results) {
  auto visit = [&](ArrayRef<DimRef> refs, Attribute attr) {
    auto dist = llvm::dyn_cast_or_null<DistAttr>(attr);
    if (!dist || dist.getRank() != refs.size())
      return;
    for (auto [d, ref] : llvm::enumerate(refs))
      if (ref.index >= 0 && dist.getGrid()[d] > 1 &&
          dist.getUnit()[d] % ref.scale == 0)
        space.units[ref.index] =
            std::max(space.units[ref.index], dist.getUnit()[d] / ref.scale);
  };
  for (auto [k, refs] : llvm::enumerate(space.operands))
    if (operands && k < operands.size())
      visit(refs, operands[k]);
  if (results && !results.empty())
    visit(space.results[0], results[0]);
}

/// Compute seconds of a planned operation.
static double getOpTime(Operation *op, const CostModel &model) {
  auto results = op->getAttrOfType<ArrayAttr>(PlanDialect::kResultsAttrName);
  if (llvm::isa<FillOp>(op) && results && !results.empty()) {
    auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    double bytes =
        fromAttr(llvm::cast<DistAttr>(results[0]))
            .getMaxBytesPerDevice(type.getShape(),
                                  getElementBytes(type.getElementType()),
                                  model.getNumDevices());
    return bytes / (model.getHardware().getDevice(0).memoryBandwidth *
                    model.getOptions().memoryEfficiency);
  }
  auto split = op->getAttrOfType<SplitAttr>(PlanDialect::kSplitAttrName);
  std::optional<IndexSpace> space = getIndexSpace(op);
  if (!split || !space)
    return 0;
  std::optional<SplitChoice> choice = fromAttr(*space, split);
  if (!choice)
    return 0;
  recoverUnits(*space,
               op->getAttrOfType<ArrayAttr>(PlanDialect::kOperandsAttrName),
               results);
  return getChoiceTime(*space, *choice, model);
}

/// Seconds and bytes of a move operation.
static std::pair<double, TrafficBytes> getMoveCost(Operation *op,
                                                   const CostModel &model) {
  auto type = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t elementBytes = getElementBytes(type.getElementType());
  TransferAccumulator flows(model);
  if (auto move = llvm::dyn_cast<AllReduceOp>(op))
    model.addAllReduceFlows(fromAttr(move.getFrom()), type.getShape(),
                            elementBytes, flows);
  else if (auto move = llvm::dyn_cast<ReduceScatterOp>(op))
    model.addReduceScatterFlows(fromAttr(move.getFrom()), type.getShape(),
                                elementBytes, flows);
  else if (auto move = llvm::dyn_cast<RepartitionOp>(op))
    model.addMoveFlows(fromAttr(move.getFrom()), fromAttr(move.getTo()),
                       type.getShape(), elementBytes, flows);
  return {flows.getTime(), flows.getBytes()};
}

namespace {
/// Per-device memory over the program: arguments stay, other values live
/// from their definition to their last use (views share their source's
/// memory; returned values stay).
class MemoryTracker {
public:
  MemoryTracker(func::FuncOp func, unsigned numDevices)
      : numDevices(numDevices), current(numDevices, 0.0) {
    memory.resident.assign(numDevices, 0.0);
    memory.peakActivations.assign(numDevices, 0.0);
    Block &block = func.getBody().front();
    DenseMap<Operation *, unsigned> positions;
    unsigned position = 0;
    for (Operation &op : block)
      positions[&op] = position++;
    Operation *terminator = block.getTerminator();
    for (Operation &op : block.without_terminator()) {
      for (Value result : op.getResults()) {
        unsigned end = positions[&op];
        for (Operation *user : result.getUsers()) {
          while (user && !positions.count(user))
            user = user->getParentOp();
          if (!user)
            continue;
          end = std::max(end, user == terminator ? ~0u : positions[user]);
        }
        Value storage = getStorage(result);
        auto [it, inserted] = endOf.try_emplace(storage, end);
        if (!inserted)
          it->second = std::max(it->second, end);
      }
    }
    for (auto [storage, end] : endOf)
      if (end != ~0u && storage.getDefiningOp())
        freedAfter[end].push_back(storage);
    this->positions = std::move(positions);
  }

  void addArgument(Value value, DistAttr dist) {
    add(value, dist, memory.resident);
  }

  /// The per-device bytes of the streamed arguments each operation reads,
  /// in program order: their buffers exist from the previous such
  /// operation on.
  void setStreamedReads(
      ArrayRef<std::pair<Operation *, std::vector<double>>> reads) {
    for (const auto &[op, bytes] : reads)
      streamed.addRead(positions.lookup(op), bytes);
    memory.streamed = streamed.getTotal(numDevices);
  }

  /// Accounts for `op`, which writes `dists`, then frees what it read last.
  void visit(Operation *op, ArrayRef<DistAttr> dists) {
    for (auto [result, dist] : llvm::zip_equal(op->getResults(), dists)) {
      if (getStorage(result) != result)
        continue;
      add(result, dist, current);
      owned[result] = dist;
    }
    std::vector<double> step = current;
    streamed.addLive(positions.lookup(op), step);
    for (unsigned d = 0; d < numDevices; ++d)
      memory.peakActivations[d] = std::max(memory.peakActivations[d], step[d]);
    for (Value storage : freedAfter.lookup(positions.lookup(op))) {
      std::vector<double> bytes(numDevices, 0.0);
      add(storage, owned.lookup(storage), bytes);
      for (unsigned d = 0; d < numDevices; ++d)
        current[d] -= bytes[d];
    }
  }

  MemoryUse memory;

private:
  static Value getStorage(Value value) {
    Operation *op = value.getDefiningOp();
    if (auto reshape = llvm::dyn_cast_or_null<ReshapeOp>(op))
      return getStorage(reshape.getInput());
    if (auto update = llvm::dyn_cast_or_null<UpdateSliceOp>(op))
      return getStorage(update.getDest());
    return value;
  }

  void add(Value value, DistAttr dist, MutableArrayRef<double> bytes) {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type || !dist)
      return;
    fromAttr(dist).addBytesPerDevice(
        type.getShape(), getElementBytes(type.getElementType()), bytes);
  }

  unsigned numDevices;
  std::vector<double> current;
  DenseMap<Operation *, unsigned> positions;
  DenseMap<Value, unsigned> endOf;
  DenseMap<unsigned, SmallVector<Value, 2>> freedAfter;
  DenseMap<Value, DistAttr> owned;
  StreamedBuffers streamed;
};
} // namespace

static std::string argumentName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(i, "tra.name"))
    return name.str();
  return "%arg" + std::to_string(i);
}

/// The results the next call reads as its arguments (`tra.carries`): one
/// move row each whose distribution differs from its argument's, charged to
/// the step like the moves inside it.
static void addCarries(func::FuncOp func, const CostModel &model,
                       PlanReport &report) {
  Operation *terminator = func.getBody().front().getTerminator();
  for (auto [i, returned] : llvm::enumerate(terminator->getOperands())) {
    auto carries = func.getResultAttrOfType<IntegerAttr>(i, "tra.carries");
    if (!carries || carries.getInt() < 0 ||
        carries.getInt() >= int64_t(func.getNumArguments()))
      continue;
    unsigned arg = carries.getInt();
    DistAttr from = getWrittenDist(returned);
    auto to = func.getArgAttrOfType<DistAttr>(arg, PlanDialect::kDistAttrName);
    auto type = llvm::dyn_cast<RankedTensorType>(returned.getType());
    if (!from || !to || from == to || !type ||
        type != func.getArgument(arg).getType())
      continue;
    ReportRow row;
    auto name = func.getResultAttrOfType<StringAttr>(i, "tra.name");
    row.name = name ? name.str() : "result " + std::to_string(i);
    row.operation = "carried to " + argumentName(func, arg);
    row.type = typeText(type);
    row.split = "move";
    row.dist = fromAttr(to).str();
    row.devices = devicesText(to);
    row.isMove = true;
    TransferAccumulator flows(model);
    model.addMoveFlows(fromAttr(from), fromAttr(to), type.getShape(),
                       getElementBytes(type.getElementType()), flows);
    row.time = flows.getTime();
    row.bytes = flows.getBytes();
    report.communicationTime += row.time;
    report.bytes += row.bytes;
    ++report.carries;
    report.rows.push_back(std::move(row));
  }
}

/// Bytes of a ranked tensor type (0 for anything else).
static double bytesOf(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return double(tensor.getNumElements()) *
         getElementBytes(tensor.getElementType());
}

PlanReport plan::analyzePlan(func::FuncOp func, const CostModel &model) {
  PlanReport report;
  DenseMap<Value, DistAttr> streamed;
  MemoryTracker tracker(func, model.getNumDevices());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    ReportRow row;
    row.name = argumentName(func, i);
    row.operation = "argument";
    row.type = typeText(func.getArgument(i).getType());
    auto dist = func.getArgAttrOfType<DistAttr>(i, PlanDialect::kDistAttrName);
    row.split = "-";
    row.dist = dist ? fromAttr(dist).str() : "unplanned";
    row.devices = dist ? devicesText(dist) : "-";
    if (auto tier =
            func.getArgAttrOfType<StringAttr>(i, PlanDialect::kTierAttrName)) {
      row.split = tier.str();
      streamed[func.getArgument(i)] = dist;
      ++report.streamed;
      (tier.getValue() == "disk" ? report.diskBytes : report.hostBytes) +=
          bytesOf(func.getArgument(i).getType());
    } else {
      tracker.addArgument(func.getArgument(i), dist);
    }
    report.rows.push_back(std::move(row));
  }
  // What each operation reads of the streamed arguments, per device.
  std::vector<std::pair<Operation *, std::vector<double>>> streamedReads;
  for (Operation &op : func.getBody().front().without_terminator()) {
    std::vector<double> bytes;
    for (Value operand : op.getOperands()) {
      auto it = streamed.find(operand);
      if (it == streamed.end() || !it->second)
        continue;
      if (bytes.empty())
        bytes.assign(model.getNumDevices(), 0.0);
      auto type = llvm::cast<RankedTensorType>(operand.getType());
      fromAttr(it->second)
          .addBytesPerDevice(type.getShape(),
                             getElementBytes(type.getElementType()), bytes);
    }
    if (!bytes.empty())
      streamedReads.push_back({&op, std::move(bytes)});
  }
  DenseMap<Operation *, std::pair<double, double>> streamCosts;
  for (const auto &[op, bytes] : streamedReads) {
    auto &[time, most] = streamCosts[op];
    for (auto [device, b] : llvm::enumerate(bytes))
      if (b > 0) {
        time = std::max(time, model.getStreamTime(device, b));
        most = std::max(most, b);
      }
  }
  tracker.setStreamedReads(streamedReads);
  unsigned index = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    ReportRow row;
    row.name = "%" + std::to_string(index++);
    row.operation = describeOp(&op);
    row.type = op.getNumResults() ? typeText(op.getResult(0).getType()) : "";
    SmallVector<DistAttr, 1> dists;
    for (Value result : op.getResults())
      dists.push_back(getWrittenDist(result));
    DistAttr dist = dists.empty() ? DistAttr() : dists.front();
    row.dist = dist ? fromAttr(dist).str() : "unplanned";
    row.devices = dist ? devicesText(dist) : "0";
    if (llvm::isa<RepartitionOp, AllReduceOp, ReduceScatterOp>(op)) {
      row.isMove = true;
      row.split = "move";
      std::tie(row.time, row.bytes) = getMoveCost(&op, model);
      report.communicationTime += row.time;
      report.bytes += row.bytes;
      report.allReduces += llvm::isa<AllReduceOp>(op);
      report.reduceScatters += llvm::isa<ReduceScatterOp>(op);
      report.repartitions += llvm::isa<RepartitionOp>(op);
    } else {
      auto split = op.getAttrOfType<SplitAttr>(PlanDialect::kSplitAttrName);
      row.split = split ? splitText(split) : "-";
      row.time = getOpTime(&op, model);
      report.computeTime += row.time;
      if (op.hasAttr(kRecomputedAttrName)) {
        ++report.recomputed;
        report.recomputeTime += row.time;
      }
      report.unplanned += !dist;
    }
    if (auto it = streamCosts.find(&op); it != streamCosts.end())
      std::tie(row.streamTime, row.streamBytes) = it->second;
    tracker.visit(&op, dists);
    report.rows.push_back(std::move(row));
  }
  addCarries(func, model, report);
  // The tier links run beside the compute: a transfer starts when the link
  // is free and the previous streamed operation has started (its buffer
  // from before is free), and its operation waits for it.
  double clock = 0, link = 0, previousStart = 0;
  for (const ReportRow &row : report.rows) {
    if (row.streamTime > 0) {
      link = std::max(link, previousStart) + row.streamTime;
      report.streamTime += row.streamTime;
      if (link > clock) {
        report.streamStall += link - clock;
        clock = link;
      }
      previousStart = clock;
    }
    clock += row.time;
  }
  report.memory = std::move(tracker.memory);
  return report;
}

//===----------------------------------------------------------------------===//
// EXPLAIN
//===----------------------------------------------------------------------===//

static void printRow(llvm::raw_ostream &os, const ReportRow &row) {
  os << llvm::formatv("{0,10}  {1,-40} {2,-22} {3,-12} {4,-44} {5,-10} {6,11}",
                      row.name, row.operation, row.type, row.split, row.dist,
                      row.devices,
                      row.time > 0 ? formatSeconds(row.time) : "-");
  if (row.isMove)
    os << "  moved " << formatBytes(row.bytes.total());
  if (row.streamTime > 0)
    os << "  streamed in " << formatBytes(row.streamBytes) << " ("
       << formatSeconds(row.streamTime) << ")";
  os << "\n";
}

void plan::printExplain(func::FuncOp func, const CostModel &model,
                        llvm::raw_ostream &os, const PlanSummary *summary) {
  const auto &hardware = model.getHardware();
  PlanReport report = analyzePlan(func, model);
  os << "EXPLAIN @" << func.getSymName() << " on " << hardware.summary()
     << "\n";
  if (summary)
    os << llvm::formatv(
        "  search: {0} nodes, {1} choices, {2} states at "
        "most{3}, {4} search{5}, memory penalty {6:e} s/B, "
        "planned in {7}\n",
        summary->numNodes, summary->numChoices, summary->maxStates,
        summary->pruned ? " (beam)" : " (exact)", summary->searches,
        summary->searches == 1 ? "" : "es", summary->lambda,
        formatSeconds(summary->planningSeconds));
  if (summary && !summary->stages.empty()) {
    os << "  pipeline: " << summary->stages.size() << " stages:";
    for (auto [i, stage] : llvm::enumerate(summary->stages)) {
      unsigned ops = stage.lastOp - stage.firstOp + 1;
      os << (i ? "; " : " ") << ops << (ops == 1 ? " operation" : " operations")
         << " on " << stage.getDevicesText();
    }
    os << "\n";
  }
  os << llvm::formatv(
      "{0,10}  {1,-40} {2,-22} {3,-12} {4,-44} {5,-10} {6,11}\n", "id",
      "operation", "type", "split", "distribution", "devices", "est. time");
  for (const ReportRow &row : report.rows)
    printRow(os, row);

  os << "TOTAL\n";
  os << "  estimated step time: " << formatSeconds(report.getStepTime())
     << " (compute " << formatSeconds(report.computeTime) << ", communication "
     << formatSeconds(report.communicationTime);
  if (report.streamed)
    os << ", waiting for streamed weights "
       << formatSeconds(report.streamStall);
  os << ")\n";
  if (report.streamed) {
    double most = 0;
    for (double bytes : report.memory.streamed)
      most = std::max(most, bytes);
    os << "  memory tiers: " << report.streamed
       << " weights live in the nodes' tiers (host memory "
       << formatBytes(report.hostBytes) << ", disk "
       << formatBytes(report.diskBytes)
       << ") and are streamed to the devices each step: " << formatBytes(most)
       << " to the busiest device, " << formatSeconds(report.streamTime)
       << " of transfers, " << formatSeconds(report.streamStall)
       << " of them not hidden behind compute\n";
  }
  os << llvm::formatv(
      "  bytes moved: {0:F0} B ({1}): intra-node {2:F0} B "
      "({3}), inter-node {4:F0} B ({5})\n",
      report.bytes.total(), formatBytes(report.bytes.total()),
      report.bytes.intraNode, formatBytes(report.bytes.intraNode),
      report.bytes.interNode, formatBytes(report.bytes.interNode));
  os << "  moves: " << report.allReduces << " all_reduce, "
     << report.reduceScatters << " reduce_scatter, " << report.repartitions
     << " repartition";
  if (report.carries)
    os << ", " << report.carries << " carried to the next step's arguments";
  os << "\n";
  if (report.recomputed)
    os << "  recomputed: " << report.recomputed
       << " elementwise operations run again where the backward pass reads "
          "their results instead of keeping them ("
       << formatSeconds(report.recomputeTime) << ")\n";
  if (report.unplanned)
    os << "  unplanned operations (whole, on device 0): " << report.unplanned
       << "\n";
  os << "  peak memory per device (arguments + activations"
     << (report.streamed ? " and streamed buffers" : "") << " / capacity):\n";
  for (const auto &device : hardware.getDevices()) {
    double peak = report.memory.getPeak(device.id);
    os << llvm::formatv("    device {0,-3} {1}: {2} + {3} = {4} / {5} "
                        "({6:F1}%)\n",
                        device.id, ::tra::hw::stringifyDeviceKind(device.kind),
                        formatBytes(report.memory.resident[device.id]),
                        formatBytes(report.memory.peakActivations[device.id]),
                        formatBytes(peak),
                        formatBytes(double(device.memoryBytes)),
                        100.0 * peak / double(device.memoryBytes));
  }
}

//===----------------------------------------------------------------------===//
// Graphviz
//===----------------------------------------------------------------------===//

/// A distinct colour per device (golden-ratio hues), as #rrggbb.
static std::string deviceColor(unsigned device) {
  double h = std::fmod(0.13 + device * 0.618033988749895, 1.0) * 6;
  double s = device % 2 ? 0.35 : 0.55, v = 0.97;
  double c = v * s, x = c * (1 - std::fabs(std::fmod(h, 2) - 1)), m = v - c;
  double rgb[3][6] = {
      {c, x, 0, 0, x, c}, {x, c, c, x, 0, 0}, {0, 0, x, c, c, x}};
  int sector = int(h) % 6;
  return llvm::formatv("#{0:x-2}{1:x-2}{2:x-2}",
                       unsigned((rgb[0][sector] + m) * 255),
                       unsigned((rgb[1][sector] + m) * 255),
                       unsigned((rgb[2][sector] + m) * 255))
      .str();
}

static std::string escapeHTML(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

/// The tile grid of `dist` as table rows: the last dimension across.
static void printTiles(llvm::raw_ostream &os, DistAttr dist) {
  if (!dist) {
    os << "<TR><TD>unplanned</TD></TR>";
    return;
  }
  int64_t tiles = dist.getNumTiles();
  int64_t columns = dist.getRank() ? dist.getGrid().back() : 1;
  const int64_t maxTiles = 64;
  for (int64_t t = 0; t < std::min(tiles, maxTiles); ++t) {
    if (t % columns == 0)
      os << "<TR>";
    auto devices = dist.getTileDevices(t);
    std::string text;
    for (auto [i, d] : llvm::enumerate(devices))
      text += (i ? "," : "") + std::to_string(d);
    os << "<TD BGCOLOR=\"" << deviceColor(unsigned(devices.front())) << "\">"
       << text << "</TD>";
    if ((t + 1) % columns == 0 || t + 1 == std::min(tiles, maxTiles))
      os << "</TR>";
  }
  if (tiles > maxTiles)
    os << "<TR><TD COLSPAN=\"" << columns << "\">... " << tiles
       << " tiles</TD></TR>";
  if (dist.getPartial())
    os << "<TR><TD COLSPAN=\"" << columns << "\">partial "
       << stringifyAggregationKind(*dist.getPartial()) << "</TD></TR>";
}

/// One node: a title row (name, type, estimate), then the tiles.
static void printDotNode(llvm::raw_ostream &os, const std::string &id,
                         StringRef title, Type type, DistAttr dist, bool isMove,
                         StringRef estimate) {
  int64_t columns = dist && dist.getRank() ? dist.getGrid().back() : 1;
  os << "  " << id << " [label=<<TABLE BORDER=\"" << (isMove ? 2 : 0)
     << "\" CELLBORDER=\"1\" CELLSPACING=\"0\"><TR><TD COLSPAN=\"" << columns
     << "\"><B>" << escapeHTML(title) << "</B><BR/>"
     << escapeHTML(typeText(type));
  if (!estimate.empty())
    os << "<BR/>" << escapeHTML(estimate);
  os << "</TD></TR>";
  printTiles(os, dist);
  os << "</TABLE>>];\n";
}

/// "1.2 ms", or "12.0 us, 2.00 MiB moved" for moves.
static std::string estimateText(Operation *op, const CostModel &model) {
  if (llvm::isa<RepartitionOp, AllReduceOp, ReduceScatterOp>(op)) {
    auto [time, bytes] = getMoveCost(op, model);
    return formatSeconds(time) + ", " + formatBytes(bytes.total()) + " moved";
  }
  double time = getOpTime(op, model);
  return time > 0 ? formatSeconds(time) : "";
}

void plan::printPlanDot(ModuleOp module, const CostModel &model,
                        llvm::raw_ostream &os) {
  os << "digraph plan {\n  rankdir=TB;\n  node [shape=plaintext, "
        "fontname=\"Helvetica\", fontsize=10];\n";
  unsigned cluster = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    DenseMap<Value, std::string> ids;
    std::string prefix = "f" + std::to_string(cluster) + "_";
    os << "  subgraph cluster_" << cluster++ << " {\n  label=\"@"
       << func.getSymName() << "\";\n";
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string id = prefix + "a" + std::to_string(i);
      ids[func.getArgument(i)] = id;
      printDotNode(os, id, argumentName(func, i), func.getArgument(i).getType(),
                   getWrittenDist(func.getArgument(i)), false, "");
    }
    unsigned index = 0;
    for (Operation &op : func.getBody().front().without_terminator()) {
      std::string id = prefix + "n" + std::to_string(index++);
      for (Value operand : op.getOperands())
        if (ids.count(operand))
          os << "  " << ids[operand] << " -> " << id << ";\n";
      if (op.getNumResults() == 0)
        continue;
      ids[op.getResult(0)] = id;
      bool isMove = llvm::isa<RepartitionOp, AllReduceOp, ReduceScatterOp>(op);
      printDotNode(os, id, describeOp(&op), op.getResult(0).getType(),
                   getWrittenDist(op.getResult(0)), isMove,
                   estimateText(&op, model));
    }
    os << "  }\n";
  }
  os << "}\n";
}
