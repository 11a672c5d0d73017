//===- Interpreter.cpp - Reference interpreter for model-level tra --------===//

#include "tra/Interpreter/Interpreter.h"
#include "tra/Dialect/TRA/IR/ScalarProgram.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <unistd.h>

using namespace mlir;
using namespace mlir::tra;

//===----------------------------------------------------------------------===//
// InterpTensor
//===----------------------------------------------------------------------===//

InterpTensor::InterpTensor(Type elementType, ArrayRef<int64_t> shape,
                           double fill)
    : elementType(elementType), shape(shape) {
  data.assign(getNumElements(), fill);
}

int64_t InterpTensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

RankedTensorType InterpTensor::getType() const {
  return RankedTensorType::get(shape, elementType);
}

std::string mlir::tra::getArgumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, "tra.name"))
    return name.str();
  return "arg" + std::to_string(index);
}

std::string mlir::tra::getResultName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(index, "tra.name"))
    return name.str();
  return "result" + std::to_string(index);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Advances the multi-index `idx` within `extents` (last dim fastest).
/// Returns false after the last index.
static bool advance(MutableArrayRef<int64_t> idx, ArrayRef<int64_t> extents) {
  for (int64_t d = int64_t(idx.size()) - 1; d >= 0; --d) {
    if (++idx[d] < extents[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

namespace {
/// Evaluates the operations of one function body.
class Evaluator {
public:
  explicit Evaluator(ModuleOp module) : module(module) {}

  FailureOr<SmallVector<InterpTensor>> call(func::FuncOp func,
                                            ArrayRef<InterpTensor> args);

private:
  LogicalResult eval(Operation *op);
  LogicalResult evalEinsum(EinsumOp op);
  LogicalResult evalMap(MapOp op);
  LogicalResult evalConcat(ConcatOp op);
  LogicalResult evalSlice(SliceOp op);
  LogicalResult evalUpdateSlice(UpdateSliceOp op);
  LogicalResult evalGather(GatherOp op);
  LogicalResult evalConvert(ConvertOp op);
  LogicalResult evalConstant(arith::ConstantOp op);
  LogicalResult evalCall(func::CallOp op);

  const InterpTensor &get(Value v) { return values.find(v)->second; }
  void set(Value v, InterpTensor t) { values[v] = std::move(t); }

  ModuleOp module;
  llvm::DenseMap<Value, InterpTensor> values;
  unsigned depth = 0;
};
} // namespace

FailureOr<SmallVector<InterpTensor>>
Evaluator::call(func::FuncOp func, ArrayRef<InterpTensor> args) {
  if (func.isExternal())
    return func.emitError("cannot interpret external function @")
               << func.getName(),
           failure();
  if (++depth > 64)
    return func.emitError("call depth exceeds 64 (recursion?)"), failure();
  Block &entry = func.getBody().front();
  for (auto [arg, value] : llvm::zip(entry.getArguments(), args))
    set(arg, value);
  SmallVector<InterpTensor> results;
  for (Operation &op : entry) {
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        results.push_back(get(v));
      break;
    }
    if (failed(eval(&op)))
      return failure();
  }
  --depth;
  return results;
}

/// The bytes of memory this machine has (0 if unknown).
static uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return uint64_t(pages) * uint64_t(pageSize);
}

/// Fails with a diagnostic on `op` if one of its results, held as doubles,
/// needs more memory than the machine has (instead of failing to allocate).
static LogicalResult checkResultsFit(Operation *op) {
  static const uint64_t memory = physicalMemoryBytes();
  for (Value result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape())
      continue;
    if (llvm::is_contained(type.getShape(), 0))
      continue;
    int64_t signedBytes = sizeof(double);
    bool overflow = false;
    for (int64_t extent : type.getShape())
      overflow =
          overflow || llvm::MulOverflow(signedBytes, extent, signedBytes);
    uint64_t bytes = uint64_t(signedBytes);
    if (overflow || (memory && bytes > memory))
      return op->emitOpError()
             << "result " << type << " needs "
             << (overflow ? std::string("more than 2^64")
                          : std::to_string(bytes))
             << " bytes in the reference interpreter (8 per element), more "
                "than this machine's "
             << memory << " bytes of memory";
  }
  return success();
}

LogicalResult Evaluator::eval(Operation *op) {
  if (failed(checkResultsFit(op)))
    return failure();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](EinsumOp o) { return evalEinsum(o); })
      .Case([&](MapOp o) { return evalMap(o); })
      .Case([&](ConcatOp o) { return evalConcat(o); })
      .Case([&](SliceOp o) { return evalSlice(o); })
      .Case([&](UpdateSliceOp o) { return evalUpdateSlice(o); })
      .Case([&](GatherOp o) { return evalGather(o); })
      .Case([&](ConvertOp o) { return evalConvert(o); })
      .Case([&](ReshapeOp o) {
        InterpTensor t = get(o.getInput());
        t.shape.assign(o.getType().getShape().begin(),
                       o.getType().getShape().end());
        set(o.getResult(), std::move(t));
        return success();
      })
      .Case([&](FillOp o) {
        double v = 0.0;
        if (auto f = llvm::dyn_cast<FloatAttr>(o.getValue()))
          v = f.getValueAsDouble();
        else if (auto i = llvm::dyn_cast<IntegerAttr>(o.getValue()))
          v = i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                       : double(i.getValue().getSExtValue());
        Type elt = o.getType().getElementType();
        set(o.getResult(), InterpTensor(elt, o.getType().getShape(),
                                        roundToElementType(elt, v)));
        return success();
      })
      .Case([&](arith::ConstantOp o) { return evalConstant(o); })
      .Case([&](func::CallOp o) { return evalCall(o); })
      .Default([&](Operation *o) {
        return o->emitOpError("is not supported by the reference interpreter");
      });
}

LogicalResult Evaluator::evalEinsum(EinsumOp op) {
  EinsumSpec spec = op.getParsedSpec();
  unsigned numIdx = spec.getNumIndices();
  unsigned numIn = op.getInputs().size();
  SmallVector<const InterpTensor *> ins;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : op.getInputs()) {
    ins.push_back(&get(v));
    shapes.push_back(ins.back()->shape);
  }
  auto resultType = op.getType();
  auto extentsOr = inferIndexExtents(spec, shapes, resultType.getShape());
  if (!extentsOr)
    return op.emitOpError() << llvm::toString(extentsOr.takeError());
  SmallVector<int64_t> extents = *extentsOr;

  // Per-index strides into each input (0 where the input lacks the index).
  SmallVector<SmallVector<int64_t>> inStride(numIn,
                                             SmallVector<int64_t>(numIdx, 0));
  for (unsigned i = 0; i < numIn; ++i) {
    SmallVector<int64_t> s = stridesOf(shapes[i]);
    for (auto [dim, idx] : llvm::enumerate(spec.getInput(i)))
      inStride[i][idx] = s[dim];
  }
  SmallVector<unsigned> outIdx(spec.getOutput());
  SmallVector<unsigned> redIdx = spec.getReducedIndices();
  SmallVector<int64_t> outExt, redExt;
  for (unsigned idx : outIdx)
    outExt.push_back(extents[idx]);
  for (unsigned idx : redIdx)
    redExt.push_back(extents[idx]);

  Type elt = resultType.getElementType();
  InterpTensor result(elt, resultType.getShape());
  int64_t numOut = result.getNumElements();
  bool anyReducedEmpty = llvm::is_contained(redExt, 0);
  CombinerKind combiner = op.getCombiner();
  AggregationKind agg = op.getAggregation();
  SmallVector<int64_t> o(outIdx.size(), 0), r(redIdx.size(), 0);
  SmallVector<int64_t> base(numIn), off(numIn);
  SmallVector<double> operands(numIn);
  for (int64_t flat = 0; flat < numOut; ++flat, advance(o, outExt)) {
    for (unsigned i = 0; i < numIn; ++i) {
      base[i] = 0;
      for (auto [pos, idx] : llvm::enumerate(outIdx))
        base[i] += o[pos] * inStride[i][idx];
    }
    double acc = getAggregationIdentity(agg);
    if (!anyReducedEmpty) {
      std::fill(r.begin(), r.end(), 0);
      do {
        for (unsigned i = 0; i < numIn; ++i) {
          off[i] = base[i];
          for (auto [pos, idx] : llvm::enumerate(redIdx))
            off[i] += r[pos] * inStride[i][idx];
          operands[i] = ins[i]->data[off[i]];
        }
        double v = applyCombiner(combiner, operands);
        acc = redIdx.empty() ? v : applyAggregation(agg, acc, v);
      } while (!redIdx.empty() && advance(r, redExt));
    }
    result.data[flat] = roundToElementType(elt, acc);
  }
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalMap(MapOp op) {
  FailureOr<ScalarProgram> program =
      ScalarProgram::compile(op.getBody().front());
  if (failed(program))
    return failure();
  EinsumSpec spec = op.getParsedSpec();
  auto resultType = op.getType();
  unsigned numIn = op.getInputs().size();
  SmallVector<const InterpTensor *> ins;
  for (Value v : op.getInputs())
    ins.push_back(&get(v));
  // Stride of each output dim into each input (0 when broadcast).
  SmallVector<SmallVector<int64_t>> stride(numIn);
  for (unsigned i = 0; i < numIn; ++i) {
    SmallVector<int64_t> s = stridesOf(ins[i]->shape);
    stride[i].assign(resultType.getRank(), 0);
    for (auto [pos, idx] : llvm::enumerate(spec.getOutput()))
      if (std::optional<unsigned> d = spec.getInputPosition(i, idx))
        stride[i][pos] = s[*d];
  }
  Type elt = resultType.getElementType();
  InterpTensor result(elt, resultType.getShape());
  SmallVector<int64_t> idx(resultType.getRank(), 0);
  SmallVector<double> args(numIn);
  for (int64_t flat = 0, n = result.getNumElements(); flat < n;
       ++flat, advance(idx, resultType.getShape())) {
    for (unsigned i = 0; i < numIn; ++i) {
      int64_t off = 0;
      for (unsigned d = 0; d < idx.size(); ++d)
        off += idx[d] * stride[i][d];
      args[i] = ins[i]->data[off];
    }
    result.data[flat] = roundToElementType(elt, program->run(args, idx));
  }
  set(op.getResult(), std::move(result));
  return success();
}

/// Copies `src` into `dst` at offset `at` along `dim` (all other extents
/// equal), or the reverse when `extract` is set.
static void copyAlongDim(const InterpTensor &from, InterpTensor &to,
                         int64_t dim, int64_t at, bool extract) {
  const InterpTensor &small = extract ? to : from;
  const InterpTensor &big = extract ? from : to;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= small.shape[d];
  for (size_t d = dim + 1; d < small.shape.size(); ++d)
    inner *= small.shape[d];
  int64_t n = small.shape[dim], bigN = big.shape[dim];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k) {
      int64_t smallOff = (o * n + k) * inner;
      int64_t bigOff = (o * bigN + at + k) * inner;
      if (extract)
        std::copy_n(from.data.begin() + bigOff, inner,
                    to.data.begin() + smallOff);
      else
        std::copy_n(from.data.begin() + smallOff, inner,
                    to.data.begin() + bigOff);
    }
}

LogicalResult Evaluator::evalConcat(ConcatOp op) {
  InterpTensor result(op.getType().getElementType(), op.getType().getShape());
  int64_t at = 0;
  for (Value v : op.getInputs()) {
    const InterpTensor &in = get(v);
    copyAlongDim(in, result, op.getDim(), at, /*extract=*/false);
    at += in.shape[op.getDim()];
  }
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalSlice(SliceOp op) {
  InterpTensor result(op.getType().getElementType(), op.getType().getShape());
  copyAlongDim(get(op.getInput()), result, op.getDim(), op.getOffset(),
               /*extract=*/true);
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalUpdateSlice(UpdateSliceOp op) {
  const InterpTensor &update = get(op.getUpdate());
  InterpTensor result = get(op.getDest());
  double posValue = get(op.getPosition()).data[0];
  int64_t pos = int64_t(posValue);
  int64_t n = update.shape[op.getDim()];
  int64_t extent = result.shape[op.getDim()];
  if (pos < 0 || pos + n > extent)
    return op.emitOpError() << "position " << pos << " puts the update of " << n
                            << " elements outside [0, " << extent
                            << ") along dim " << op.getDim();
  copyAlongDim(update, result, op.getDim(), pos, /*extract=*/false);
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalGather(GatherOp op) {
  const InterpTensor &table = get(op.getTable());
  const InterpTensor &indices = get(op.getIndices());
  int64_t rows = table.shape[0];
  int64_t rowSize = rows ? table.getNumElements() / rows : 0;
  InterpTensor result(op.getType().getElementType(), op.getType().getShape());
  for (int64_t i = 0, e = indices.getNumElements(); i < e; ++i) {
    double raw = indices.data[i];
    if (!(raw >= 0 && raw < double(rows)))
      return op.emitOpError() << "index " << int64_t(raw) << " at position "
                              << i << " is out of range [0, " << rows << ")";
    int64_t row = int64_t(raw);
    std::copy_n(table.data.begin() + row * rowSize, rowSize,
                result.data.begin() + i * rowSize);
  }
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalConvert(ConvertOp op) {
  InterpTensor result = get(op.getInput());
  Type elt = op.getType().getElementType();
  result.elementType = elt;
  for (double &v : result.data)
    v = roundToElementType(elt, v);
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalConstant(arith::ConstantOp op) {
  auto type = llvm::dyn_cast<RankedTensorType>(op.getType());
  auto dense = llvm::dyn_cast<DenseElementsAttr>(op.getValue());
  if (!type || !dense)
    return op.emitOpError("only dense tensor constants are interpreted");
  Type elt = type.getElementType();
  InterpTensor result(elt, type.getShape());
  int64_t i = 0;
  if (llvm::isa<FloatType>(elt)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.data[i++] = roundToElementType(elt, v.convertToDouble());
  } else if (llvm::isa<IntegerType>(elt)) {
    for (const APInt &v : dense.getValues<APInt>())
      result.data[i++] = elt.isInteger(1) ? double(v.getBoolValue())
                                          : double(v.getSExtValue());
  } else {
    return op.emitOpError("has an element type the interpreter cannot hold");
  }
  set(op.getResult(), std::move(result));
  return success();
}

LogicalResult Evaluator::evalCall(func::CallOp op) {
  auto callee = module.lookupSymbol<func::FuncOp>(op.getCallee());
  if (!callee)
    return op.emitOpError() << "calls unknown function @" << op.getCallee();
  SmallVector<InterpTensor> args;
  for (Value v : op.getOperands())
    args.push_back(get(v));
  Evaluator inner(module);
  inner.depth = depth;
  FailureOr<SmallVector<InterpTensor>> results = inner.call(callee, args);
  if (failed(results))
    return failure();
  for (auto [res, value] : llvm::zip(op.getResults(), *results))
    set(res, std::move(value));
  return success();
}

FailureOr<SmallVector<InterpTensor>>
mlir::tra::interpret(func::FuncOp func, ArrayRef<InterpTensor> args) {
  if (args.size() != func.getNumArguments())
    return func.emitError() << "expected " << func.getNumArguments()
                            << " arguments, got " << args.size(),
           failure();
  for (auto [i, arg] : llvm::enumerate(args)) {
    Type expected = func.getArgumentTypes()[i];
    if (arg.getType() != expected)
      return func.emitError()
                 << "argument '" << getArgumentName(func, i) << "' expects "
                 << expected << ", got " << arg.getType(),
             failure();
  }
  auto module = func->getParentOfType<ModuleOp>();
  Evaluator evaluator(module);
  return evaluator.call(func, args);
}
