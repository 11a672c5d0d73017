//===- CommDialect.cpp - tra_comm dialect ---------------------------------===//

#include "tra/Dialect/Comm/IR/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tra::comm;

#include "tra/Dialect/Comm/IR/CommDialect.cpp.inc"
#include "tra/Dialect/Comm/IR/CommEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tra/Dialect/Comm/IR/CommTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tra/Dialect/Comm/IR/CommOps.cpp.inc"

void CommDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tra/Dialect/Comm/IR/CommOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tra/Dialect/Comm/IR/CommTypes.cpp.inc"
      >();
}

LogicalResult CommDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != kDeviceAttrName)
    return success();
  auto device = dyn_cast<StringAttr>(attr.getValue());
  if (!isa<ModuleOp>(op) || !device || device.getValue() != "cuda")
    return op->emitError("'")
           << kDeviceAttrName
           << "' must be the string \"cuda\" on a module (tiles in NVIDIA "
              "GPU memory)";
  return success();
}

/// The rank and job size of the per-rank function around `op`, if known.
static std::pair<std::optional<int64_t>, std::optional<int64_t>>
getRankInfo(Operation *op) {
  std::pair<std::optional<int64_t>, std::optional<int64_t>> info;
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return info;
  if (auto rank = func->getAttrOfType<IntegerAttr>(CommDialect::kRankAttrName))
    info.first = rank.getInt();
  if (auto size =
          func->getAttrOfType<IntegerAttr>(CommDialect::kNumRanksAttrName))
    info.second = size.getInt();
  return info;
}

/// Checks a peer rank against the enclosing per-rank function.
static LogicalResult verifyPeer(Operation *op, int64_t peer) {
  auto [rank, size] = getRankInfo(op);
  if (rank && peer == *rank)
    return op->emitOpError("rank ") << peer << " cannot move a tile to itself";
  if (size && peer >= *size)
    return op->emitOpError("peer ")
           << peer << " is not a rank of the job (" << *size << " ranks)";
  return success();
}

LogicalResult SendOp::verify() { return verifyPeer(*this, getPeer()); }
LogicalResult RecvOp::verify() { return verifyPeer(*this, getPeer()); }

/// Checks that `request` is completed by exactly one tra_comm.wait.
static LogicalResult verifyWaitedOnce(Operation *op, Value request) {
  if (!request.hasOneUse() || !isa<WaitOp>(*request.getUsers().begin()))
    return op->emitOpError(
        "request must be completed by exactly one tra_comm.wait");
  return success();
}

LogicalResult ISendOp::verify() {
  if (failed(verifyPeer(*this, getPeer())))
    return failure();
  return verifyWaitedOnce(*this, getRequest());
}

/// Checks that the tile `result` of `op`, in flight until the wait of
/// `request`, has no other use.
static LogicalResult verifyOnlyWaited(Operation *op, Value result,
                                      Value request, StringRef what) {
  if (failed(verifyWaitedOnce(op, request)))
    return failure();
  Operation *wait = *request.getUsers().begin();
  for (Operation *user : result.getUsers())
    if (user != wait)
      return op->emitOpError("the ")
             << what << " tensor may only be used by the tra_comm.wait of "
             << "its request";
  return success();
}

LogicalResult IRecvOp::verify() {
  if (failed(verifyPeer(*this, getPeer())))
    return failure();
  return verifyOnlyWaited(*this, getResult(), getRequest(), "received");
}

LogicalResult WaitOp::verify() {
  Value tensor = getTensor();
  Value result = getResult();
  if (auto send = getRequest().getDefiningOp<ISendOp>()) {
    if (tensor != send.getInput())
      return emitOpError("waits for a send of another tensor; expected the "
                         "tra_comm.isend's input");
    if (result)
      return emitOpError("completes a send and has no result");
    return success();
  }
  if (auto recv = getRequest().getDefiningOp<IRecvOp>()) {
    if (tensor != recv.getResult())
      return emitOpError("waits for a receive into another tensor; expected "
                         "the tra_comm.irecv's result");
    if (!result)
      return emitOpError("completes a receive and must return the received "
                         "tensor");
  }
  if (auto fetch = getRequest().getDefiningOp<IFetchOp>()) {
    if (tensor != fetch.getResult())
      return emitOpError("waits for a fetch into another tensor; expected "
                         "the tra_comm.ifetch's result");
    if (!result)
      return emitOpError("completes a fetch and must return the fetched "
                         "tensor");
  }
  if (result && result.getType() != tensor.getType())
    return emitOpError("result type ")
           << result.getType() << " differs from the received tensor's type "
           << tensor.getType();
  return success();
}

/// Checks a group: sorted, distinct, in range, holding the calling rank.
static LogicalResult verifyGroup(Operation *op, ArrayRef<int32_t> ranks) {
  if (ranks.size() < 2)
    return op->emitOpError("needs a group of at least 2 ranks, got ")
           << ranks.size();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0)
      return op->emitOpError("rank ") << ranks[i] << " is negative";
    if (i && ranks[i] <= ranks[i - 1])
      return op->emitOpError("ranks must be sorted and distinct");
  }
  auto [rank, size] = getRankInfo(op);
  if (size && ranks.back() >= *size)
    return op->emitOpError("rank ")
           << ranks.back() << " is not a rank of the job (" << *size
           << " ranks)";
  if (rank && !llvm::is_contained(ranks, *rank))
    return op->emitOpError("rank ")
           << *rank << " runs a collective of a group it is not part of";
  return success();
}

LogicalResult AllReduceOp::verify() { return verifyGroup(*this, getRanks()); }

int64_t FetchOp::getTierCode(StringRef tier) {
  // ABI.h TraExecTier.
  if (tier == "host")
    return 1;
  if (tier == "disk")
    return 2;
  return -1;
}

LogicalResult FetchOp::verify() {
  if (getTierCode(getTier()) < 0)
    return emitOpError("tier '")
           << getTier() << "' is not a memory tier (\"host\" or \"disk\")";
  return success();
}

bool IFetchOp::isFetchable(Value input) {
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 1 ||
      type.getRank() > kMaxRank)
    return false;
  // The copy reads the input until the wait: only a function's arguments
  // (the tiles of memory tiers), which the function never writes, are
  // known to stay unchanged that long.
  if (auto slice = input.getDefiningOp<tensor::ExtractSliceOp>())
    input = slice.getSource();
  auto arg = dyn_cast<BlockArgument>(input);
  return arg && arg.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

LogicalResult IFetchOp::verify() {
  if (FetchOp::getTierCode(getTier()) < 0)
    return emitOpError("tier '")
           << getTier() << "' is not a memory tier (\"host\" or \"disk\")";
  if (!isFetchable(getInput()))
    return emitOpError("input must be a function argument or a slice of "
                       "one, of 1 to ")
           << kMaxRank << " dimensions";
  return verifyOnlyWaited(*this, getResult(), getRequest(), "fetched");
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyGroup(*this, getRanks())))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t dim = getDim();
  if (dim >= input.getRank())
    return emitOpError("dimension ")
           << dim << " is out of range for a tensor of rank "
           << input.getRank();
  if (input.getElementType() != result.getElementType() ||
      input.getRank() != result.getRank())
    return emitOpError("result must have the input's element type and rank");
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (d != dim && input.getDimSize(d) != result.getDimSize(d))
      return emitOpError("result dimension ")
             << d << " is " << result.getDimSize(d) << ", expected "
             << input.getDimSize(d) << " (only dimension " << dim
             << " is scattered)";
  ArrayRef<int64_t> sizes = getSizes();
  if (sizes.size() != getRanks().size())
    return emitOpError("has ") << sizes.size() << " slice sizes for "
                               << getRanks().size() << " ranks";
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return emitOpError("slice sizes must be non-negative");
    total += size;
  }
  if (total != input.getDimSize(dim))
    return emitOpError("slice sizes add up to ")
           << total << ", dimension " << dim << " has "
           << input.getDimSize(dim);
  if (auto rank = getRankInfo(*this).first) {
    int64_t j = llvm::find(getRanks(), *rank) - getRanks().begin();
    if (result.getDimSize(dim) != sizes[j])
      return emitOpError("rank ")
             << *rank << " keeps slice " << j << " of " << sizes[j]
             << " elements, but the result has " << result.getDimSize(dim);
  }
  return success();
}
