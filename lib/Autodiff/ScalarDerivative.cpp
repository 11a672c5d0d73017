//===- ScalarDerivative.cpp - Derivatives of scalar code ------------------===//
//
// The scalar half of autodiff: the partial derivatives of einsum combiners,
// and the forward-mode derivative of a tra.map body (arith and math ops),
// both written as scalar arith/math code for a new tra.map body.
//
// Ties follow PyTorch: where max/min (or the maximum/minimum of two values)
// is reached by several operands, the gradient is split evenly among them;
// abs has derivative 0 at 0.
//
//===----------------------------------------------------------------------===//

#include "AdjointBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::autodiff;

namespace {
/// Scalar arithmetic at one insertion point, on values of one float type.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value c(Type t, double v) { return scalarConstant(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  /// 1 where x > 0, -1 where x < 0, 0 at 0.
  Value sign(Value x) {
    Type t = x.getType();
    Value zero = c(t, 0.0);
    return select(
        cmp(arith::CmpFPredicate::OGT, x, zero), c(t, 1.0),
        select(cmp(arith::CmpFPredicate::OLT, x, zero), c(t, -1.0), zero));
  }
  Value sigmoid(Value x) {
    Type t = x.getType();
    return div(c(t, 1.0), add(c(t, 1.0), exp(neg(x))));
  }
  /// The share of the gradient that operand `k` of an n-ary max/min gets:
  /// 1/(number of operands equal to the extremum) where x_k is one of them.
  Value extremumShare(ValueRange xs, unsigned k, bool isMax) {
    Type t = xs[0].getType();
    if (xs.size() == 1)
      return c(t, 1.0);
    Value m = xs[0];
    for (Value x : xs.drop_front())
      m = isMax ? Value(arith::MaximumFOp::create(b, loc, m, x))
                : Value(arith::MinimumFOp::create(b, loc, m, x));
    Value count = c(t, 0.0);
    for (Value x : xs)
      count = add(count, select(cmp(arith::CmpFPredicate::OEQ, x, m), c(t, 1.0),
                                c(t, 0.0)));
    return select(cmp(arith::CmpFPredicate::OEQ, xs[k], m),
                  div(c(t, 1.0), count), c(t, 0.0));
  }
};
} // namespace

Value mlir::tra::autodiff::buildCombinerPartial(OpBuilder &b, Location loc,
                                                CombinerKind kind,
                                                ValueRange xs, unsigned k) {
  Scalar s{b, loc};
  Type t = xs[0].getType();
  Value x = xs[k];
  switch (kind) {
  case CombinerKind::mul: {
    Value r = s.c(t, 1.0);
    for (auto [j, v] : llvm::enumerate(xs))
      if (j != k)
        r = s.mul(r, v);
    return r;
  }
  case CombinerKind::add:
  case CombinerKind::id:
    return s.c(t, 1.0);
  case CombinerKind::max:
    return s.extremumShare(xs, k, /*isMax=*/true);
  case CombinerKind::min:
    return s.extremumShare(xs, k, /*isMax=*/false);
  case CombinerKind::sub:
    return s.c(t, k == 0 ? 1.0 : -1.0);
  case CombinerKind::div:
    // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2.
    if (k == 0)
      return s.div(s.c(t, 1.0), xs[1]);
    return s.neg(s.div(s.div(xs[0], xs[1]), xs[1]));
  case CombinerKind::neg:
    return s.c(t, -1.0);
  case CombinerKind::exp:
    return s.exp(x);
  case CombinerKind::silu: {
    // silu = x sigmoid(x); silu' = sigmoid(x) (1 + x (1 - sigmoid(x))).
    Value sg = s.sigmoid(x);
    return s.mul(sg, s.add(s.c(t, 1.0), s.mul(x, s.sub(s.c(t, 1.0), sg))));
  }
  case CombinerKind::rsqrt:
    // d x^-1/2 = -1/2 x^-1/2 / x.
    return s.mul(s.c(t, -0.5),
                 s.div(math::RsqrtOp::create(b, loc, x).getResult(), x));
  case CombinerKind::sqrt:
    return s.div(s.c(t, 0.5), math::SqrtOp::create(b, loc, x));
  case CombinerKind::square:
    return s.mul(s.c(t, 2.0), x);
  case CombinerKind::tanh: {
    Value th = math::TanhOp::create(b, loc, x);
    return s.sub(s.c(t, 1.0), s.mul(th, th));
  }
  case CombinerKind::abs:
    return s.sign(x);
  case CombinerKind::recip:
    return s.neg(s.div(s.c(t, 1.0), s.mul(x, x)));
  case CombinerKind::relu:
    return s.select(s.cmp(arith::CmpFPredicate::OGT, x, s.c(t, 0.0)),
                    s.c(t, 1.0), s.c(t, 0.0));
  case CombinerKind::sigmoid: {
    Value sg = s.sigmoid(x);
    return s.mul(sg, s.sub(s.c(t, 1.0), sg));
  }
  }
  llvm_unreachable("unknown combiner");
}

FailureOr<Value> mlir::tra::autodiff::buildBodyTangent(OpBuilder &b,
                                                       Block &body,
                                                       IRMapping &mapping,
                                                       unsigned argIndex) {
  BlockArgument seed = body.getArgument(argIndex);
  if (!llvm::isa<FloatType>(seed.getType()))
    return Value();
  // Tangents of the original body's values; absent means zero.
  llvm::DenseMap<Value, Value> tangent;
  Location seedLoc = body.getParentOp()->getLoc();
  tangent[seed] = scalarConstant(b, seedLoc, seed.getType(), 1.0);

  for (Operation &op : body.without_terminator()) {
    Operation *primal = b.clone(op, mapping);
    bool active = llvm::any_of(op.getOperands(),
                               [&](Value v) { return tangent.count(v); });
    if (!active)
      continue;
    Scalar s{b, op.getLoc()};
    Type t = op.getNumResults() == 1 ? op.getResult(0).getType() : Type();
    auto P = [&](Value v) { return mapping.lookup(v); };
    // The tangent of v, zero of v's type when it has none.
    auto T = [&](Value v) -> Value {
      if (Value d = tangent.lookup(v))
        return d;
      return s.c(v.getType(), 0.0);
    };
    Value r = primal->getNumResults() == 1 ? primal->getResult(0) : Value();
    bool differentiable = true;
    Value d =
        llvm::TypeSwitch<Operation *, Value>(&op)
            .Case([&](arith::AddFOp o) {
              return s.add(T(o.getLhs()), T(o.getRhs()));
            })
            .Case([&](arith::SubFOp o) {
              return s.sub(T(o.getLhs()), T(o.getRhs()));
            })
            .Case([&](arith::MulFOp o) {
              return s.add(s.mul(T(o.getLhs()), P(o.getRhs())),
                           s.mul(P(o.getLhs()), T(o.getRhs())));
            })
            .Case([&](arith::DivFOp o) {
              // (da - (a/b) db) / b
              return s.div(s.sub(T(o.getLhs()), s.mul(r, T(o.getRhs()))),
                           P(o.getRhs()));
            })
            .Case([&](arith::RemFOp o) {
              // a - b trunc(a/b): da - db trunc(a/b).
              Value q = s.div(P(o.getLhs()), P(o.getRhs()));
              Value tq =
                  s.select(s.cmp(arith::CmpFPredicate::OGE, q, s.c(t, 0.0)),
                           math::FloorOp::create(b, o.getLoc(), q),
                           math::CeilOp::create(b, o.getLoc(), q));
              return s.sub(T(o.getLhs()), s.mul(T(o.getRhs()), tq));
            })
            .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                  arith::MinNumFOp>([&](Operation *o) {
              bool isMax = llvm::isa<arith::MaximumFOp, arith::MaxNumFOp>(o);
              Value x = P(o->getOperand(0)), y = P(o->getOperand(1));
              Value dx = T(o->getOperand(0)), dy = T(o->getOperand(1));
              auto first =
                  isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
              auto second =
                  isMax ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT;
              Value half = s.mul(s.c(t, 0.5), s.add(dx, dy));
              return s.select(s.cmp(first, x, y), dx,
                              s.select(s.cmp(second, x, y), dy, half));
            })
            .Case([&](math::PowFOp o) {
              Value a = P(o.getLhs()), e = P(o.getRhs());
              // e a^(e-1) da + a^e log(a) de (the second term only
              // where the exponent varies: log(a) is NaN for a < 0).
              Value am1 =
                  math::PowFOp::create(b, o.getLoc(), a, s.sub(e, s.c(t, 1.0)));
              Value d1 = s.mul(s.mul(e, am1), T(o.getLhs()));
              if (!tangent.count(o.getRhs()))
                return d1;
              Value la = math::LogOp::create(b, o.getLoc(), a);
              return s.add(d1, s.mul(s.mul(r, la), T(o.getRhs())));
            })
            .Case([&](arith::NegFOp o) { return s.neg(T(o.getOperand())); })
            .Case([&](math::ExpOp o) { return s.mul(r, T(o.getOperand())); })
            .Case([&](math::Exp2Op o) {
              return s.mul(s.mul(r, s.c(t, M_LN2)), T(o.getOperand()));
            })
            .Case([&](math::LogOp o) {
              return s.div(T(o.getOperand()), P(o.getOperand()));
            })
            .Case([&](math::Log2Op o) {
              return s.div(T(o.getOperand()),
                           s.mul(P(o.getOperand()), s.c(t, M_LN2)));
            })
            .Case([&](math::SqrtOp o) {
              return s.div(s.mul(s.c(t, 0.5), T(o.getOperand())), r);
            })
            .Case([&](math::RsqrtOp o) {
              return s.mul(s.mul(s.c(t, -0.5), s.div(r, P(o.getOperand()))),
                           T(o.getOperand()));
            })
            .Case([&](math::TanhOp o) {
              return s.mul(s.sub(s.c(t, 1.0), s.mul(r, r)), T(o.getOperand()));
            })
            .Case([&](math::SinOp o) {
              return s.mul(
                  math::CosOp::create(b, o.getLoc(), P(o.getOperand())),
                  T(o.getOperand()));
            })
            .Case([&](math::CosOp o) {
              return s.neg(
                  s.mul(math::SinOp::create(b, o.getLoc(), P(o.getOperand())),
                        T(o.getOperand())));
            })
            .Case([&](math::AbsFOp o) {
              return s.mul(s.sign(P(o.getOperand())), T(o.getOperand()));
            })
            .Case([&](math::ErfOp o) {
              Value x = P(o.getOperand());
              Value g = s.exp(s.neg(s.mul(x, x)));
              return s.mul(s.mul(s.c(t, 2.0 / std::sqrt(M_PI)), g),
                           T(o.getOperand()));
            })
            .Case<math::FloorOp, math::CeilOp, arith::CmpFOp, arith::FPToSIOp,
                  arith::FPToUIOp>(
                // Piecewise constant, or not a float.
                [&](Operation *) { return Value(); })
            .Case([&](arith::SelectOp o) -> Value {
              if (!llvm::isa<FloatType>(t))
                return Value();
              return s.select(P(o.getCondition()), T(o.getTrueValue()),
                              T(o.getFalseValue()));
            })
            .Case([&](arith::ExtFOp o) {
              return arith::ExtFOp::create(b, o.getLoc(), t, T(o.getIn()));
            })
            .Case([&](arith::TruncFOp o) {
              return arith::TruncFOp::create(b, o.getLoc(), t, T(o.getIn()));
            })
            .Default([&](Operation *) {
              differentiable = false;
              return Value();
            });
    if (!differentiable)
      return op.emitOpError()
                 << "has no derivative in a tra.map body (tra-autodiff)",
             failure();
    if (d)
      tangent[op.getResult(0)] = d;
  }
  Value yielded = body.getTerminator()->getOperand(0);
  return tangent.lookup(yielded);
}
