//===- CostModel.h - Time and memory estimates for plans --------*- C++ -*-===//
//
// The cost model of the decomposition optimizer (docs/CostModel.md): how long
// a tile kernel runs on a device (roofline of peak flop/s and memory
// bandwidth, each derated by an efficiency factor), how long a set of
// concurrent transfers takes (latency plus the busiest of the devices' send
// and receive ports and the nodes' network interfaces), and which collective
// or point-to-point moves turn one distribution of a tensor into another.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_OPTIMIZER_COSTMODEL_H
#define TRA_OPTIMIZER_COSTMODEL_H

#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Hardware/Hardware.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <vector>

namespace mlir {
namespace tra {
namespace plan {

/// Bytes of one element of `type` (f32: 4, bf16: 2, i1: 1, ...).
int64_t getElementBytes(Type type);

/// The peak flop/s column of the hardware that `type` computes at (integers
/// and i1 use the f32 figure).
::tra::hw::DType getHardwareDType(Type type);

/// One transfer of `bytes` from device `src` to device `dst`, started after
/// `steps` latencies of its link (its position in a chain or a ring).
struct Flow {
  unsigned src = 0;
  unsigned dst = 0;
  double bytes = 0;
  unsigned steps = 1;
};

/// Bytes moved by a set of transfers, split by link class.
struct TrafficBytes {
  double intraNode = 0;
  double interNode = 0;
  double total() const { return intraNode + interNode; }
  TrafficBytes &operator+=(const TrafficBytes &other) {
    intraNode += other.intraNode;
    interNode += other.interNode;
    return *this;
  }
};

/// Where the builders of flows (CostModel::add*Flows) put them.
class FlowSink {
public:
  virtual ~FlowSink() = default;
  virtual void add(const Flow &flow) = 0;
  /// Several flows at once (a chain of a move, the ring of a collective).
  virtual void addAll(llvm::ArrayRef<Flow> flows) {
    for (const Flow &flow : flows)
      add(flow);
  }
};

/// One step of converting a distribution into another.
struct MoveStep {
  enum class Kind { AllReduce, ReduceScatter, Repartition };
  Kind kind = Kind::Repartition;
  TensorDist from, to;
  /// The dimension a reduce-scatter slices.
  unsigned dim = 0;
  double time = 0;
  TrafficBytes bytes;
};

/// The steps that turn one distribution into another, and their total time.
struct Conversion {
  llvm::SmallVector<MoveStep, 2> steps;
  double time = 0;
};

class TransferAccumulator;

/// Tunable figures of the model; see docs/CostModel.md for their rationale.
struct CostModelOptions {
  /// Fraction of peak flop/s a contraction kernel (an einsum with an
  /// aggregated index and two or more inputs) reaches.
  double contractionEfficiency = 0.7;
  /// Fraction of peak flop/s of any other kernel.
  double elementwiseEfficiency = 0.3;
  /// Fraction of the data-sheet memory bandwidth a kernel streams at.
  double memoryEfficiency = 0.8;
};

/// Estimates on one hardware description.
class CostModel {
public:
  explicit CostModel(const ::tra::hw::HardwareDescription &hw,
                     CostModelOptions options = {});

  const ::tra::hw::HardwareDescription &getHardware() const { return hw; }
  const CostModelOptions &getOptions() const { return options; }
  unsigned getNumDevices() const { return numDevices; }
  unsigned getNodeOf(unsigned device) const { return nodeOf[device]; }
  /// The link between two devices, as the hardware description gives it,
  /// from a table per pair of device classes (node group and kind; no table
  /// of all pairs: memory stays linear in the device count). Conversions
  /// over thousands of devices ask this for millions of flows.
  ::tra::hw::LinkInfo getLink(unsigned src, unsigned dst) const {
    if (src == dst)
      return hw.link(src, dst);
    if (nodeOf[src] != nodeOf[dst])
      return networkLink;
    return intraNodeLinks[deviceClass[src] * numDeviceClasses +
                          deviceClass[dst]];
  }

  /// The tier the tiles of a streamed argument come from on `device`'s
  /// node: its host memory, else its disk; null when it has neither.
  const ::tra::hw::TierSpec *getStreamTier(unsigned device) const;
  /// Seconds to bring `bytes` from that tier onto `device` (latency +
  /// bytes / bandwidth; infinite without a tier).
  double getStreamTime(unsigned device, double bytes) const;

  /// Seconds for one tile kernel on `device`: the larger of
  /// flops / (peak(type) * efficiency) and
  /// bytes / (memory bandwidth * memoryEfficiency).
  double getKernelTime(unsigned device, ::tra::hw::DType type, double flops,
                       double bytes, bool contraction) const;

  /// Seconds for `flows` running concurrently: the largest latency term
  /// ((steps + 1) x link latency, one for starting the transfer) plus the
  /// busiest resource, where every device
  /// has a send and a receive port (bytes / link bandwidth) and every node a
  /// network interface in each direction (inter-node bytes / network
  /// bandwidth).
  double getTransferTime(llvm::ArrayRef<Flow> flows) const;
  /// Bytes of `flows` by link class (flows within a device are free).
  TrafficBytes getTrafficBytes(llvm::ArrayRef<Flow> flows) const;

  /// Ring order of a group of devices: by node, then by id.
  llvm::SmallVector<unsigned, 8>
  getRingOrder(llvm::ArrayRef<unsigned> group) const;

  /// Flows of an all-reduce over every group of `dist` (the copies of each
  /// tile): 2(q-1)/q of the tile's bytes out of and into every member, in
  /// 2 ceil(log2 q) latency steps (recursive halving then doubling).
  void addAllReduceFlows(const TensorDist &dist, llvm::ArrayRef<int64_t> shape,
                         int64_t elementBytes, FlowSink &flows) const;
  void addAllReduceFlows(const TensorDist &dist, llvm::ArrayRef<int64_t> shape,
                         int64_t elementBytes,
                         llvm::SmallVectorImpl<Flow> &flows) const;
  /// Flows of a reduce-scatter: (q-1)/q of the tile's bytes per member, in
  /// ceil(log2 q) latency steps.
  void addReduceScatterFlows(const TensorDist &dist,
                             llvm::ArrayRef<int64_t> shape,
                             int64_t elementBytes, FlowSink &flows) const;
  void addReduceScatterFlows(const TensorDist &dist,
                             llvm::ArrayRef<int64_t> shape,
                             int64_t elementBytes,
                             llvm::SmallVectorImpl<Flow> &flows) const;
  /// Flows that give every device of `to` the parts of its tiles it does not
  /// hold in `from` (neither partial). A part needed by several devices is
  /// passed along a chain (per node: first from a holder on that node if
  /// there is one), so a broadcast costs about one copy per device; its
  /// latency is that of a binomial tree over the chain.
  void addMoveFlows(const TensorDist &from, const TensorDist &to,
                    llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                    FlowSink &flows) const;
  void addMoveFlows(const TensorDist &from, const TensorDist &to,
                    llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                    llvm::SmallVectorImpl<Flow> &flows) const;
  /// The same flows straight into an accumulator (no virtual call per
  /// flow).
  void addMoveFlows(const TensorDist &from, const TensorDist &to,
                    llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                    TransferAccumulator &flows) const;

  /// The distribution a reduce-scatter of partial `from` along `dim` yields,
  /// if its slices are balanced tiles of the refined grid.
  std::optional<TensorDist>
  getReduceScatterResult(const TensorDist &from, llvm::ArrayRef<int64_t> shape,
                         unsigned dim) const;

  /// The cheapest conversion from `from` to `to` (not partial): partial
  /// aggregates are combined by an all-reduce or a reduce-scatter (whichever
  /// makes the whole conversion faster), then tiles move.
  Conversion getConversion(const TensorDist &from, const TensorDist &to,
                           llvm::ArrayRef<int64_t> shape,
                           int64_t elementBytes) const;

  /// The ways to complete a partial distribution, one step each: the
  /// all-reduce, then a reduce-scatter along every dimension that admits
  /// one (getReduceScatterResult). Empty when `from` is not partial.
  llvm::SmallVector<MoveStep, 4>
  getReductionOptions(const TensorDist &from, llvm::ArrayRef<int64_t> shape,
                      int64_t elementBytes) const;

  /// The cheapest way to combine the partial aggregates of `from` into some
  /// complete distribution: an all-reduce, or a reduce-scatter along a
  /// dimension. Empty when `from` is not partial.
  Conversion getReduction(const TensorDist &from, llvm::ArrayRef<int64_t> shape,
                          int64_t elementBytes) const;

  /// A repartition's seconds as latency + seconds per byte of the whole
  /// tensor. For every shape that each dimension of `from` and `to` cuts
  /// into equal tiles, the flows are the same with bytes proportional to
  /// the tensor's, so these two numbers give the time of the move of any
  /// such shape (the planner's memo of conversions shares them).
  struct MoveScaling {
    double latency = 0;
    double secondsPerByte = 0;
  };
  MoveScaling getMoveScaling(const TensorDist &from, const TensorDist &to,
                             llvm::ArrayRef<int64_t> shape,
                             int64_t elementBytes) const;

private:
  MoveStep makeStep(MoveStep::Kind kind, const TensorDist &from,
                    const TensorDist &to, unsigned dim,
                    const TransferAccumulator &flows) const;
  MoveStep getMove(const TensorDist &from, const TensorDist &to,
                   llvm::ArrayRef<int64_t> shape, int64_t elementBytes) const;

  ::tra::hw::HardwareDescription hw;
  CostModelOptions options;
  unsigned numDevices;
  unsigned numNodes;
  std::vector<unsigned> nodeOf;
  /// getLink's tables: each device's class (its node group and kind), the
  /// link between two devices of a node by their classes, and the network.
  std::vector<unsigned> deviceClass;
  unsigned numDeviceClasses = 0;
  std::vector<::tra::hw::LinkInfo> intraNodeLinks;
  ::tra::hw::LinkInfo networkLink;
};

/// The flows of a set of concurrent transfers as getTransferTime and
/// getTrafficBytes see them, accumulated as they come instead of kept: a
/// conversion over thousands of devices has millions of flows, and writing
/// them out dominated planning.
class TransferAccumulator final : public FlowSink {
public:
  explicit TransferAccumulator(const CostModel &model);
  void add(const Flow &flow) override { addAll(flow); }
  /// The running maxima and sums are kept in registers over the batch (one
  /// flow at a time, each update waited on the previous one's store).
  void addAll(llvm::ArrayRef<Flow> flows) override;
  /// The transfers' seconds (CostModel::getTransferTime).
  double getTime() const { return latency + busiest; }
  /// The two terms of getTime: the largest latency and the busiest
  /// resource's seconds.
  double getLatency() const { return latency; }
  double getBusiest() const { return busiest; }
  /// Their bytes by link class (CostModel::getTrafficBytes).
  const TrafficBytes &getBytes() const { return bytes; }
  /// Forgets every flow added.
  void clear();

private:
  const CostModel &model;
  std::vector<double> send, recv, nicOut, nicIn;
  double latency = 0, busiest = 0;
  TrafficBytes bytes;
};

} // namespace plan
} // namespace tra
} // namespace mlir

#endif // TRA_OPTIMIZER_COSTMODEL_H
