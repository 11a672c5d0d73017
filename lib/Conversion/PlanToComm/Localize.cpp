//===- Localize.cpp - One program per rank from a planned program ---------===//
//
// tra-localize: every planned function becomes one function per device, the
// program MPI rank r runs on the tiles r holds (see Passes.td).
//
// Message order and tags: the moves of every repartition are enumerated in
// one global order (repartitions in program order; within one, destination
// tile, destination device, source tile) that every rank computes
// identically; the moves that cross devices get consecutive tags (modulo
// 32768, the tag bound MPI guarantees).
//
// Non-blocking moves (the default). Each rank posts the `tra_comm.isend` of
// a move right after its local program computes the sent value (the
// repartition's input; at function entry for an argument), and the
// `tra_comm.irecv` at the same point of the global program: both sides post
// a move right after global op `def(input)` is localized, in move order.
// The wait of a receive comes right before the first use of the
// repartitioned tile (the repartition's local copies and received pieces
// are assembled lazily, when a later op needs the tile); the waits of sends
// come at the end of the function, before the return (the wait reads the
// sent tile, so bufferization keeps its buffer unmodified and alive until
// then). Repartitions whose tile is never used are waited on there too.
//
// Deadlock freedom. Index every point of the rank programs by the global
// op after which it is emitted; posts never block, so a rank can only
// block in a wait or a collective. Suppose some ranks block forever, and
// take a blocked rank r whose blocking point q is earliest. Every other
// rank is blocked at a point >= q or has finished.
//  - r waits for a receive of move m from rank s: s posts m's isend right
//    after def(input), and q is at or after the repartition, strictly after
//    def(input); s has reached q or finished, so the send is posted.
//  - r waits for a send (at the function end, q is the last point): every
//    rank is blocked at the end or finished, so every irecv is posted.
//  - r is in a collective at q: collectives are emitted at the same global
//    point on every member, so every member blocked at >= q is blocked in
//    this one (it cannot have passed it without r).
// In each case the operation can complete (MPI progresses a posted
// non-blocking send while its sender is inside any MPI call, which a
// blocked or finishing rank is), a contradiction. Tags may repeat after
// 32768 moves, but sender and receiver post the moves between any two ranks
// in the same order (by posting point, then move order) and MPI matches
// messages with equal source and tag in posting order, so every receive
// gets its own message.
//
// Blocking moves (`blocking-moves`): each rank emits its part of each move
// at the repartition, in the global order, as `tra_comm.send` /
// `tra_comm.recv`. The earliest unfinished move always has both ranks
// waiting on it, and collectives are in program order, so every move
// completes.
//
//===----------------------------------------------------------------------===//

#include "tra/Conversion/PlanToComm/PlanToComm.h"
#include "tra/Dialect/Comm/IR/Comm.h"
#include "tra/Dialect/Plan/IR/Distribution.h"
#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Optimizer/Planner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace tra {
#define GEN_PASS_DEF_LOCALIZE
#include "tra/Conversion/Passes.h.inc"
} // namespace tra
} // namespace mlir

using namespace mlir;
using namespace mlir::tra;
using plan::TensorDist;

std::string mlir::tra::getRankFunctionName(StringRef name, int64_t rank) {
  return (name + ".rank" + llvm::Twine(rank)).str();
}

namespace {

/// A box of a tensor: per dimension [begin, end).
struct Box {
  SmallVector<int64_t, 4> lo, hi;
  bool empty() const {
    for (auto [l, h] : llvm::zip_equal(lo, hi))
      if (h <= l)
        return true;
    return false;
  }
  SmallVector<int64_t, 4> sizes() const {
    SmallVector<int64_t, 4> s;
    for (auto [l, h] : llvm::zip_equal(lo, hi))
      s.push_back(h - l);
    return s;
  }
  Box intersect(const Box &other) const {
    Box b = *this;
    for (size_t d = 0; d < lo.size(); ++d) {
      b.lo[d] = std::max(lo[d], other.lo[d]);
      b.hi[d] = std::min(hi[d], other.hi[d]);
    }
    return b;
  }
};

/// The region of tile `tile` of `dist` in a tensor of `shape`.
Box tileBox(const TensorDist &dist, ArrayRef<int64_t> shape, int64_t tile) {
  SmallVector<int64_t, 4> coords;
  dist.getTileCoords(tile, coords);
  Box box;
  for (unsigned d = 0; d < dist.getRank(); ++d) {
    auto [b, e] = dist.getTileRange(shape, d, coords[d]);
    box.lo.push_back(b);
    box.hi.push_back(e);
  }
  return box;
}

/// The tile of `dist` that `device` holds, if any (error if several).
FailureOr<std::optional<int64_t>> heldTile(const TensorDist &dist,
                                           unsigned device, Location loc) {
  std::optional<int64_t> found;
  for (int64_t t = 0, e = dist.getNumTiles(); t < e; ++t)
    if (llvm::is_contained(dist.getTileDevices(t), device)) {
      if (found)
        return emitError(loc) << "device " << device << " holds tiles "
                              << *found << " and " << t << " of " << dist.str()
                              << "; one tile per device is supported";
      found = t;
    }
  return found;
}

/// Position of `device` among the copies of tile `tile`.
unsigned copyIndex(const TensorDist &dist, int64_t tile, unsigned device) {
  ArrayRef<unsigned> devices = dist.getTileDevices(tile);
  return llvm::find(devices, device) - devices.begin();
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// One region of a repartition that lands on a device: a local copy
/// (source == dest) or a message.
struct Move {
  plan::RepartitionOp op;
  /// The region, in global coordinates.
  Box part;
  unsigned source, dest;
  /// Message tag (only for moves between devices).
  int32_t tag = 0;
  bool isLocal() const { return source == dest; }
};

/// The moves of every repartition of a planned function, in the global
/// order every rank computes alike.
struct MovePlan {
  /// Moves of each repartition, in order.
  DenseMap<Operation *, SmallVector<Move>> byRepartition;
  /// The moves of repartition `op`.
  ArrayRef<Move> of(Operation *op) const {
    auto it = byRepartition.find(op);
    return it == byRepartition.end() ? ArrayRef<Move>() : it->second;
  }
  /// Messages to post right after each op (nullptr: at function entry),
  /// as (repartition, index of the move in its list), in order.
  DenseMap<Operation *, SmallVector<std::pair<Operation *, unsigned>>> posts;
};

/// Enumerates the moves of every repartition of `body`.
MovePlan planMoves(Block &body) {
  MovePlan plan;
  int64_t tagCounter = 0;
  for (auto op : body.getOps<plan::RepartitionOp>()) {
    TensorDist from = plan::fromAttr(op.getFrom());
    TensorDist to = plan::fromAttr(op.getTo());
    ArrayRef<int64_t> shape = shapeOf(op.getInput());
    SmallVector<Move> &moves = plan.byRepartition[op];
    // For each destination tile and device, each source tile intersecting
    // it.
    for (int64_t tb = 0, eb = to.getNumTiles(); tb < eb; ++tb) {
      Box destBox = tileBox(to, shape, tb);
      ArrayRef<unsigned> dests = to.getTileDevices(tb);
      for (auto [k, dest] : llvm::enumerate(dests)) {
        for (int64_t ta = 0, ea = from.getNumTiles(); ta < ea; ++ta) {
          Box part = tileBox(from, shape, ta).intersect(destBox);
          if (part.empty())
            continue;
          ArrayRef<unsigned> sources = from.getTileDevices(ta);
          // The destination itself if it holds the source tile, else
          // spread the destinations over the source's copies.
          unsigned source = llvm::is_contained(sources, dest)
                                ? dest
                                : sources[k % sources.size()];
          Move move{op, part, source, unsigned(dest)};
          if (!move.isLocal()) {
            move.tag = int32_t(tagCounter++ % 32768);
            plan.posts[op.getInput().getDefiningOp()].push_back(
                {op, unsigned(moves.size())});
          }
          moves.push_back(move);
        }
      }
    }
  }
  return plan;
}

/// Builds the function of one rank.
class RankBuilder {
public:
  RankBuilder(func::FuncOp global, const MovePlan &moves, int64_t rank,
              int64_t numRanks, bool blocking)
      : global(global), moves(moves), rank(rank), numRanks(numRanks),
        blocking(blocking) {}

  FailureOr<func::FuncOp> build(OpBuilder &moduleBuilder);

private:
  /// The distribution `value` is written in.
  FailureOr<TensorDist> distOf(Value value) {
    plan::DistAttr attr = plan::getWrittenDist(value);
    if (!attr)
      return emitError(value.getLoc(), "value has no distribution; run "
                                       "tra-decompose before tra-localize");
    return plan::fromAttr(attr);
  }
  /// The local tile type of `value` (of distribution `dist`) on this rank,
  /// and its box, if this rank holds a tile.
  FailureOr<std::optional<std::pair<RankedTensorType, Box>>>
  localTile(Value value, const TensorDist &dist) {
    auto held = heldTile(dist, rank, value.getLoc());
    if (failed(held))
      return failure();
    if (!*held)
      return std::optional<std::pair<RankedTensorType, Box>>{};
    Box box = tileBox(dist, shapeOf(value), **held);
    auto type = cast<RankedTensorType>(value.getType());
    return std::optional{std::pair{
        RankedTensorType::get(box.sizes(), type.getElementType()), box}};
  }
  /// The local value of `value`; fails if this rank does not hold it.
  /// Assembles a repartitioned tile on its first use.
  FailureOr<Value> local(Value value, Operation *user) {
    if (pending.count(value) && failed(assemble(value)))
      return failure();
    auto it = locals.find(value);
    if (it == locals.end())
      return user->emitError("rank ")
             << rank << " runs this operation but holds no tile of operand";
    return it->second;
  }
  /// Whether this rank holds (or will assemble) a tile of `value`.
  bool holds(Value value) const {
    return locals.count(value) || pending.count(value);
  }

  LogicalResult localizeOp(Operation *op);
  LogicalResult localizeCompute(Operation *op);
  LogicalResult localizeGather(GatherOp op, Value table, Value indices,
                               RankedTensorType type, const Box &tableBox);
  LogicalResult localizeRepartition(plan::RepartitionOp op);
  /// Posts this rank's side of the messages that become ready after `op`
  /// (nullptr: at function entry).
  LogicalResult postMoves(Operation *op);
  /// Emits the waits and copies that assemble the pending tile of `value`.
  LogicalResult assemble(Value value);
  /// Inserts `piece` (region `part`) into `acc` (region `accBox`).
  Value insert(Location loc, Value piece, Value acc, const Box &accBox,
               const Box &part);
  LogicalResult localizeAllReduce(Value input, Value result,
                                  const TensorDist &from, Location loc);
  LogicalResult localizeReduceScatter(plan::ReduceScatterOp op);

  /// A static slice of `source` (whose box is `sourceBox`) covering `box`.
  Value extract(Location loc, Value source, const Box &sourceBox,
                const Box &box);
  func::FuncOp global;
  const MovePlan &moves;
  int64_t rank, numRanks;
  bool blocking;
  OpBuilder builder{global.getContext()};
  DenseMap<Value, Value> locals;
  /// Boxes of local values.
  DenseMap<Value, Box> boxes;
  /// Repartition results this rank holds whose tile is not assembled yet.
  llvm::MapVector<Value, plan::RepartitionOp> pending;
  /// Posted receives: (repartition, move index) -> (tile in flight,
  /// request).
  DenseMap<std::pair<Operation *, unsigned>, std::pair<Value, Value>> receives;
  /// Posted sends: (sent tile, request), waited on before the return.
  SmallVector<std::pair<Value, Value>> sends;
};

Value RankBuilder::extract(Location loc, Value source, const Box &sourceBox,
                           const Box &box) {
  SmallVector<int64_t, 4> offsets, sizes = box.sizes(), strides;
  bool whole = true;
  for (size_t d = 0; d < box.lo.size(); ++d) {
    offsets.push_back(box.lo[d] - sourceBox.lo[d]);
    strides.push_back(1);
    whole &= box.lo[d] == sourceBox.lo[d] && box.hi[d] == sourceBox.hi[d];
  }
  if (whole)
    return source;
  auto type = cast<RankedTensorType>(source.getType());
  auto resultType = RankedTensorType::get(sizes, type.getElementType());
  return tensor::ExtractSliceOp::create(builder, loc, resultType, source,
                                        ValueRange{}, ValueRange{},
                                        ValueRange{}, offsets, sizes, strides);
}

FailureOr<func::FuncOp> RankBuilder::build(OpBuilder &moduleBuilder) {
  MLIRContext *ctx = global.getContext();
  Location loc = global.getLoc();
  Block &body = global.getBody().front();

  // Arguments: the tiles this rank holds.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::pair<BlockArgument, Box>> heldArgs;
  for (BlockArgument arg : body.getArguments()) {
    FailureOr<TensorDist> dist = distOf(arg);
    if (failed(dist))
      return failure();
    auto tile = localTile(arg, *dist);
    if (failed(tile))
      return failure();
    if (!*tile)
      continue;
    NamedAttrList attrs;
    auto name =
        global.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tra.name");
    attrs.set(
        "tra.name",
        name ? name
             : StringAttr::get(ctx, "arg" + llvm::Twine(arg.getArgNumber())));
    attrs.set(kGlobalShapeAttrName, DenseI64ArrayAttr::get(ctx, shapeOf(arg)));
    // A tile kept in a memory tier stays there (tra-fetch-tiers).
    if (auto tier = global.getArgAttr(arg.getArgNumber(),
                                      plan::PlanDialect::kTierAttrName))
      attrs.set(plan::PlanDialect::kTierAttrName, tier);
    attrs.set(kOffsetsAttrName,
              DenseI64ArrayAttr::get(ctx, (*tile)->second.lo));
    argTypes.push_back((*tile)->first);
    argAttrs.push_back(attrs.getDictionary(ctx));
    heldArgs.push_back({arg, (*tile)->second});
  }

  auto func = func::FuncOp::create(moduleBuilder, loc,
                                   getRankFunctionName(global.getName(), rank),
                                   FunctionType::get(ctx, argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  func->setAttr(comm::CommDialect::kRankAttrName,
                moduleBuilder.getI64IntegerAttr(rank));
  func->setAttr(comm::CommDialect::kNumRanksAttrName,
                moduleBuilder.getI64IntegerAttr(numRanks));
  Block *entry = func.addEntryBlock();
  for (auto [i, held] : llvm::enumerate(heldArgs)) {
    locals[held.first] = entry->getArgument(i);
    boxes[held.first] = held.second;
  }
  builder.setInsertionPointToStart(entry);

  if (failed(postMoves(nullptr)))
    return failure();
  for (Operation &op : body.without_terminator())
    if (failed(localizeOp(&op)) || failed(postMoves(&op)))
      return failure();

  // Results: the tiles of the results this rank holds.
  Operation *terminator = body.getTerminator();
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    FailureOr<TensorDist> dist = distOf(value);
    if (failed(dist))
      return failure();
    if (dist->partial)
      return terminator->emitError("result ")
             << i << " is partial; run tra-insert-repartitions";
    auto held = heldTile(*dist, rank, value.getLoc());
    if (failed(held))
      return failure();
    if (!*held)
      continue;
    FailureOr<Value> tile = local(value, terminator);
    if (failed(tile))
      return failure();
    NamedAttrList attrs;
    auto name = global.getResultAttrOfType<StringAttr>(i, "tra.name");
    attrs.set("tra.name",
              name ? name : StringAttr::get(ctx, "result" + llvm::Twine(i)));
    attrs.set(kGlobalShapeAttrName,
              DenseI64ArrayAttr::get(ctx, shapeOf(value)));
    attrs.set(kOffsetsAttrName, DenseI64ArrayAttr::get(ctx, boxes[value].lo));
    ArrayRef<unsigned> holders = dist->getTileDevices(**held);
    bool owner = *llvm::min_element(holders) == unsigned(rank);
    attrs.set(kOwnerAttrName, BoolAttr::get(ctx, owner));
    results.push_back(*tile);
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  // Complete every move: receives of tiles never used, then the sends.
  while (!pending.empty())
    if (failed(assemble(pending.front().first)))
      return failure();
  for (auto [tile, request] : sends)
    comm::WaitOp::create(builder, terminator->getLoc(), Type(), request, tile);
  func::ReturnOp::create(builder, terminator->getLoc(), results);
  func.setType(
      FunctionType::get(ctx, argTypes, ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return func;
}

LogicalResult RankBuilder::localizeOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](plan::RepartitionOp move) { return localizeRepartition(move); })
      .Case([&](plan::AllReduceOp move) {
        return localizeAllReduce(move.getInput(), move.getResult(),
                                 plan::fromAttr(move.getFrom()), move.getLoc());
      })
      .Case([&](plan::ReduceScatterOp move) {
        return localizeReduceScatter(move);
      })
      .Default([&](Operation *op) { return localizeCompute(op); });
}

/// Adds the tile offsets of the result to the `tra.index` ops of a map body.
static void shiftIndices(MapOp map, ArrayRef<int64_t> offsets) {
  SmallVector<IndexOp> indices;
  map.getBody().walk([&](IndexOp index) { indices.push_back(index); });
  for (IndexOp index : indices) {
    int64_t offset = offsets[index.getDim()];
    if (!offset)
      continue;
    OpBuilder b(index->getContext());
    b.setInsertionPointAfter(index);
    Value c = arith::ConstantIndexOp::create(b, index.getLoc(), offset);
    Value shifted = arith::AddIOp::create(b, index.getLoc(), index, c);
    index.getResult().replaceAllUsesExcept(shifted, shifted.getDefiningOp());
  }
}

LogicalResult RankBuilder::localizeCompute(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return op->emitError("cannot localize an operation without one tensor "
                         "result");
  auto resultsAttr =
      op->getAttrOfType<ArrayAttr>(plan::PlanDialect::kResultsAttrName);
  if (!resultsAttr)
    return op->emitError("operation is not planned; run tra-decompose before "
                         "tra-localize");
  Value result = op->getResult(0);
  TensorDist dist = plan::fromAttr(cast<plan::DistAttr>(resultsAttr[0]));
  auto tile = localTile(result, dist);
  if (failed(tile))
    return failure();
  if (!*tile)
    return success();
  auto [type, box] = **tile;

  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> v = local(operand, op);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }

  if (auto gather = dyn_cast<GatherOp>(op)) {
    const Box &tableBox = boxes[gather.getTable()];
    if (tableBox.lo[0] != 0 ||
        tableBox.hi[0] != shapeOf(gather.getTable())[0]) {
      if (failed(
              localizeGather(gather, operands[0], operands[1], type, tableBox)))
        return failure();
      boxes[result] = box;
      return success();
    }
  }
  if (auto update = dyn_cast<UpdateSliceOp>(op)) {
    const Box &destBox = boxes[update.getDest()];
    int64_t dim = update.getDim();
    if (destBox.lo[dim] != 0 || destBox.hi[dim] != shapeOf(result)[dim])
      return op->emitError("cannot localize an update_slice whose "
                           "destination is split along the updated "
                           "dimension");
  }

  IRMapping mapping;
  mapping.map(op->getOperands(), operands);
  Operation *clone = builder.clone(*op, mapping);
  clone->getResult(0).setType(type);
  for (StringRef name :
       {plan::PlanDialect::kSplitAttrName, plan::PlanDialect::kOperandsAttrName,
        plan::PlanDialect::kResultsAttrName})
    clone->removeAttr(name);
  if (auto map = dyn_cast<MapOp>(clone))
    shiftIndices(map, box.lo);
  locals[result] = clone->getResult(0);
  boxes[result] = box;
  return success();
}

/// Builds a tra.map over `inputs` with `spec` whose body is built by
/// `body(builder, loc, arguments)` returning the yielded value.
static Value
buildMap(OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
         StringRef spec,
         llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto map = MapOp::create(b, loc, type, inputs, spec);
  Block &block = map.getBody().front();
  OpBuilder inner = OpBuilder::atBlockBegin(&block);
  Value yielded = body(inner, loc, block.getArguments());
  YieldOp::create(inner, loc, yielded);
  return map.getResult();
}

/// Index letters for a map spec over `rank` dimensions starting at `first`.
static std::string letters(unsigned rank, char first = 'a') {
  std::string s;
  for (unsigned i = 0; i < rank; ++i)
    s.push_back(char(first + i));
  return s;
}

LogicalResult RankBuilder::localizeGather(GatherOp op, Value table,
                                          Value indices, RankedTensorType type,
                                          const Box &tableBox) {
  // The rank holds rows [lo, hi) of the table: gather row (i - lo) where
  // lo <= i < hi and 0 elsewhere (the plan combines the partial results).
  Location loc = op.getLoc();
  int64_t lo = tableBox.lo[0], rows = tableBox.hi[0] - tableBox.lo[0];
  auto indexType = cast<RankedTensorType>(indices.getType());
  Type indexElement = indexType.getElementType();
  unsigned indexRank = indexType.getRank();
  auto inRange = [&](OpBuilder &b, Location loc, Value i) {
    Value low = arith::ConstantIntOp::create(b, loc, indexElement, lo);
    Value high = arith::ConstantIntOp::create(b, loc, indexElement, lo + rows);
    Value aboveLow =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, low);
    Value belowHigh =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, high);
    return arith::AndIOp::create(b, loc, aboveLow, belowHigh).getResult();
  };
  if (rows == 0) {
    // Nothing held: the partial result is all zeros.
    Value zero =
        buildMap(builder, loc, type, indices,
                 letters(indexRank) + "->" + letters(type.getRank()),
                 [&](OpBuilder &b, Location loc, ValueRange) {
                   return arith::ConstantOp::create(
                              b, loc, b.getZeroAttr(type.getElementType()))
                       .getResult();
                 });
    locals[op.getResult()] = zero;
    return success();
  }
  Value local = buildMap(
      builder, loc, indexType, indices, "",
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value i = args[0];
        Value low = arith::ConstantIntOp::create(b, loc, indexElement, lo);
        Value zero = arith::ConstantIntOp::create(b, loc, indexElement, 0);
        Value shifted = arith::SubIOp::create(b, loc, i, low);
        return arith::SelectOp::create(b, loc, inRange(b, loc, i), shifted,
                                       zero)
            .getResult();
      });
  Value gathered = GatherOp::create(builder, loc, type, table, local);
  std::string spec = letters(type.getRank()) + "," + letters(indexRank) + "->" +
                     letters(type.getRank());
  Value masked = buildMap(
      builder, loc, type, ValueRange{gathered, indices}, spec,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value zero =
            arith::ConstantOp::create(b, loc, b.getZeroAttr(args[0].getType()));
        return arith::SelectOp::create(b, loc, inRange(b, loc, args[1]),
                                       args[0], zero)
            .getResult();
      });
  locals[op.getResult()] = masked;
  return success();
}

Value RankBuilder::insert(Location loc, Value piece, Value acc,
                          const Box &accBox, const Box &part) {
  SmallVector<int64_t, 4> offsets, strides(part.lo.size(), 1);
  for (size_t d = 0; d < part.lo.size(); ++d)
    offsets.push_back(part.lo[d] - accBox.lo[d]);
  return tensor::InsertSliceOp::create(builder, loc, piece, acc, ValueRange{},
                                       ValueRange{}, ValueRange{}, offsets,
                                       part.sizes(), strides);
}

LogicalResult RankBuilder::localizeRepartition(plan::RepartitionOp op) {
  Location loc = op.getLoc();
  TensorDist to = plan::fromAttr(op.getTo());
  auto elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();

  auto target = localTile(op.getResult(), to);
  if (failed(target))
    return failure();
  Value acc;
  Box accBox;
  if (*target) {
    accBox = (*target)->second;
    // Fast path: the rank already holds exactly this region.
    auto it = boxes.find(op.getInput());
    if (it != boxes.end() && holds(op.getInput()) &&
        it->second.lo == accBox.lo && it->second.hi == accBox.hi) {
      FailureOr<Value> in = local(op.getInput(), op);
      if (failed(in))
        return failure();
      locals[op.getResult()] = *in;
      boxes[op.getResult()] = accBox;
      // Other ranks may still need this rank's tile: their messages are
      // posted (or, blocking, sent below).
    } else if (!blocking) {
      // Assembled from local copies and received pieces on first use.
      pending[op.getResult()] = op;
      boxes[op.getResult()] = accBox;
      return success();
    } else {
      acc = tensor::EmptyOp::create(builder, loc, accBox.sizes(), elementType);
    }
  }
  if (!blocking)
    return success();
  bool done = locals.count(op.getResult());

  for (const Move &move : moves.of(op)) {
    if (move.isLocal()) {
      if (move.dest != unsigned(rank) || done)
        continue;
      FailureOr<Value> src = local(op.getInput(), op);
      if (failed(src))
        return failure();
      Value piece = extract(loc, *src, boxes[op.getInput()], move.part);
      acc = insert(loc, piece, acc, accBox, move.part);
      continue;
    }
    if (move.source == unsigned(rank)) {
      FailureOr<Value> src = local(op.getInput(), op);
      if (failed(src))
        return failure();
      Value piece = extract(loc, *src, boxes[op.getInput()], move.part);
      comm::SendOp::create(builder, loc, piece, move.dest, move.tag);
    } else if (move.dest == unsigned(rank)) {
      auto type = RankedTensorType::get(move.part.sizes(), elementType);
      Value piece =
          comm::RecvOp::create(builder, loc, type, move.source, move.tag);
      acc = insert(loc, piece, acc, accBox, move.part);
    }
  }
  if (*target && !done) {
    locals[op.getResult()] = acc;
    boxes[op.getResult()] = accBox;
  }
  return success();
}

LogicalResult RankBuilder::postMoves(Operation *after) {
  if (blocking)
    return success();
  auto it = moves.posts.find(after);
  if (it == moves.posts.end())
    return success();
  for (auto [repartition, index] : it->second) {
    auto op = cast<plan::RepartitionOp>(repartition);
    const Move &move = moves.of(op)[index];
    Location loc = op.getLoc();
    if (move.source == unsigned(rank)) {
      FailureOr<Value> src = local(op.getInput(), op);
      if (failed(src))
        return failure();
      Value piece = extract(loc, *src, boxes[op.getInput()], move.part);
      Value request = comm::ISendOp::create(
          builder, loc, comm::RequestType::get(builder.getContext()), piece,
          move.dest, move.tag);
      sends.push_back({piece, request});
    } else if (move.dest == unsigned(rank)) {
      auto elementType =
          cast<RankedTensorType>(op.getInput().getType()).getElementType();
      auto type = RankedTensorType::get(move.part.sizes(), elementType);
      auto recv = comm::IRecvOp::create(
          builder, loc, type, comm::RequestType::get(builder.getContext()),
          move.source, move.tag);
      receives[{repartition, index}] = {recv.getResult(), recv.getRequest()};
    }
  }
  return success();
}

LogicalResult RankBuilder::assemble(Value value) {
  plan::RepartitionOp op = pending.lookup(value);
  pending.erase(value);
  Location loc = op.getLoc();
  Box accBox = boxes[value];
  auto elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  Value acc =
      tensor::EmptyOp::create(builder, loc, accBox.sizes(), elementType);
  for (auto [index, move] : llvm::enumerate(moves.of(op))) {
    if (move.dest != unsigned(rank))
      continue;
    Value piece;
    if (move.isLocal()) {
      FailureOr<Value> src = local(op.getInput(), op);
      if (failed(src))
        return failure();
      piece = extract(loc, *src, boxes[op.getInput()], move.part);
    } else {
      auto [tile, request] = receives.lookup({op, unsigned(index)});
      piece = comm::WaitOp::create(builder, loc, tile.getType(), request, tile)
                  .getResult();
    }
    acc = insert(loc, piece, acc, accBox, move.part);
  }
  locals[value] = acc;
  return success();
}

LogicalResult RankBuilder::localizeAllReduce(Value input, Value result,
                                             const TensorDist &from,
                                             Location loc) {
  auto held = heldTile(from, rank, loc);
  if (failed(held))
    return failure();
  if (!*held)
    return success();
  FailureOr<Value> in = local(input, result.getDefiningOp());
  if (failed(in))
    return failure();
  unsigned group = copyIndex(from, **held, rank) / from.getGroupSize();
  SmallVector<int32_t> members;
  for (unsigned d : from.getGroupDevices(**held, group))
    members.push_back(d);
  llvm::sort(members);
  Value out = *in;
  if (members.size() > 1)
    out = comm::AllReduceOp::create(
        builder, loc, in->getType(), *in,
        comm::ReductionKind(static_cast<uint32_t>(*from.partial)), members);
  locals[result] = out;
  boxes[result] = boxes[input];
  return success();
}

LogicalResult RankBuilder::localizeReduceScatter(plan::ReduceScatterOp op) {
  Location loc = op.getLoc();
  TensorDist from = plan::fromAttr(op.getFrom());
  TensorDist to = plan::fromAttr(op.getTo());
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  auto held = heldTile(from, rank, loc);
  if (failed(held))
    return failure();
  if (!*held)
    return success();
  FailureOr<Value> in = local(op.getInput(), op);
  if (failed(in))
    return failure();
  int64_t dim = op.getDim();
  unsigned group = copyIndex(from, **held, rank) / from.getGroupSize();
  ArrayRef<unsigned> devices = from.getGroupDevices(**held, group);
  const Box &inBox = boxes[op.getInput()];
  // Each member's slice: the `to` tile it holds, in rank order.
  SmallVector<std::pair<unsigned, Box>> slices;
  for (unsigned d : devices) {
    auto tile = heldTile(to, d, loc);
    if (failed(tile))
      return failure();
    if (!*tile)
      return op.emitError("device ") << d << " holds no slice of the result";
    slices.push_back({d, tileBox(to, shape, **tile)});
  }
  llvm::sort(slices, [](auto &a, auto &b) { return a.first < b.first; });
  SmallVector<int32_t> members;
  SmallVector<int64_t> sizes;
  int64_t next = inBox.lo[dim];
  Box mine;
  for (auto &[d, box] : slices) {
    if (box.lo[dim] != next)
      return op.emitError("the slices of the reduce-scatter are not in rank "
                          "order; not supported");
    next = box.hi[dim];
    members.push_back(d);
    sizes.push_back(box.hi[dim] - box.lo[dim]);
    if (d == unsigned(rank))
      mine = box;
  }
  auto elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  auto type = RankedTensorType::get(mine.sizes(), elementType);
  Value out;
  if (members.size() == 1)
    out = *in;
  else
    out = comm::ReduceScatterOp::create(
        builder, loc, type, *in,
        comm::ReductionKind(static_cast<uint32_t>(*from.partial)), dim, members,
        sizes);
  locals[op.getResult()] = out;
  boxes[op.getResult()] = mine;
  return success();
}

struct LocalizePass : public mlir::tra::impl::LocalizeBase<LocalizePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> planned;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          func->hasAttr(plan::PlanDialect::kNumDevicesAttrName))
        planned.push_back(func);
    for (func::FuncOp func : planned) {
      if (!func.getBody().hasOneBlock()) {
        func.emitError("planned functions must have one block");
        return signalPassFailure();
      }
      int64_t numRanks = func->getAttrOfType<IntegerAttr>(
                                 plan::PlanDialect::kNumDevicesAttrName)
                             .getInt();
      OpBuilder moduleBuilder(func);
      MovePlan moves = planMoves(func.getBody().front());
      for (int64_t r = 0; r < numRanks; ++r) {
        RankBuilder rankBuilder(func, moves, r, numRanks, blockingMoves);
        if (failed(rankBuilder.build(moduleBuilder)))
          return signalPassFailure();
      }
      func.erase();
    }
    if (!planned.empty())
      module->setAttr(
          DLTIDialect::kMapAttrName,
          MapAttr::get(ctx, {DataLayoutEntryAttr::get(
                                StringAttr::get(ctx, "MPI:Implementation"),
                                StringAttr::get(ctx, "OpenMPI"))}));
  }
};

} // namespace

void mlir::tra::registerDistributeDialects(DialectRegistry &registry) {
  registry.insert<comm::CommDialect, DLTIDialect, plan::PlanDialect>();
  comm::registerBufferizableOpInterfaceExternalModels(registry);
}
