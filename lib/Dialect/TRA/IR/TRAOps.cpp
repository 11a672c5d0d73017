//===- TRAOps.cpp - tra dialect operations --------------------------------===//

#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Dialect/TRA/IR/ScalarProgram.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tra;

//===----------------------------------------------------------------------===//
// Scalar semantics shared by the folders and the interpreter
//===----------------------------------------------------------------------===//

std::pair<unsigned, unsigned> mlir::tra::getCombinerArity(CombinerKind kind) {
  switch (kind) {
  case CombinerKind::mul:
  case CombinerKind::add:
  case CombinerKind::max:
  case CombinerKind::min:
    return {1, 0};
  case CombinerKind::sub:
  case CombinerKind::div:
    return {2, 2};
  default:
    return {1, 1};
  }
}

double mlir::tra::applyCombiner(CombinerKind kind, ArrayRef<double> xs) {
  double x = xs.empty() ? 0.0 : xs[0];
  switch (kind) {
  case CombinerKind::mul: {
    double r = 1.0;
    for (double v : xs)
      r *= v;
    return r;
  }
  case CombinerKind::add: {
    double r = 0.0;
    for (double v : xs)
      r += v;
    return r;
  }
  case CombinerKind::max: {
    double r = x;
    for (double v : xs)
      r = (std::isnan(r) || std::isnan(v)) ? std::nan("") : std::max(r, v);
    return r;
  }
  case CombinerKind::min: {
    double r = x;
    for (double v : xs)
      r = (std::isnan(r) || std::isnan(v)) ? std::nan("") : std::min(r, v);
    return r;
  }
  case CombinerKind::sub:
    return xs[0] - xs[1];
  case CombinerKind::div:
    return xs[0] / xs[1];
  case CombinerKind::id:
    return x;
  case CombinerKind::neg:
    return -x;
  case CombinerKind::exp:
    return std::exp(x);
  case CombinerKind::silu:
    return x / (1.0 + std::exp(-x));
  case CombinerKind::rsqrt:
    return 1.0 / std::sqrt(x);
  case CombinerKind::sqrt:
    return std::sqrt(x);
  case CombinerKind::square:
    return x * x;
  case CombinerKind::tanh:
    return std::tanh(x);
  case CombinerKind::abs:
    return std::fabs(x);
  case CombinerKind::recip:
    return 1.0 / x;
  case CombinerKind::relu:
    return x > 0.0 ? x : 0.0;
  case CombinerKind::sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  }
  llvm_unreachable("unknown combiner");
}

double mlir::tra::getAggregationIdentity(AggregationKind kind) {
  switch (kind) {
  case AggregationKind::sum:
    return 0.0;
  case AggregationKind::prod:
    return 1.0;
  case AggregationKind::max:
    return -std::numeric_limits<double>::infinity();
  case AggregationKind::min:
    return std::numeric_limits<double>::infinity();
  }
  llvm_unreachable("unknown aggregation");
}

double mlir::tra::applyAggregation(AggregationKind kind, double acc,
                                   double value) {
  switch (kind) {
  case AggregationKind::sum:
    return acc + value;
  case AggregationKind::prod:
    return acc * value;
  case AggregationKind::max:
    return (std::isnan(acc) || std::isnan(value)) ? std::nan("")
                                                  : std::max(acc, value);
  case AggregationKind::min:
    return (std::isnan(acc) || std::isnan(value)) ? std::nan("")
                                                  : std::min(acc, value);
  }
  llvm_unreachable("unknown aggregation");
}

double mlir::tra::roundToElementType(Type type, double value) {
  if (auto ft = llvm::dyn_cast<FloatType>(type)) {
    if (ft.isF64())
      return value;
    if (ft.isF32())
      return double(float(value));
    bool losesInfo = false;
    llvm::APFloat f(value);
    f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return f.convertToDouble();
  }
  if (type.isInteger(1))
    return value != 0.0 ? 1.0 : 0.0;
  if (type.isIntOrIndex()) {
    if (std::isnan(value))
      return 0.0;
    double t = std::trunc(value);
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    if (width >= 64)
      return t;
    // Wrap to the integer width, two's complement.
    double mod = std::ldexp(1.0, width);
    double r = std::fmod(t, mod);
    if (r < 0)
      r += mod;
    if (r >= mod / 2)
      r -= mod;
    return r;
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static std::string shapeStr(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  return llvm::join(
      llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), "x");
}

//===----------------------------------------------------------------------===//
// PlannableTensors
//===----------------------------------------------------------------------===//

/// Why `type` is not a tensor tra can plan, or "" if it is one.
static std::string whyNotPlannable(RankedTensorType type) {
  auto printed = [&] {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  };
  if (!type.hasStaticShape())
    return "has the dynamic shape " + printed() +
           " (tra plans static shapes; give every extent)";
  // i1 is stored one byte per element.
  int64_t bytes = std::max<int64_t>(
      1, int64_t(type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  if (llvm::is_contained(type.getShape(), 0))
    return "";
  int64_t total = bytes;
  for (int64_t extent : type.getShape()) {
    if (llvm::MulOverflow(total, extent, total))
      return "has the type " + printed() +
             ", more bytes than a 64-bit size can count";
  }
  return "";
}

LogicalResult mlir::tra::verifyPlannableTensorType(Operation *op, Type type,
                                                   StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    if (isa<TensorType>(type))
      return op->emitOpError() << what << " is the unranked tensor " << type
                               << " (tra plans tensors of static shape)";
    return success();
  }
  std::string why = whyNotPlannable(tensor);
  if (why.empty())
    return success();
  return op->emitOpError() << what << " " << why;
}

LogicalResult mlir::tra::verifyPlannableTensors(Operation *op) {
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (failed(verifyPlannableTensorType(op, operand.getType(),
                                         "operand #" + std::to_string(i))))
      return failure();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(verifyPlannableTensorType(op, result.getType(),
                                         "result #" + std::to_string(i))))
      return failure();
  return success();
}

static bool isTRAFloat(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isF64();
}

/// Verifies that `spec` matches the operand/result ranks and extents.
static LogicalResult verifySpecShapes(Operation *op, const EinsumSpec &spec,
                                      ValueRange inputs, Value result) {
  if (spec.getNumInputs() != inputs.size())
    return op->emitOpError()
           << "index spec '" << spec.str() << "' has " << spec.getNumInputs()
           << " input terms but the op "
           << "has " << inputs.size() << " inputs";
  SmallVector<ArrayRef<int64_t>> shapes;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    auto type = llvm::cast<RankedTensorType>(in.getType());
    if (type.getRank() != int64_t(spec.getInput(i).size()))
      return op->emitOpError()
             << "input #" << i << " has rank " << type.getRank()
             << " but its term '" << spec.inputTerm(i) << "' names "
             << spec.getInput(i).size() << " indices";
    shapes.push_back(type.getShape());
  }
  auto resultType = llvm::cast<RankedTensorType>(result.getType());
  if (resultType.getRank() != int64_t(spec.getOutput().size()))
    return op->emitOpError()
           << "result has rank " << resultType.getRank()
           << " but the output term '" << spec.outputTerm() << "' names "
           << spec.getOutput().size() << " indices";
  auto extents = inferIndexExtents(spec, shapes, resultType.getShape());
  if (!extents)
    return op->emitOpError() << llvm::toString(extents.takeError());
  return success();
}

static FailureOr<EinsumSpec> parseSpecOrEmit(Operation *op,
                                             StringRef specText) {
  auto spec = EinsumSpec::parse(specText);
  if (!spec)
    return op->emitOpError() << llvm::toString(spec.takeError()), failure();
  return std::move(*spec);
}

/// The splat value of a constant operand, if it is one.
static std::optional<double> getSplat(Attribute attr) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return std::nullopt;
  Attribute v = splat.getSplatValue<Attribute>();
  if (auto f = llvm::dyn_cast<FloatAttr>(v))
    return f.getValueAsDouble();
  if (auto i = llvm::dyn_cast<IntegerAttr>(v))
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getValue().getSExtValue());
  return std::nullopt;
}

/// A splat constant of `type` holding `value` (rounded to the element type).
static Attribute makeSplat(RankedTensorType type, double value) {
  Type elt = type.getElementType();
  value = roundToElementType(elt, value);
  Attribute scalar;
  if (auto ft = llvm::dyn_cast<FloatType>(elt))
    scalar = FloatAttr::get(ft, value);
  else if (elt.isInteger(1))
    scalar = IntegerAttr::get(elt, value != 0.0 ? 1 : 0);
  else
    scalar = IntegerAttr::get(elt, int64_t(value));
  return SplatElementsAttr::get(type, scalar);
}

//===----------------------------------------------------------------------===//
// Custom directives: combiners and aggregations print as bare keywords.
//===----------------------------------------------------------------------===//

template <typename AttrT, typename EnumT>
static ParseResult
parseEnumKeyword(OpAsmParser &parser, AttrT &attr,
                 std::optional<EnumT> (*symbolize)(StringRef), StringRef what) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> kind = symbolize(keyword);
  if (!kind)
    return parser.emitError(loc)
           << "unknown " << what << " '" << keyword << "'";
  attr = AttrT::get(parser.getContext(), *kind);
  return success();
}

static ParseResult parseCombiner(OpAsmParser &parser, CombinerKindAttr &attr) {
  return parseEnumKeyword<CombinerKindAttr, CombinerKind>(
      parser, attr, symbolizeCombinerKind, "combiner");
}

static void printCombiner(OpAsmPrinter &p, Operation *, CombinerKindAttr attr) {
  p << stringifyCombinerKind(attr.getValue());
}

static ParseResult parseAggregation(OpAsmParser &parser,
                                    AggregationKindAttr &attr) {
  return parseEnumKeyword<AggregationKindAttr, AggregationKind>(
      parser, attr, symbolizeAggregationKind, "aggregation");
}

static void printAggregation(OpAsmPrinter &p, Operation *,
                             AggregationKindAttr attr) {
  p << stringifyAggregationKind(attr.getValue());
}

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

EinsumSpec EinsumOp::getParsedSpec() {
  auto spec = EinsumSpec::parse(getSpec());
  assert(spec && "verified einsum has a valid spec");
  return std::move(*spec);
}

LogicalResult EinsumOp::verify() {
  FailureOr<EinsumSpec> spec = parseSpecOrEmit(*this, getSpec());
  if (failed(spec))
    return failure();
  if (failed(verifySpecShapes(*this, *spec, getInputs(), getResult())))
    return failure();
  for (unsigned idx : spec->getOutput()) {
    bool inInput = false;
    for (unsigned i = 0; i < spec->getNumInputs(); ++i)
      inInput |= spec->getInputPosition(i, idx).has_value();
    if (!inInput)
      return emitOpError() << "output index '" << spec->getName(idx)
                           << "' appears in no input";
  }
  auto [minArity, maxArity] = getCombinerArity(getCombiner());
  unsigned n = getInputs().size();
  StringRef name = stringifyCombinerKind(getCombiner());
  if (minArity == maxArity && n != minArity)
    return emitOpError() << "combiner '" << name << "' takes exactly "
                         << minArity << (minArity == 1 ? " input" : " inputs")
                         << ", got " << n;
  Type elt = getResult().getType().getElementType();
  if (!isTRAFloat(elt))
    return emitOpError()
           << "result element type " << elt
           << " is not a floating-point type (f32, f16, bf16, f64)";
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    Type inElt = llvm::cast<RankedTensorType>(in.getType()).getElementType();
    // Mixed precision: a 16-bit or i8 input is widened exactly to an f32
    // result.
    bool widened =
        elt.isF32() && (inElt.isF16() || inElt.isBF16() || inElt.isInteger(8));
    if (inElt != elt && !widened)
      return emitOpError() << "input #" << i << " has element type " << inElt
                           << " but the result has " << elt
                           << "; an einsum input has the result's element "
                              "type, or is f16/bf16/i8 for an f32 result";
  }
  return success();
}

OpFoldResult EinsumOp::fold(FoldAdaptor adaptor) {
  EinsumSpec spec = getParsedSpec();
  // An einsum that neither combines, reduces nor permutes is its input.
  if (getInputs().size() == 1 && getCombiner() == CombinerKind::id &&
      spec.inputTerm(0) == spec.outputTerm() &&
      getInputs()[0].getType() == getType())
    return getInputs()[0];

  // All inputs splat: combine once, then aggregate over the reduced extent.
  SmallVector<double> values;
  for (Attribute attr : adaptor.getInputs()) {
    std::optional<double> v = getSplat(attr);
    if (!v)
      return {};
    values.push_back(*v);
  }
  Type elt = getType().getElementType();
  for (double &v : values)
    v = roundToElementType(elt, v);
  double combined =
      roundToElementType(elt, applyCombiner(getCombiner(), values));
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value in : getInputs())
    shapes.push_back(llvm::cast<RankedTensorType>(in.getType()).getShape());
  auto extents = inferIndexExtents(spec, shapes, getType().getShape());
  if (!extents) {
    llvm::consumeError(extents.takeError());
    return {};
  }
  uint64_t count = 1;
  for (unsigned idx : spec.getReducedIndices())
    count *= uint64_t((*extents)[idx]);
  double result = combined;
  if (count == 0) {
    result = getAggregationIdentity(getAggregation());
  } else if (!spec.getReducedIndices().empty()) {
    switch (getAggregation()) {
    case AggregationKind::sum:
      result = combined * double(count);
      break;
    case AggregationKind::prod:
      result = std::pow(combined, double(count));
      break;
    case AggregationKind::max:
    case AggregationKind::min:
      break;
    }
  }
  return makeSplat(getType(), result);
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

void MapOp::build(OpBuilder &builder, OperationState &state, Type resultType,
                  ValueRange inputs, StringRef spec) {
  state.addOperands(inputs);
  if (!spec.empty())
    state.addAttribute(getSpecAttrName(state.name),
                       builder.getStringAttr(spec));
  state.addTypes(resultType);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value in : inputs)
    block->addArgument(
        llvm::cast<RankedTensorType>(in.getType()).getElementType(),
        state.location);
}

MapOp mlir::tra::createMap(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    StringRef spec,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto op = MapOp::create(b, loc, type, inputs, spec);
  Block &block = op.getBody().front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&block);
  Value result = body(b, loc, block.getArguments());
  YieldOp::create(b, loc, result);
  return op;
}

EinsumSpec MapOp::getParsedSpec() {
  if (std::optional<StringRef> text = getSpec()) {
    auto spec = EinsumSpec::parse(*text);
    assert(spec && "verified map has a valid spec");
    return std::move(*spec);
  }
  return EinsumSpec::identity(getInputs().size(), getType().getRank());
}

Value MapOp::getYieldedValue() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator()).getValue();
}

LogicalResult MapOp::verify() {
  auto resultType = getType();
  if (std::optional<StringRef> text = getSpec()) {
    FailureOr<EinsumSpec> spec = parseSpecOrEmit(*this, *text);
    if (failed(spec))
      return failure();
    for (unsigned idx : spec->getReducedIndices()) {
      for (unsigned i = 0; i < spec->getNumInputs(); ++i) {
        if (spec->getInputPosition(i, idx))
          return emitOpError()
                 << "index '" << spec->getName(idx) << "' of input #" << i
                 << " does not appear in the output; tra.map does not "
                    "aggregate (use tra.einsum)";
      }
    }
    return verifySpecShapes(*this, *spec, getInputs(), getResult());
  }
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto type = llvm::cast<RankedTensorType>(in.getType());
    if (type.getShape() != resultType.getShape())
      return emitOpError() << "input #" << i << " has shape "
                           << shapeStr(type.getShape())
                           << " but the result has shape "
                           << shapeStr(resultType.getShape())
                           << " (without a spec, inputs have the result's "
                              "shape)";
  }
  return success();
}

LogicalResult MapOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << block.getNumArguments()
                         << " arguments but the op has " << getInputs().size()
                         << " inputs";
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    Type elt = llvm::cast<RankedTensorType>(in.getType()).getElementType();
    if (block.getArgument(i).getType() != elt)
      return emitOpError() << "body argument #" << i << " has type "
                           << block.getArgument(i).getType() << " but input #"
                           << i << " has element type " << elt;
  }
  auto yield = llvm::dyn_cast_if_present<YieldOp>(
      block.empty() ? nullptr : &block.back());
  if (!yield)
    return emitOpError() << "body must end with tra.yield";
  Type elt = getType().getElementType();
  if (yield.getValue().getType() != elt)
    return emitOpError() << "body yields " << yield.getValue().getType()
                         << " but the result element type is " << elt;
  return success();
}

namespace {
/// A map whose inputs are all splat constants and whose body does not read
/// the iteration index computes one value: replace it by a fill.
struct FoldConstantMap : public OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MapOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<double> args;
    for (Value in : op.getInputs()) {
      Attribute attr;
      if (!matchPattern(in, m_Constant(&attr)))
        return failure();
      std::optional<double> v = getSplat(attr);
      if (!v)
        return failure();
      args.push_back(*v);
    }
    // Compile quietly: an unsupported body op is not an error here.
    ScopedDiagnosticHandler quiet(op.getContext(),
                                  [](Diagnostic &) { return success(); });
    FailureOr<ScalarProgram> program =
        ScalarProgram::compile(op.getBody().front());
    if (failed(program) || program->usesIndex())
      return failure();
    double value = program->run(args, {});
    auto splat = llvm::cast<SplatElementsAttr>(makeSplat(op.getType(), value));
    rewriter.replaceOpWithNewOp<FillOp>(
        op, op.getType(),
        llvm::cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    return success();
  }
};
} // namespace

void MapOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<FoldConstantMap>(context);
}

//===----------------------------------------------------------------------===//
// IndexOp
//===----------------------------------------------------------------------===//

LogicalResult IndexOp::verify() {
  auto map = (*this)->getParentOfType<MapOp>();
  int64_t rank = map.getType().getRank();
  if (int64_t(getDim()) >= rank)
    return emitOpError() << "dim " << getDim()
                         << " is out of range for a tra.map result of rank "
                         << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  auto resultType = getType();
  int64_t rank = resultType.getRank();
  int64_t dim = getDim();
  if (dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank;
  int64_t total = 0;
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto type = llvm::cast<RankedTensorType>(in.getType());
    if (type.getElementType() != resultType.getElementType())
      return emitOpError() << "input #" << i << " has element type "
                           << type.getElementType() << " but the result has "
                           << resultType.getElementType();
    if (type.getRank() != rank)
      return emitOpError() << "input #" << i << " has rank " << type.getRank()
                           << " but the result has rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim && type.getDimSize(d) != resultType.getDimSize(d))
        return emitOpError()
               << "input #" << i << " has extent " << type.getDimSize(d)
               << " in dim " << d << " but the result has "
               << resultType.getDimSize(d);
    }
    total += type.getDimSize(dim);
  }
  if (total != resultType.getDimSize(dim))
    return emitOpError() << "inputs add up to " << total << " along dim " << dim
                         << " but the result has "
                         << resultType.getDimSize(dim);
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  std::optional<double> common;
  for (Attribute attr : adaptor.getInputs()) {
    std::optional<double> v = getSplat(attr);
    if (!v || (common && *common != *v))
      return {};
    common = v;
  }
  if (!common)
    return {};
  return makeSplat(getType(), *common);
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  auto inType = getInput().getType();
  auto resultType = getType();
  int64_t rank = inType.getRank();
  int64_t dim = getDim();
  if (dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank;
  if (resultType.getElementType() != inType.getElementType())
    return emitOpError() << "result element type "
                         << resultType.getElementType()
                         << " differs from the input's "
                         << inType.getElementType();
  // offset and size are non-negative int64 values: compared without a sum
  // that could overflow.
  uint64_t extent = uint64_t(inType.getDimSize(dim));
  if (getOffset() > extent || getSize() > extent - getOffset())
    return emitOpError() << "slice of " << getSize() << " elements at offset "
                         << getOffset() << " exceeds extent " << extent
                         << " of dim " << dim;
  SmallVector<int64_t> expected(inType.getShape());
  expected[dim] = getSize();
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result has shape "
                         << shapeStr(resultType.getShape()) << ", expected "
                         << shapeStr(expected);
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getOffset() == 0)
    return getInput();
  if (std::optional<double> v = getSplat(adaptor.getInput()))
    return makeSplat(getType(), *v);
  return {};
}

//===----------------------------------------------------------------------===//
// UpdateSliceOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateSliceOp::verify() {
  auto update = getUpdate().getType();
  auto dest = getDest().getType();
  if (update.getElementType() != dest.getElementType())
    return emitOpError() << "update element type " << update.getElementType()
                         << " differs from the destination's "
                         << dest.getElementType();
  if (update.getRank() != dest.getRank())
    return emitOpError() << "update has rank " << update.getRank()
                         << " but the destination has rank " << dest.getRank();
  int64_t dim = getDim();
  if (dim >= dest.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << dest.getRank();
  for (int64_t d = 0; d < dest.getRank(); ++d) {
    if (d == dim) {
      if (update.getDimSize(d) > dest.getDimSize(d))
        return emitOpError()
               << "update extent " << update.getDimSize(d) << " along dim " << d
               << " exceeds the destination's " << dest.getDimSize(d);
      continue;
    }
    if (update.getDimSize(d) != dest.getDimSize(d))
      return emitOpError() << "update has extent " << update.getDimSize(d)
                           << " in dim " << d << " but the destination has "
                           << dest.getDimSize(d);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  auto table = getTable().getType();
  auto indices = getIndices().getType();
  auto result = getType();
  if (table.getRank() < 1)
    return emitOpError() << "table must have rank >= 1";
  if (result.getElementType() != table.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the table's "
                         << table.getElementType();
  SmallVector<int64_t> expected(indices.getShape());
  llvm::append_range(expected, table.getShape().drop_front());
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result has shape " << shapeStr(result.getShape())
                         << ", expected " << shapeStr(expected)
                         << " (index shape, then the table's row shape)";
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

using ReshapeGroups =
    SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>;

/// Splits a reshape from `src` to `dst` into groups of consecutive dimensions
/// with equal element counts. Fails (with a reason) unless each group is a
/// grouping (many source dims to one result dim), an ungrouping, or 1:1.
static FailureOr<ReshapeGroups> computeReshapeGroups(ArrayRef<int64_t> src,
                                                     ArrayRef<int64_t> dst,
                                                     std::string &reason) {
  ReshapeGroups groups;
  size_t i = 0, j = 0;
  while (i < src.size() || j < dst.size()) {
    SmallVector<int64_t> gs, gd;
    int64_t ps = 1, pd = 1;
    // Take at least one dim from each side that still has dims, then grow the
    // side with the smaller product until they agree.
    if (i < src.size())
      ps *= src[i], gs.push_back(i++);
    if (j < dst.size())
      pd *= dst[j], gd.push_back(j++);
    while (ps != pd) {
      if (ps < pd && i < src.size())
        ps *= src[i], gs.push_back(i++);
      else if (pd < ps && j < dst.size())
        pd *= dst[j], gd.push_back(j++);
      else
        break;
    }
    if (ps != pd) {
      reason = "element counts differ";
      return failure();
    }
    // Unit dims at the end of either side join the last group.
    while (i < src.size() && src[i] == 1 && (j == dst.size() || dst[j] != 1))
      gs.push_back(i++);
    while (j < dst.size() && dst[j] == 1 && (i == src.size() || src[i] != 1))
      gd.push_back(j++);
    if (gs.size() > 1 && gd.size() > 1) {
      reason =
          "source dims [" +
          llvm::join(llvm::map_range(
                         gs, [&](int64_t d) { return std::to_string(src[d]); }),
                     "x") +
          "] become [" +
          llvm::join(llvm::map_range(
                         gd, [&](int64_t d) { return std::to_string(dst[d]); }),
                     "x") +
          "], which neither groups nor ungroups dimensions";
      return failure();
    }
    groups.push_back({gs, gd});
  }
  return groups;
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType();
  auto out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "result element type " << out.getElementType()
                         << " differs from the input's " << in.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "input has " << in.getNumElements()
                         << " elements but the result has "
                         << out.getNumElements();
  std::string reason;
  if (failed(computeReshapeGroups(in.getShape(), out.getShape(), reason)))
    return emitOpError() << "cannot reshape " << shapeStr(in.getShape())
                         << " to " << shapeStr(out.getShape()) << ": "
                         << reason;
  return success();
}

ReshapeGroups ReshapeOp::getGroups() {
  std::string reason;
  auto groups = computeReshapeGroups(getInput().getType().getShape(),
                                     getType().getShape(), reason);
  assert(succeeded(groups) && "verified reshape");
  return *groups;
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (std::optional<double> v = getSplat(adaptor.getInput()))
    return makeSplat(getType(), *v);
  // reshape(reshape(x)) -> reshape(x) when the direct reshape is valid.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    Value source = inner.getInput();
    if (source.getType() == getType())
      return source;
    std::string reason;
    if (succeeded(computeReshapeGroups(
            llvm::cast<RankedTensorType>(source.getType()).getShape(),
            getType().getShape(), reason))) {
      getInputMutable().assign(source);
      return getResult();
    }
  }
  return {};
}

//===----------------------------------------------------------------------===//
// FillOp
//===----------------------------------------------------------------------===//

ParseResult FillOp::parse(OpAsmParser &parser, OperationState &result) {
  // tra.fill VALUE attr-dict : TYPE. VALUE is an integer, a float, true,
  // false, inf, -inf or nan; it takes the tensor's element type.
  SMLoc valueLoc = parser.getCurrentLocation();
  bool negative = succeeded(parser.parseOptionalMinus());
  std::optional<double> number;
  std::optional<int64_t> integer;
  if (succeeded(parser.parseOptionalKeyword("inf"))) {
    number = std::numeric_limits<double>::infinity();
  } else if (succeeded(parser.parseOptionalKeyword("nan"))) {
    number = std::nan("");
  } else if (succeeded(parser.parseOptionalKeyword("true"))) {
    integer = 1;
  } else if (succeeded(parser.parseOptionalKeyword("false"))) {
    integer = 0;
  } else {
    APInt apint;
    OptionalParseResult intResult = parser.parseOptionalInteger(apint);
    if (intResult.has_value()) {
      if (failed(*intResult))
        return failure();
      integer = apint.getSExtValue();
    } else {
      double d;
      if (parser.parseFloat(d))
        return failure();
      number = d;
    }
  }
  if (negative) {
    if (number)
      number = -*number;
    if (integer)
      integer = -*integer;
  }
  RankedTensorType type;
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  Type elt = type.getElementType();
  TypedAttr value;
  if (auto ft = llvm::dyn_cast<FloatType>(elt)) {
    value = FloatAttr::get(ft, number ? *number : double(*integer));
  } else if (auto it = llvm::dyn_cast<IntegerType>(elt)) {
    if (!integer)
      return parser.emitError(valueLoc)
             << "fill value for a tensor of " << elt << " must be an integer";
    value = IntegerAttr::get(it, *integer);
  } else {
    return parser.emitError(valueLoc) << "cannot fill a tensor of " << elt;
  }
  result.addAttribute(getValueAttrName(result.name), value);
  result.addTypes(type);
  return success();
}

void FillOp::print(OpAsmPrinter &p) {
  p << ' ';
  if (auto f = llvm::dyn_cast<FloatAttr>(getValue())) {
    const APFloat &v = f.getValue();
    if (v.isNaN())
      p << "nan";
    else if (v.isInfinity())
      p << (v.isNegative() ? "-inf" : "inf");
    else
      p.printFloat(v);
  } else if (auto i = llvm::dyn_cast<IntegerAttr>(getValue())) {
    if (i.getType().isInteger(1))
      p << (i.getValue().getBoolValue() ? "true" : "false");
    else
      p << i.getValue().getSExtValue();
  } else {
    p.printAttribute(getValue());
  }
  p.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  p << " : " << getType();
}

LogicalResult FillOp::verify() {
  Type elt = getType().getElementType();
  if (getValue().getType() != elt)
    return emitOpError() << "value has type " << getValue().getType()
                         << " but the tensor has element type " << elt;
  return success();
}

OpFoldResult FillOp::fold(FoldAdaptor) {
  return SplatElementsAttr::get(getType(), getValue());
}

//===----------------------------------------------------------------------===//
// ConvertOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertOp::verify() {
  auto in = getInput().getType();
  auto out = getType();
  if (in.getShape() != out.getShape())
    return emitOpError() << "input has shape " << shapeStr(in.getShape())
                         << " but the result has shape "
                         << shapeStr(out.getShape())
                         << "; convert changes only the element type";
  return success();
}

OpFoldResult ConvertOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (std::optional<double> v = getSplat(adaptor.getInput()))
    return makeSplat(getType(), *v);
  return {};
}

#define GET_OP_CLASSES
#include "tra/Dialect/TRA/IR/TRAOps.cpp.inc"
