//===- ScalarProgram.cpp - Evaluating tra.map bodies ----------------------===//

#include "tra/Dialect/TRA/IR/ScalarProgram.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tra;

enum class ScalarProgram::Opcode : uint8_t {
  Constant,
  Index,
  // Binary float.
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaxF,
  MinF,
  MaxNumF,
  MinNumF,
  PowF,
  // Unary float.
  NegF,
  Exp,
  Exp2,
  Log,
  Log2,
  Sqrt,
  Rsqrt,
  Tanh,
  Sin,
  Cos,
  AbsF,
  Erf,
  Floor,
  Ceil,
  // Integer.
  AddI,
  SubI,
  MulI,
  DivSI,
  RemSI,
  MaxSI,
  MinSI,
  AndI,
  OrI,
  XOrI,
  // Comparisons, selection, casts.
  CmpF,
  CmpI,
  Select,
  Cast,
};

using Opcode = ScalarProgram::Opcode;

FailureOr<ScalarProgram> ScalarProgram::compile(Block &body) {
  ScalarProgram program;
  llvm::DenseMap<Value, unsigned> slots;
  for (BlockArgument arg : body.getArguments())
    slots[arg] = program.numSlots++;
  program.numArgs = body.getNumArguments();

  auto slotOf = [&](Value v) { return slots.lookup(v); };

  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || op.getNumRegions() != 0)
      return op.emitOpError("is not supported in a tra.map body"), failure();
    for (Value operand : op.getOperands())
      if (!slots.count(operand))
        return op.emitOpError("uses a value defined outside the tra.map body"),
               failure();
    Instr instr;
    instr.type = op.getResult(0).getType();
    if (op.getNumOperands() > 0)
      instr.lhs = slotOf(op.getOperand(0));
    if (op.getNumOperands() > 1)
      instr.rhs = slotOf(op.getOperand(1));
    if (op.getNumOperands() > 2)
      instr.third = slotOf(op.getOperand(2));

    std::optional<Opcode> opcode =
        llvm::TypeSwitch<Operation *, std::optional<Opcode>>(&op)
            .Case([&](arith::ConstantOp c) -> std::optional<Opcode> {
              if (auto f = llvm::dyn_cast<FloatAttr>(c.getValue())) {
                instr.constant = f.getValueAsDouble();
                return Opcode::Constant;
              }
              if (auto i = llvm::dyn_cast<IntegerAttr>(c.getValue())) {
                instr.constant = i.getType().isInteger(1)
                                     ? double(i.getValue().getBoolValue())
                                     : double(i.getValue().getSExtValue());
                return Opcode::Constant;
              }
              return std::nullopt;
            })
            .Case([&](IndexOp i) {
              instr.dim = i.getDim();
              program.readsIndex = true;
              return Opcode::Index;
            })
            .Case([](arith::AddFOp) { return Opcode::AddF; })
            .Case([](arith::SubFOp) { return Opcode::SubF; })
            .Case([](arith::MulFOp) { return Opcode::MulF; })
            .Case([](arith::DivFOp) { return Opcode::DivF; })
            .Case([](arith::RemFOp) { return Opcode::RemF; })
            .Case([](arith::MaximumFOp) { return Opcode::MaxF; })
            .Case([](arith::MinimumFOp) { return Opcode::MinF; })
            .Case([](arith::MaxNumFOp) { return Opcode::MaxNumF; })
            .Case([](arith::MinNumFOp) { return Opcode::MinNumF; })
            .Case([](math::PowFOp) { return Opcode::PowF; })
            .Case([](arith::NegFOp) { return Opcode::NegF; })
            .Case([](math::ExpOp) { return Opcode::Exp; })
            .Case([](math::Exp2Op) { return Opcode::Exp2; })
            .Case([](math::LogOp) { return Opcode::Log; })
            .Case([](math::Log2Op) { return Opcode::Log2; })
            .Case([](math::SqrtOp) { return Opcode::Sqrt; })
            .Case([](math::RsqrtOp) { return Opcode::Rsqrt; })
            .Case([](math::TanhOp) { return Opcode::Tanh; })
            .Case([](math::SinOp) { return Opcode::Sin; })
            .Case([](math::CosOp) { return Opcode::Cos; })
            .Case([](math::AbsFOp) { return Opcode::AbsF; })
            .Case([](math::ErfOp) { return Opcode::Erf; })
            .Case([](math::FloorOp) { return Opcode::Floor; })
            .Case([](math::CeilOp) { return Opcode::Ceil; })
            .Case([](arith::AddIOp) { return Opcode::AddI; })
            .Case([](arith::SubIOp) { return Opcode::SubI; })
            .Case([](arith::MulIOp) { return Opcode::MulI; })
            .Case([](arith::DivSIOp) { return Opcode::DivSI; })
            .Case([](arith::RemSIOp) { return Opcode::RemSI; })
            .Case([](arith::MaxSIOp) { return Opcode::MaxSI; })
            .Case([](arith::MinSIOp) { return Opcode::MinSI; })
            .Case([](arith::AndIOp) { return Opcode::AndI; })
            .Case([](arith::OrIOp) { return Opcode::OrI; })
            .Case([](arith::XOrIOp) { return Opcode::XOrI; })
            .Case([&](arith::CmpFOp c) {
              instr.predicate = uint8_t(c.getPredicate());
              return Opcode::CmpF;
            })
            .Case([&](arith::CmpIOp c) {
              instr.predicate = uint8_t(c.getPredicate());
              return Opcode::CmpI;
            })
            .Case([](arith::SelectOp) { return Opcode::Select; })
            .Case<arith::IndexCastOp, arith::SIToFPOp, arith::UIToFPOp,
                  arith::FPToSIOp, arith::ExtFOp, arith::TruncFOp,
                  arith::ExtSIOp, arith::TruncIOp>(
                [](Operation *) { return Opcode::Cast; })
            .Default([](Operation *) { return std::nullopt; });
    if (!opcode)
      return op.emitOpError("is not supported in a tra.map body"), failure();
    instr.opcode = *opcode;
    instr.result = program.numSlots++;
    slots[op.getResult(0)] = instr.result;
    program.instrs.push_back(instr);
  }

  Operation *terminator = body.getTerminator();
  if (!terminator || terminator->getNumOperands() != 1)
    return failure();
  program.resultSlot = slotOf(terminator->getOperand(0));
  return program;
}

/// double -> int64 without undefined behaviour for NaN or out-of-range values.
static int64_t toInt(double x) {
  if (std::isnan(x))
    return 0;
  if (x >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (x <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return int64_t(x);
}

/// Two's complement wrap-around arithmetic, as arith defines it.
static double wrap(uint64_t x) { return double(int64_t(x)); }

static bool cmpF(arith::CmpFPredicate p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

static bool cmpI(arith::CmpIPredicate p, double a, double b) {
  using P = arith::CmpIPredicate;
  int64_t ia = toInt(a), ib = toInt(b);
  auto ua = uint64_t(ia), ub = uint64_t(ib);
  switch (p) {
  case P::eq:
    return ia == ib;
  case P::ne:
    return ia != ib;
  case P::slt:
    return ia < ib;
  case P::sle:
    return ia <= ib;
  case P::sgt:
    return ia > ib;
  case P::sge:
    return ia >= ib;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

double ScalarProgram::run(ArrayRef<double> args,
                          ArrayRef<int64_t> index) const {
  llvm::SmallVector<double, 32> v(numSlots, 0.0);
  for (unsigned i = 0; i < numArgs; ++i)
    v[i] = args[i];
  for (const Instr &in : instrs) {
    double a = v[in.lhs], b = v[in.rhs];
    double r = 0.0;
    switch (in.opcode) {
    case Opcode::Constant:
      r = in.constant;
      break;
    case Opcode::Index:
      r = double(index[in.dim]);
      break;
    case Opcode::AddF:
      r = a + b;
      break;
    case Opcode::SubF:
      r = a - b;
      break;
    case Opcode::MulF:
      r = a * b;
      break;
    case Opcode::DivF:
      r = a / b;
      break;
    case Opcode::RemF:
      r = std::fmod(a, b);
      break;
    case Opcode::MaxF:
      r = (std::isnan(a) || std::isnan(b)) ? std::nan("") : std::max(a, b);
      break;
    case Opcode::MinF:
      r = (std::isnan(a) || std::isnan(b)) ? std::nan("") : std::min(a, b);
      break;
    case Opcode::MaxNumF:
      r = std::fmax(a, b);
      break;
    case Opcode::MinNumF:
      r = std::fmin(a, b);
      break;
    case Opcode::PowF:
      r = std::pow(a, b);
      break;
    case Opcode::NegF:
      r = -a;
      break;
    case Opcode::Exp:
      r = std::exp(a);
      break;
    case Opcode::Exp2:
      r = std::exp2(a);
      break;
    case Opcode::Log:
      r = std::log(a);
      break;
    case Opcode::Log2:
      r = std::log2(a);
      break;
    case Opcode::Sqrt:
      r = std::sqrt(a);
      break;
    case Opcode::Rsqrt:
      r = 1.0 / std::sqrt(a);
      break;
    case Opcode::Tanh:
      r = std::tanh(a);
      break;
    case Opcode::Sin:
      r = std::sin(a);
      break;
    case Opcode::Cos:
      r = std::cos(a);
      break;
    case Opcode::AbsF:
      r = std::fabs(a);
      break;
    case Opcode::Erf:
      r = std::erf(a);
      break;
    case Opcode::Floor:
      r = std::floor(a);
      break;
    case Opcode::Ceil:
      r = std::ceil(a);
      break;
    case Opcode::AddI:
      r = wrap(uint64_t(toInt(a)) + uint64_t(toInt(b)));
      break;
    case Opcode::SubI:
      r = wrap(uint64_t(toInt(a)) - uint64_t(toInt(b)));
      break;
    case Opcode::MulI:
      r = wrap(uint64_t(toInt(a)) * uint64_t(toInt(b)));
      break;
    case Opcode::DivSI: {
      int64_t x = toInt(a), y = toInt(b);
      // Division by zero and INT64_MIN / -1 are undefined in arith; yield 0.
      r = (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min()))
              ? 0.0
              : double(x / y);
      break;
    }
    case Opcode::RemSI: {
      int64_t x = toInt(a), y = toInt(b);
      r = (y == 0 || y == -1) ? 0.0 : double(x % y);
      break;
    }
    case Opcode::MaxSI:
      r = double(std::max(toInt(a), toInt(b)));
      break;
    case Opcode::MinSI:
      r = double(std::min(toInt(a), toInt(b)));
      break;
    case Opcode::AndI:
      r = double(toInt(a) & toInt(b));
      break;
    case Opcode::OrI:
      r = double(toInt(a) | toInt(b));
      break;
    case Opcode::XOrI:
      r = double(toInt(a) ^ toInt(b));
      break;
    case Opcode::CmpF:
      r = cmpF(arith::CmpFPredicate(in.predicate), a, b);
      break;
    case Opcode::CmpI:
      r = cmpI(arith::CmpIPredicate(in.predicate), a, b);
      break;
    case Opcode::Select:
      r = a != 0.0 ? b : v[in.third];
      break;
    case Opcode::Cast:
      r = a;
      break;
    }
    v[in.result] = roundToElementType(in.type, r);
  }
  return v[resultSlot];
}
