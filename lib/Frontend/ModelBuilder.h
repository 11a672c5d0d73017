//===- ModelBuilder.h - Helpers for writing LLaMA in tra --------*- C++ -*-===//
//
// Internal to lib/Frontend: the builder helpers and model pieces shared by
// the inference step (Llama.cpp) and the training loss (LlamaTraining.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_LIB_FRONTEND_MODELBUILDER_H
#define TRA_LIB_FRONTEND_MODELBUILDER_H

#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Runtime/Llama.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir {
namespace tra {
namespace frontend {

/// Small helpers over OpBuilder for writing the model.
class ModelBuilder {
public:
  ModelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }

  Value einsum(StringRef spec, CombinerKind combiner, ValueRange inputs,
               ArrayRef<int64_t> shape,
               AggregationKind agg = AggregationKind::sum) {
    return EinsumOp::create(b, loc, f32(shape), spec, combiner, agg, inputs);
  }

  using BodyFn = std::function<Value(OpBuilder &, Location, ValueRange)>;
  Value map(StringRef spec, ValueRange inputs, RankedTensorType type,
            const BodyFn &body) {
    return createMap(b, loc, type, inputs, spec, body);
  }

  /// x [.., d] times the weight w by `spec`, an f32 result. A 16-bit w
  /// multiplies x rounded to its type (once per x and type), accumulating in
  /// f32. An i8 w is quantised in blocks (its scales in `q8Scales`):
  /// see projectQ8.
  Value project(StringRef spec, Value x, Value w, ArrayRef<int64_t> shape) {
    Type wt = llvm::cast<RankedTensorType>(w.getType()).getElementType();
    if (wt.isInteger(8))
      return projectQ8(spec, x, w, shape);
    if (!wt.isF32()) {
      Value &rounded = roundedActivations[{x, wt}];
      if (!rounded)
        rounded = convert(x, wt);
      x = rounded;
    }
    return einsum(spec, CombinerKind::mul, {x, w}, shape);
  }

  /// `project` for a weight w [N, K] of i8 values with f16 scales [N,
  /// K / 32] (`q8Scales[w]`), the contraction over the last dimension of x
  /// and w (every projection of the model: "sd,ed->se"): x and w are seen
  /// as blocks [.., K / 32, 32] and "sBJ,eBJ,eB->se" multiplies x (f32, not
  /// rounded) by the values and their block's scale, summing in f32.
  Value projectQ8(StringRef spec, Value x, Value w, ArrayRef<int64_t> shape) {
    auto [ins, out] = spec.split("->");
    auto [xs, ws] = ins.split(',');
    // Letters the spec does not use, for the block and the value in it.
    SmallVector<char, 2> fresh;
    for (char c = 'A'; c <= 'Z' && fresh.size() < 2; ++c)
      if (!spec.contains(c))
        fresh.push_back(c);
    std::string block(1, fresh[0]), value(1, fresh[1]);
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    auto wType = llvm::cast<RankedTensorType>(w.getType());
    auto blocked = [&](ArrayRef<int64_t> s) {
      SmallVector<int64_t> r(s.drop_back());
      r.push_back(s.back() / ::tra::rt::kQ8BlockValues);
      r.push_back(::tra::rt::kQ8BlockValues);
      return r;
    };
    Value x3 = reshape(x, blocked(xType.getShape()));
    Value w3 = reshape(w, blocked(wType.getShape()));
    std::string q8Spec = xs.drop_back().str() + block + value + "," +
                         ws.drop_back().str() + block + value + "," +
                         ws.drop_back().str() + block + "->" + out.str();
    return einsum(q8Spec, CombinerKind::mul, {x3, w3, q8Scales.lookup(w)},
                  shape);
  }

  /// Rows [S, K] of an i8 weight table with f16 block scales (gathered
  /// alike, [S, K / 32]) as f32 values.
  Value dequantiseRows(Value rows, Value scales) {
    auto type = llvm::cast<RankedTensorType>(rows.getType());
    int64_t s = type.getDimSize(0), k = type.getDimSize(1),
            blocks = k / ::tra::rt::kQ8BlockValues;
    Value r3 = reshape(rows, {s, blocks, ::tra::rt::kQ8BlockValues});
    Value v = einsum("sbj,sb->sbj", CombinerKind::mul, {r3, scales},
                     {s, blocks, ::tra::rt::kQ8BlockValues});
    return reshape(v, {s, k});
  }

  /// v with element type `type`.
  Value convert(Value v, Type type) {
    auto vt = llvm::cast<RankedTensorType>(v.getType());
    if (vt.getElementType() == type)
      return v;
    return ConvertOp::create(b, loc, vt.clone(type), v);
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    return ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v);
  }

  Value constF32(OpBuilder &ib, double v) {
    return arith::ConstantOp::create(ib, loc, ib.getF32FloatAttr(v));
  }

  OpBuilder &b;
  Location loc;
  llvm::DenseMap<std::pair<Value, Type>, Value> roundedActivations;
  /// The f16 block scales of each i8 (Q8_0) weight.
  llvm::DenseMap<Value, Value> q8Scales;
};

/// `v` (a scalar of a map body) widened to f32.
inline Value widenScalar(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// x * rsqrt(mean(x^2) + eps) * w over the last dim of x, whose other
/// dimensions are indexed by `rows` (letters other than 'd') with extents
/// `rowShape`: "s" for [S, D], "bs" for [B, S, D].
inline Value rmsNorm(ModelBuilder &m, Value x, Value w, StringRef rows,
                     ArrayRef<int64_t> rowShape, int64_t d, double eps) {
  std::string r = rows.str();
  Value ss = m.einsum(r + "d->" + r, CombinerKind::square, {x}, rowShape);
  SmallVector<int64_t> shape(rowShape);
  shape.push_back(d);
  return m.map(
      r + "d," + r + ",d->" + r + "d", {x, ss, w}, m.f32(shape),
      [&](OpBuilder &ib, Location loc, ValueRange a) -> Value {
        Value mean =
            arith::DivFOp::create(ib, loc, a[1], m.constF32(ib, double(d)));
        Value t = arith::AddFOp::create(ib, loc, mean, m.constF32(ib, eps));
        Value rs = math::RsqrtOp::create(ib, loc, t);
        Value xn = arith::MulFOp::create(ib, loc, a[0], rs);
        return arith::MulFOp::create(ib, loc, xn, widenScalar(ib, loc, a[2]));
      });
}

/// silu(a) * b: SwiGLU's gate, as a map body.
inline Value swiGluGate(ModelBuilder &m, OpBuilder &ib, Location loc, Value a,
                        Value b) {
  Value na = arith::NegFOp::create(ib, loc, a);
  Value en = math::ExpOp::create(ib, loc, na);
  Value den = arith::AddFOp::create(ib, loc, m.constF32(ib, 1.0), en);
  Value silu = arith::DivFOp::create(ib, loc, a, den);
  return arith::MulFOp::create(ib, loc, silu, b);
}

/// The 2x2 rotation of every (position, pair) from the rotary tables'
/// rows cos, sin [S, P]: [S, P, 2, 2] = [[cos, -sin], [sin, cos]].
inline Value rotaryMatrices(ModelBuilder &m, Value cos, Value sin, int64_t s,
                            int64_t p) {
  return m.map("sp,sp->sptu", {cos, sin}, m.f32({s, p, 2, 2}),
               [&](OpBuilder &ib, Location l, ValueRange a) -> Value {
                 Value t = IndexOp::create(ib, l, 2);
                 Value u = IndexOp::create(ib, l, 3);
                 Value zero = arith::ConstantIndexOp::create(ib, l, 0);
                 Value diag = arith::CmpIOp::create(
                     ib, l, arith::CmpIPredicate::eq, t, u);
                 Value first = arith::CmpIOp::create(
                     ib, l, arith::CmpIPredicate::eq, t, zero);
                 Value ns = arith::NegFOp::create(ib, l, a[1]);
                 Value off = arith::SelectOp::create(ib, l, first, ns, a[1]);
                 return arith::SelectOp::create(ib, l, diag, a[0], off);
               });
}

/// Layer weights, in llamaWeightShapes order.
struct LayerWeights {
  Value attnNorm, wq, wk, wv, wo, ffnNorm, w1, w2, w3;

  /// The weights of one layer: the arguments of `entry` from `next` on
  /// (advanced past them).
  static LayerWeights take(Block *entry, unsigned &next) {
    LayerWeights lw;
    for (Value *slot : {&lw.attnNorm, &lw.wq, &lw.wk, &lw.wv, &lw.wo,
                        &lw.ffnNorm, &lw.w1, &lw.w2, &lw.w3})
      *slot = entry->getArgument(next++);
    return lw;
  }
};

/// The arguments of a model function being written, each with its
/// `tra.name`.
struct ModelSignature {
  SmallVector<Type> types;
  SmallVector<std::string> names;

  void add(std::string name, Type type) {
    names.push_back(std::move(name));
    types.push_back(type);
  }

  /// Creates the function `name` of these arguments and `results` (named
  /// `resultNames`) with an entry block, and sets `b` at its start.
  func::FuncOp create(OpBuilder &b, Location loc, StringRef name,
                      ArrayRef<Type> results,
                      ArrayRef<std::string> resultNames) const {
    auto func =
        func::FuncOp::create(b, loc, name, b.getFunctionType(types, results));
    for (auto [i, n] : llvm::enumerate(names))
      func.setArgAttr(i, "tra.name", b.getStringAttr(n));
    for (auto [i, n] : llvm::enumerate(resultNames))
      func.setResultAttr(i, "tra.name", b.getStringAttr(n));
    b.setInsertionPointToStart(func.addEntryBlock());
    return func;
  }
};

/// A module for a model: the dialects loaded, `b` at the module's end.
inline OwningOpRef<ModuleOp> createModelModule(MLIRContext *context,
                                               OpBuilder &b) {
  context->loadDialect<TRADialect, func::FuncDialect, arith::ArithDialect,
                       math::MathDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(context));
  b.setInsertionPointToEnd(module->getBody());
  return module;
}

} // namespace frontend
} // namespace tra
} // namespace mlir

#endif // TRA_LIB_FRONTEND_MODELBUILDER_H
