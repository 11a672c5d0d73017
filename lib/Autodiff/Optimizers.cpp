//===- Optimizers.cpp - Optimizer update rules in tra ops -----------------===//
//
// PyTorch's definitions, per element, with the learning rate, the step
// number and the clipping coefficient as 0-d run-time tensors:
//
//   SGD:   g' = c g + wd p;  b' = mu b + g' (momentum);
//          p' = p - lr (nesterov ? g' + mu b' : b')   (mu = 0: p - lr g')
//   AdamW: m' = b1 m + (1 - b1) c g;  v' = b2 v + (1 - b2) (c g)^2;
//          p' = p (1 - lr wd) - lr / (1 - b1^t) * m'
//                 / (sqrt(v') / sqrt(1 - b2^t) + eps)
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

namespace {
/// Scalar arithmetic in a map body, in one float type.
struct Arith {
  OpBuilder &b;
  Location l;
  Type t;
  Value c(double v) { return scalarConstant(b, l, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  /// `x` (a scalar argument: f32, or f64 for the norm of f64 parameters)
  /// in this type.
  Value cast(Value x) {
    unsigned from = x.getType().getIntOrFloatBitWidth();
    unsigned to = t.getIntOrFloatBitWidth();
    if (from == to)
      return x;
    if (from < to)
      return arith::ExtFOp::create(b, l, t, x);
    return arith::TruncFOp::create(b, l, t, x);
  }
};

/// A map over the parameter's shape of `tensors` (that shape) and `scalars`
/// (0-d), whose body `fn` gets the arguments as an Arith and the values.
Value elementwise(AdjointBuilder &ab, ArrayRef<Value> tensors,
                  ArrayRef<Value> scalars,
                  const std::function<Value(Arith &, ValueRange)> &fn) {
  auto type = llvm::cast<RankedTensorType>(tensors[0].getType());
  std::string term;
  for (int64_t i = 0; i < type.getRank(); ++i)
    term.push_back(char('a' + i));
  std::string spec;
  SmallVector<Value> inputs;
  for (Value v : tensors) {
    spec += (spec.empty() ? "" : ",") + term;
    inputs.push_back(v);
  }
  for (Value v : scalars) {
    spec += ",";
    inputs.push_back(v);
  }
  spec += "->" + term;
  return ab.map(spec, inputs, type,
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Arith s{b, l, type.getElementType()};
                  SmallVector<Value> args;
                  for (auto [i, v] : llvm::enumerate(a))
                    args.push_back(i < tensors.size() ? v : s.cast(v));
                  return fn(s, args);
                });
}
} // namespace

Value mlir::tra::autodiff::clipCoefficient(AdjointBuilder &ab, Value norm,
                                           double clipNorm) {
  return ab.map("", {norm}, llvm::cast<RankedTensorType>(norm.getType()),
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Arith s{b, l, a[0].getType()};
                  Value f = s.div(s.c(clipNorm), s.add(a[0], s.c(1e-6)));
                  return arith::MinimumFOp::create(b, l, f, s.c(1.0));
                });
}

ParameterUpdate mlir::tra::autodiff::updateParameter(
    AdjointBuilder &ab, const OptimizerOptions &o, Value param, Value grad,
    ArrayRef<Value> state, Value coef, Value lr, Value step) {
  // The (clipped) gradient's element: g, or g * c with c the last scalar.
  SmallVector<Value> gradScalars;
  if (coef)
    gradScalars.push_back(coef);
  auto clipped = [&](Arith &s, Value g, ValueRange a) -> Value {
    return coef ? s.mul(g, a.back()) : g;
  };
  ParameterUpdate u;
  if (o.kind == OptimizerKind::adamw) {
    Value m = elementwise(ab, {state[0], grad}, gradScalars,
                          [&](Arith &s, ValueRange a) -> Value {
                            Value g = clipped(s, a[1], a);
                            return s.add(s.mul(s.c(o.beta1), a[0]),
                                         s.mul(s.c(1.0 - o.beta1), g));
                          });
    Value v =
        elementwise(ab, {state[1], grad}, gradScalars,
                    [&](Arith &s, ValueRange a) -> Value {
                      Value g = clipped(s, a[1], a);
                      return s.add(s.mul(s.c(o.beta2), a[0]),
                                   s.mul(s.c(1.0 - o.beta2), s.mul(g, g)));
                    });
    u.param = elementwise(
        ab, {param, m, v}, {lr, step}, [&](Arith &s, ValueRange a) -> Value {
          Value p = a[0], mm = a[1], vv = a[2], rate = a[3], t = a[4];
          Value decayed =
              s.mul(p, s.sub(s.c(1.0), s.mul(rate, s.c(o.weightDecay))));
          Value bc1 =
              s.sub(s.c(1.0), math::PowFOp::create(s.b, s.l, s.c(o.beta1), t));
          Value bc2 =
              s.sub(s.c(1.0), math::PowFOp::create(s.b, s.l, s.c(o.beta2), t));
          Value denom = s.add(s.div(math::SqrtOp::create(s.b, s.l, vv),
                                    math::SqrtOp::create(s.b, s.l, bc2)),
                              s.c(o.eps));
          return s.sub(decayed, s.mul(s.div(rate, bc1), s.div(mm, denom)));
        });
    u.state = {m, v};
    return u;
  }
  // SGD: g' = c g + wd p.
  auto effective = [&](Arith &s, Value g, Value p, ValueRange a) -> Value {
    return s.add(clipped(s, g, a), s.mul(s.c(o.weightDecay), p));
  };
  Value buf;
  if (o.momentum != 0.0) {
    buf = elementwise(ab, {state[0], grad, param}, gradScalars,
                      [&](Arith &s, ValueRange a) -> Value {
                        return s.add(s.mul(s.c(o.momentum), a[0]),
                                     effective(s, a[1], a[2], a));
                      });
    u.state = {buf};
  }
  SmallVector<Value> tensors{param, grad};
  if (buf)
    tensors.push_back(buf);
  SmallVector<Value> scalars(gradScalars);
  scalars.insert(scalars.begin(), lr); // lr first, the coefficient last
  u.param =
      elementwise(ab, tensors, scalars, [&](Arith &s, ValueRange a) -> Value {
        Value p = a[0], rate = a[tensors.size()];
        Value g = effective(s, a[1], p, a);
        Value d = g;
        if (buf)
          d = o.nesterov ? s.add(g, s.mul(s.c(o.momentum), a[2])) : a[2];
        return s.sub(p, s.mul(rate, d));
      });
  return u;
}
