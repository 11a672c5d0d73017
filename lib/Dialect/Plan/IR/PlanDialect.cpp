//===- PlanDialect.cpp - tra_plan dialect ---------------------------------===//

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/Plan/IR/Distribution.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

#include "tra/Dialect/Plan/IR/PlanDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tra/Dialect/Plan/IR/PlanAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "tra/Dialect/Plan/IR/PlanOps.cpp.inc"

void PlanDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tra/Dialect/Plan/IR/PlanAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tra/Dialect/Plan/IR/PlanOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DistAttr
//===----------------------------------------------------------------------===//

static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    return parser.parseInteger(values.emplace_back());
  });
}

/// Parses the device list of a distribution: `[d, d, ...]` (one copy per
/// tile) or `[[d, ...], [d, ...]]` (one inner list per tile).
static ParseResult parseDeviceList(AsmParser &parser,
                                   SmallVectorImpl<int64_t> &devices,
                                   unsigned &copies) {
  SMLoc loc = parser.getCurrentLocation();
  bool nested = false, flat = false, ragged = false;
  std::optional<unsigned> inner;
  auto parseElement = [&]() -> ParseResult {
    if (failed(parser.parseOptionalLSquare())) {
      flat = true;
      return parser.parseInteger(devices.emplace_back());
    }
    nested = true;
    size_t before = devices.size();
    if (failed(parser.parseOptionalRSquare())) {
      if (parser.parseCommaSeparatedList(
              [&] { return parser.parseInteger(devices.emplace_back()); }) ||
          parser.parseRSquare())
        return failure();
    }
    unsigned count = devices.size() - before;
    if (inner && *inner != count)
      ragged = true;
    inner = count;
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parseElement))
    return failure();
  if (nested && flat)
    return parser.emitError(loc, "device list mixes devices and lists of "
                                 "devices");
  if (ragged)
    return parser.emitError(loc, "every tile must have the same number of "
                                 "copies");
  copies = nested ? *inner : 1;
  return success();
}

Attribute DistAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> grid, unit, devices, weights;
  unsigned copies = 1, groups = 1;
  std::optional<AggregationKind> partial;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parseIntList(parser, grid))
    return {};
  if (succeeded(parser.parseOptionalKeyword("unit"))) {
    if (parseIntList(parser, unit))
      return {};
  } else {
    unit.assign(grid.size(), 1);
  }
  if (succeeded(parser.parseOptionalKeyword("weights")) &&
      parseIntList(parser, weights))
    return {};
  if (succeeded(parser.parseOptionalKeyword("partial"))) {
    StringRef kind;
    SMLoc kindLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&kind))
      return {};
    partial = symbolizeAggregationKind(kind);
    if (!partial) {
      parser.emitError(kindLoc, "unknown aggregation '") << kind << "'";
      return {};
    }
    if (succeeded(parser.parseOptionalKeyword("groups")) &&
        parser.parseInteger(groups))
      return {};
  }
  if (parser.parseKeyword("on") || parseDeviceList(parser, devices, copies) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<DistAttr>(loc, parser.getContext(), grid, unit,
                                     copies, partial, groups, devices, weights);
}

void DistAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getGrid(), printer);
  printer << "]";
  if (llvm::any_of(getUnit(), [](int64_t u) { return u != 1; })) {
    printer << " unit [";
    llvm::interleaveComma(getUnit(), printer);
    printer << "]";
  }
  if (!getWeights().empty()) {
    printer << " weights [";
    llvm::interleaveComma(getWeights(), printer);
    printer << "]";
  }
  if (getPartial()) {
    printer << " partial " << stringifyAggregationKind(*getPartial());
    if (getGroups() != 1)
      printer << " groups " << getGroups();
  }
  printer << " on [";
  if (getCopies() == 1) {
    llvm::interleaveComma(getDevices(), printer);
  } else {
    llvm::interleaveComma(
        llvm::seq<int64_t>(0, getNumTiles()), printer, [&](int64_t tile) {
          printer << "[";
          llvm::interleaveComma(getTileDevices(tile), printer);
          printer << "]";
        });
  }
  printer << "]>";
}

LogicalResult DistAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> grid, ArrayRef<int64_t> unit,
                               unsigned copies,
                               std::optional<AggregationKind> partial,
                               unsigned groups, ArrayRef<int64_t> devices,
                               ArrayRef<int64_t> weights) {
  if (grid.size() != unit.size())
    return emitError() << "grid has " << grid.size() << " dimensions but unit "
                       << "has " << unit.size();
  if (!weights.empty()) {
    int64_t expected = 0;
    for (int64_t g : grid)
      expected += std::max<int64_t>(g, 0);
    if (int64_t(weights.size()) != expected)
      return emitError() << "expected " << expected
                         << " weights (one per tile coordinate of every "
                            "dimension), got "
                         << weights.size();
    for (int64_t w : weights)
      if (w < 1 || w > kMaxTileWeight)
        return emitError() << "tile weights must be in [1, " << kMaxTileWeight
                           << "], got " << w;
  }
  int64_t tiles = 1;
  for (auto [d, g] : llvm::enumerate(grid)) {
    if (g < 1)
      return emitError() << "grid dimension " << d << " must be positive, got "
                         << g;
    if (unit[d] < 1)
      return emitError() << "unit of dimension " << d
                         << " must be positive, got " << unit[d];
    tiles *= g;
  }
  if (copies < 1)
    return emitError() << "every tile needs at least one device";
  if (int64_t(devices.size()) != tiles * copies)
    return emitError() << "expected " << tiles * copies << " devices (" << tiles
                       << " tiles x " << copies << " copies), got "
                       << devices.size();
  if (partial && copies < 2)
    return emitError() << "a partial distribution needs at least 2 copies of "
                       << "each tile";
  if (!partial && groups != 1)
    return emitError() << "only partial distributions have groups";
  if (partial && (groups < 1 || copies % groups || copies / groups < 2))
    return emitError() << "cannot form " << groups << " groups of at least "
                       << "2 partial copies from " << copies << " copies";
  for (int64_t t = 0; t < tiles; ++t) {
    llvm::SmallSet<int64_t, 8> seen;
    for (int64_t device : devices.slice(t * copies, copies)) {
      if (device < 0)
        return emitError() << "device ids must be non-negative, got " << device;
      if (!seen.insert(device).second)
        return emitError() << "tile " << t << " lists device " << device
                           << " twice";
    }
  }
  return success();
}

int64_t DistAttr::getNumTiles() const {
  int64_t n = 1;
  for (int64_t g : getGrid())
    n *= g;
  return n;
}

ArrayRef<int64_t> DistAttr::getTileDevices(int64_t tile) const {
  return getDevices().slice(tile * getCopies(), getCopies());
}

ArrayRef<int64_t> DistAttr::getGroupDevices(int64_t tile,
                                            unsigned group) const {
  unsigned size = getCopies() / getGroups();
  return getTileDevices(tile).slice(group * size, size);
}

LogicalResult
DistAttr::verifyForType(ShapedType type,
                        function_ref<InFlightDiagnostic()> emitError) const {
  if (!type.hasRank() || type.getRank() != int64_t(getRank()))
    return emitError() << "distribution of rank " << getRank()
                       << " does not match " << type;
  for (unsigned d = 0; d < getRank(); ++d) {
    int64_t extent = type.getDimSize(d), g = getGrid()[d], u = getUnit()[d];
    if (g == 1)
      continue;
    if (ShapedType::isDynamic(extent))
      return emitError() << "cannot split dynamic dimension " << d;
    int64_t units = (extent + u - 1) / u;
    if (g > units)
      return emitError() << "dimension " << d << " of " << type << " has "
                         << units << " units of " << u
                         << " elements; cannot cut it into " << g << " tiles";
  }
  // Uneven dimensions: every tile gets at least one unit.
  if (getWeights().empty())
    return success();
  TensorDist dist = fromAttr(*this);
  SmallVector<int64_t> shape(type.getShape());
  for (unsigned d = 0; d < getRank(); ++d) {
    if (dist.getDimWeights(d).empty())
      continue;
    for (int64_t c = 0; c < getGrid()[d]; ++c) {
      auto [begin, end] = dist.getTileRange(shape, d, c);
      if (begin >= end)
        return emitError() << "the weights of dimension " << d << " leave "
                           << "tile " << c << " of " << type << " empty";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SplitAttr
//===----------------------------------------------------------------------===//

Attribute SplitAttr::parse(AsmParser &parser, Type) {
  std::string names;
  SmallVector<int64_t> counts;
  int64_t replicas = 1;
  unsigned replicaPosition = 0;
  int64_t firstDevice = 0;
  SmallVector<int64_t> weights;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalGreater())) {
    auto parseEntry = [&]() -> ParseResult {
      StringRef name;
      SMLoc nameLoc = parser.getCurrentLocation();
      int64_t value;
      if (parser.parseKeyword(&name) || parser.parseEqual())
        return failure();
      if (name == "weights")
        return parseIntList(parser, weights);
      if (parser.parseInteger(value))
        return failure();
      if (name == "replicas") {
        replicas = value;
        replicaPosition = names.size();
        return success();
      }
      if (name == "first_device") {
        if (value < 0 || value > std::numeric_limits<unsigned>::max())
          return parser.emitError(nameLoc, "first_device must be a device "
                                           "number, got ")
                 << value;
        firstDevice = value;
        return success();
      }
      if (name.size() != 1 || !llvm::isAlpha(name[0]))
        return parser.emitError(nameLoc,
                                "expected an index letter, 'replicas', "
                                "'first_device' or 'weights', got '")
               << name << "'";
      names.push_back(name[0]);
      counts.push_back(value);
      return success();
    };
    if (parser.parseCommaSeparatedList(parseEntry) || parser.parseGreater())
      return {};
  }
  return parser.getChecked<SplitAttr>(loc, parser.getContext(), names, counts,
                                      replicas, replicaPosition,
                                      unsigned(firstDevice), weights);
}

void SplitAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool first = true;
  auto printReplicas = [&] {
    printer << (first ? "" : ", ") << "replicas = " << getReplicas();
    first = false;
  };
  for (auto [i, entry] :
       llvm::enumerate(llvm::zip_equal(getIndices(), getCounts()))) {
    if (getReplicas() != 1 && i == getReplicaPosition())
      printReplicas();
    printer << (first ? "" : ", ") << std::get<0>(entry) << " = "
            << std::get<1>(entry);
    first = false;
  }
  if (getReplicas() != 1 && getReplicaPosition() >= getCounts().size())
    printReplicas();
  if (getFirstDevice() != 0) {
    printer << (first ? "" : ", ") << "first_device = " << getFirstDevice();
    first = false;
  }
  if (!getWeights().empty()) {
    printer << (first ? "" : ", ") << "weights = [";
    llvm::interleaveComma(getWeights(), printer);
    printer << "]";
  }
  printer << ">";
}

LogicalResult SplitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef indices, ArrayRef<int64_t> counts,
                                int64_t replicas, unsigned replicaPosition,
                                unsigned firstDevice,
                                ArrayRef<int64_t> weights) {
  if (indices.size() != counts.size())
    return emitError() << "expected one count per index, got " << indices.size()
                       << " indices and " << counts.size() << " counts";
  for (auto [i, name] : llvm::enumerate(indices)) {
    if (!llvm::isAlpha(name))
      return emitError() << "index names are letters, got '" << name << "'";
    if (indices.find(name, i + 1) != StringRef::npos)
      return emitError() << "index '" << name << "' is split twice";
    if (counts[i] < 2)
      return emitError() << "index '" << name
                         << "' must be split into at least 2 parts, got "
                         << counts[i];
  }
  if (replicas < 1)
    return emitError() << "replicas must be positive, got " << replicas;
  if (replicaPosition > counts.size())
    return emitError() << "replica position " << replicaPosition
                       << " is past the " << counts.size() << " split indices";
  if (!weights.empty()) {
    if (counts.size() != 1 || replicas != 1)
      return emitError() << "weights need exactly one split index and no "
                            "replicas";
    if (int64_t(weights.size()) != counts[0])
      return emitError() << "expected " << counts[0] << " weights, got "
                         << weights.size();
    for (int64_t w : weights)
      if (w < 1 || w > kMaxTileWeight)
        return emitError() << "weights must be in [1, " << kMaxTileWeight
                           << "], got " << w;
  }
  return success();
}

int64_t SplitAttr::getNumDevices() const {
  int64_t n = getReplicas();
  for (int64_t c : getCounts())
    n *= c;
  return n;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

/// Checks `dist` against the operand type of a movement op.
static LogicalResult verifyOperandDist(Operation *op, DistAttr dist,
                                       StringRef role) {
  auto type = llvm::cast<ShapedType>(op->getOperand(0).getType());
  return dist.verifyForType(
      type, [&] { return op->emitOpError() << "'" << role << "' "; });
}

LogicalResult RepartitionOp::verify() {
  if (failed(verifyOperandDist(*this, getFrom(), "from")) ||
      failed(verifyOperandDist(*this, getTo(), "to")))
    return failure();
  if (getFrom().getPartial())
    return emitOpError() << "cannot move partial aggregates; combine them "
                         << "with tra_plan.all_reduce or "
                         << "tra_plan.reduce_scatter first";
  if (getTo().getPartial())
    return emitOpError() << "'to' must not be partial";
  return success();
}

OpFoldResult RepartitionOp::fold(FoldAdaptor) {
  if (getFrom() == getTo())
    return getInput();
  return {};
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyOperandDist(*this, getFrom(), "from")) ||
      failed(verifyOperandDist(*this, getTo(), "to")))
    return failure();
  DistAttr from = getFrom(), to = getTo();
  if (!from.getPartial())
    return emitOpError() << "'from' must be partial";
  if (to.getPartial() || to.getGrid() != from.getGrid() ||
      to.getUnit() != from.getUnit() || to.getCopies() != from.getCopies() ||
      fromAttr(to) != fromAttr(from).withoutPartial())
    return emitOpError() << "'to' must be 'from' without 'partial'";
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyOperandDist(*this, getFrom(), "from")) ||
      failed(verifyOperandDist(*this, getTo(), "to")))
    return failure();
  DistAttr from = getFrom(), to = getTo();
  if (!from.getPartial())
    return emitOpError() << "'from' must be partial";
  uint64_t dim = getDim();
  if (dim >= from.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << from.getRank();
  int64_t q = from.getCopies() / from.getGroups();
  if (to.getPartial() || to.getCopies() != from.getGroups())
    return emitOpError() << "'to' must have " << from.getGroups() << " cop"
                         << (from.getGroups() == 1 ? "y" : "ies")
                         << " per tile, one per group of 'from'";
  for (unsigned d = 0; d < from.getRank(); ++d) {
    int64_t expected = d == dim ? from.getGrid()[d] * q : from.getGrid()[d];
    if (to.getGrid()[d] != expected)
      return emitOpError() << "'to' must have " << expected
                           << " tiles along dimension " << d << ", got "
                           << to.getGrid()[d];
    if (d != dim && from.getGrid()[d] > 1 &&
        to.getUnit()[d] != from.getUnit()[d])
      return emitOpError() << "'to' must keep the unit of dimension " << d;
  }
  TensorDist src = fromAttr(from), dst = fromAttr(to);
  ArrayRef<int64_t> shape =
      llvm::cast<ShapedType>(getInput().getType()).getShape();
  for (int64_t c = 0; c < src.grid[dim]; ++c) {
    auto range = src.getTileRange(shape, dim, c);
    if (dst.getTileRange(shape, dim, c * q).first != range.first ||
        dst.getTileRange(shape, dim, c * q + q - 1).second != range.second)
      return emitOpError() << "tiles " << c * q << ".." << c * q + q - 1
                           << " of 'to' along dimension " << dim
                           << " must cover exactly tile " << c << " of 'from'";
  }
  SmallVector<int64_t, 4> coords;
  for (int64_t t = 0, e = dst.getNumTiles(); t < e; ++t) {
    dst.getTileCoords(t, coords);
    int64_t j = coords[dim] % q;
    coords[dim] /= q;
    SmallVector<unsigned, 4> expected;
    for (unsigned g = 0; g < src.groups; ++g)
      expected.push_back(src.getGroupDevices(src.getTileIndex(coords), g)[j]);
    llvm::sort(expected);
    if (dst.getTileDevices(t) != ArrayRef<unsigned>(expected))
      return emitOpError() << "tile " << t << " of 'to' must be on device"
                           << (expected.size() == 1 ? " " : "s ")
                           << formatDeviceSet(expected) << ", the holder"
                           << (expected.size() == 1 ? "" : "s")
                           << " of its slice";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// Checks a `tra_plan.operands` / `tra_plan.results` array against `types`.
static LogicalResult verifyDistArray(Operation *op, NamedAttribute attr,
                                     TypeRange types, StringRef what) {
  auto array = llvm::dyn_cast<ArrayAttr>(attr.getValue());
  if (!array)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be an array of #tra_plan.dist";
  if (array.size() != types.size())
    return op->emitOpError()
           << "'" << attr.getName().getValue() << "' has " << array.size()
           << " distributions for " << types.size() << " " << what;
  for (size_t i = 0; i < array.size(); ++i) {
    auto dist = llvm::dyn_cast<DistAttr>(array[i]);
    auto type = llvm::dyn_cast<ShapedType>(types[i]);
    if (!dist || !type)
      return op->emitOpError() << "'" << attr.getName().getValue() << "' entry "
                               << i << " must be a #tra_plan.dist of a tensor";
    if (failed(dist.verifyForType(type, [&] {
          return op->emitOpError()
                 << "'" << attr.getName().getValue() << "' entry " << i << ": ";
        })))
      return failure();
  }
  return success();
}

LogicalResult PlanDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kSplitAttrName) {
    if (!llvm::isa<SplitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a #tra_plan.split";
    return success();
  }
  if (name == kOperandsAttrName)
    return verifyDistArray(op, attr, op->getOperandTypes(), "operands");
  if (name == kResultsAttrName)
    return verifyDistArray(op, attr, op->getResultTypes(), "results");
  if (name == kHardwareAttrName) {
    if (!llvm::isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == kNumDevicesAttrName) {
    auto count = llvm::dyn_cast<IntegerAttr>(attr.getValue());
    if (!count || count.getValue().getSExtValue() < 1)
      return op->emitOpError() << "'" << name << "' must be a positive integer";
    return success();
  }
  return op->emitOpError() << "unknown attribute '" << name
                           << "' of the tra_plan dialect";
}

LogicalResult PlanDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == kTierAttrName) {
    auto tier = llvm::dyn_cast<StringAttr>(attr.getValue());
    if (!tier || (tier.getValue() != "host" && tier.getValue() != "disk"))
      return op->emitOpError() << "'" << kTierAttrName << "' of argument "
                               << argIndex << " must be \"host\" or \"disk\"";
    return success();
  }
  if (attr.getName() != kDistAttrName)
    return op->emitOpError()
           << "unknown argument attribute '" << attr.getName().getValue()
           << "' of the tra_plan dialect";
  auto dist = llvm::dyn_cast<DistAttr>(attr.getValue());
  if (!dist)
    return op->emitOpError() << "'" << kDistAttrName << "' of argument "
                             << argIndex << " must be a #tra_plan.dist";
  Region &region = op->getRegion(regionIndex);
  if (region.empty() || argIndex >= region.getNumArguments())
    return success();
  auto type =
      llvm::dyn_cast<ShapedType>(region.getArgument(argIndex).getType());
  if (!type)
    return op->emitOpError() << "argument " << argIndex << " with '"
                             << kDistAttrName << "' must be a tensor";
  return dist.verifyForType(type, [&] {
    return op->emitOpError()
           << "'" << kDistAttrName << "' of argument " << argIndex << ": ";
  });
}
