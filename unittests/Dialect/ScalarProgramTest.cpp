//===- ScalarProgramTest.cpp - Scalar body evaluation and rounding --------===//

#include "tra/Dialect/TRA/IR/ScalarProgram.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tra;

namespace {

class ScalarProgramTest : public ::testing::Test {
protected:
  ScalarProgramTest() {
    context.loadDialect<TRADialect, func::FuncDialect, arith::ArithDialect,
                        math::MathDialect>();
  }

  /// Parses `ir` and returns the body of its first tra.map.
  Block *mapBody(llvm::StringRef ir) {
    module = parseSourceString<ModuleOp>(ir, &context);
    if (!module)
      return nullptr;
    MapOp map;
    module->walk([&](MapOp m) { map = m; });
    return map ? &map.getBody().front() : nullptr;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ScalarProgramTest, SiluTimesGate) {
  Block *body = mapBody(R"mlir(
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %0 = tra.map (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%x: f32, %y: f32):
        %one = arith.constant 1.0 : f32
        %n = arith.negf %x : f32
        %e = math.exp %n : f32
        %d = arith.addf %one, %e : f32
        %s = arith.divf %x, %d : f32
        %r = arith.mulf %s, %y : f32
        tra.yield %r : f32
      }
      return %0 : tensor<4xf32>
    })mlir");
  ASSERT_NE(body, nullptr);
  auto program = ScalarProgram::compile(*body);
  ASSERT_TRUE(succeeded(program));
  EXPECT_FALSE(program->usesIndex());
  for (double x : {-3.0, -0.5, 0.0, 0.7, 4.0}) {
    double want = float(float(x / (1.0 + std::exp(-x))) * 1.5f);
    EXPECT_NEAR(program->run({x, 1.5}, {}), want, 1e-6) << x;
  }
}

TEST_F(ScalarProgramTest, IndexComparisonMask) {
  Block *body = mapBody(R"mlir(
    func.func @f(%s: tensor<3x5xf32>, %p: tensor<i64>) -> tensor<3x5xf32> {
      %0 = tra.map "qk,->qk" (%s, %p) : (tensor<3x5xf32>, tensor<i64>) -> tensor<3x5xf32> {
      ^bb0(%x: f32, %pos: i64):
        %q = tra.index 0
        %k = tra.index 1
        %qi = arith.index_cast %q : index to i64
        %ki = arith.index_cast %k : index to i64
        %last = arith.addi %pos, %qi : i64
        %keep = arith.cmpi sle, %ki, %last : i64
        %ninf = arith.constant 0xFF800000 : f32
        %r = arith.select %keep, %x, %ninf : f32
        tra.yield %r : f32
      }
      return %0 : tensor<3x5xf32>
    })mlir");
  ASSERT_NE(body, nullptr);
  auto program = ScalarProgram::compile(*body);
  ASSERT_TRUE(succeeded(program));
  EXPECT_TRUE(program->usesIndex());
  // pos = 1: query 0 sees keys 0..1, query 2 sees keys 0..3.
  EXPECT_EQ(program->run({2.0, 1.0}, {0, 1}), 2.0);
  EXPECT_TRUE(std::isinf(program->run({2.0, 1.0}, {0, 2})));
  EXPECT_EQ(program->run({2.0, 1.0}, {2, 3}), 2.0);
  EXPECT_TRUE(std::isinf(program->run({2.0, 1.0}, {2, 4})));
}

TEST_F(ScalarProgramTest, RejectsUnsupportedOps) {
  Block *body = mapBody(R"mlir(
    func.func @f(%a: tensor<4xf32>) -> tensor<4xi32> {
      %0 = tra.map (%a) : (tensor<4xf32>) -> tensor<4xi32> {
      ^bb0(%x: f32):
        %b = arith.bitcast %x : f32 to i32
        tra.yield %b : i32
      }
      return %0 : tensor<4xi32>
    })mlir");
  ASSERT_NE(body, nullptr);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(ScalarProgram::compile(*body)));
  EXPECT_EQ(message, "'arith.bitcast' op is not supported in a tra.map body");
}

TEST_F(ScalarProgramTest, IntegerArithmeticWraps) {
  Block *body = mapBody(R"mlir(
    func.func @f(%a: tensor<2xi32>) -> tensor<2xi32> {
      %0 = tra.map (%a) : (tensor<2xi32>) -> tensor<2xi32> {
      ^bb0(%x: i32):
        %big = arith.constant 2147483647 : i32
        %r = arith.addi %x, %big : i32
        tra.yield %r : i32
      }
      return %0 : tensor<2xi32>
    })mlir");
  ASSERT_NE(body, nullptr);
  auto program = ScalarProgram::compile(*body);
  ASSERT_TRUE(succeeded(program));
  EXPECT_EQ(program->run({1.0}, {}), -2147483648.0);
}

TEST_F(ScalarProgramTest, RoundsToElementTypes) {
  Builder b(&context);
  // 1 + 2^-10 is exact in f16 but not in bf16 (7 mantissa bits).
  double v = 1.0 + std::ldexp(1.0, -10);
  EXPECT_EQ(roundToElementType(b.getF16Type(), v), v);
  EXPECT_EQ(roundToElementType(b.getBF16Type(), v), 1.0);
  EXPECT_EQ(roundToElementType(b.getF32Type(), 0.1), double(0.1f));
  // Ties round to even in bf16: 1 + 2^-8 lies halfway between 1 and 1+2^-7.
  EXPECT_EQ(roundToElementType(b.getBF16Type(), 1.0 + std::ldexp(1.0, -8)),
            1.0);
  EXPECT_EQ(roundToElementType(b.getI32Type(), -2.7), -2.0);
  EXPECT_EQ(roundToElementType(b.getI1Type(), 0.25), 1.0);
  // f16 overflows to infinity past 65504.
  EXPECT_TRUE(std::isinf(roundToElementType(b.getF16Type(), 70000.0)));
}

TEST(CombinerTest, SemanticsAndArity) {
  EXPECT_EQ(applyCombiner(CombinerKind::mul, {2.0, 3.0, 4.0}), 24.0);
  EXPECT_EQ(applyCombiner(CombinerKind::sub, {2.0, 3.0}), -1.0);
  EXPECT_EQ(applyCombiner(CombinerKind::square, {-3.0}), 9.0);
  EXPECT_NEAR(applyCombiner(CombinerKind::silu, {1.0}), 0.7310585786, 1e-9);
  EXPECT_EQ(applyCombiner(CombinerKind::relu, {-1.0}), 0.0);
  EXPECT_EQ(getCombinerArity(CombinerKind::div), std::make_pair(2u, 2u));
  EXPECT_EQ(getCombinerArity(CombinerKind::add), std::make_pair(1u, 0u));
  EXPECT_EQ(getCombinerArity(CombinerKind::exp), std::make_pair(1u, 1u));
  EXPECT_TRUE(std::isinf(getAggregationIdentity(AggregationKind::max)));
  EXPECT_EQ(applyAggregation(AggregationKind::prod, 3.0, 4.0), 12.0);
  EXPECT_TRUE(std::isnan(applyAggregation(AggregationKind::max, 1.0, NAN)));
}

} // namespace
