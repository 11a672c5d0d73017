//===- InterpreterTest.cpp - The reference interpreter's C++ API ----------===//

#include "tra/Interpreter/Interpreter.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tra;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<TRADialect, func::FuncDialect, arith::ArithDialect,
                        math::MathDialect>();
  }

  func::FuncOp parse(llvm::StringRef ir, llvm::StringRef name) {
    module = parseSourceString<ModuleOp>(ir, &context);
    return module ? module->lookupSymbol<func::FuncOp>(name) : nullptr;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(InterpreterTest, MatmulAndNames) {
  func::FuncOp f = parse(R"mlir(
    func.func @mm(%a: tensor<2x3xf32> {tra.name = "a"}, %b: tensor<3x2xf32>)
        -> (tensor<2x2xf32> {tra.name = "c"}) {
      %c = tra.einsum "ij,jk->ik" mul (%a, %b)
          : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      return %c : tensor<2x2xf32>
    })mlir",
                         "mm");
  ASSERT_TRUE(f);
  EXPECT_EQ(getArgumentName(f, 0), "a");
  EXPECT_EQ(getArgumentName(f, 1), "arg1");
  EXPECT_EQ(getResultName(f, 0), "c");
  Builder b(&context);
  InterpTensor a(b.getF32Type(), {2, 3}), m(b.getF32Type(), {3, 2});
  a.data = {1, 2, 3, 4, 5, 6};
  m.data = {7, 8, 9, 10, 11, 12};
  auto results = interpret(f, {a, m});
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].data, (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ((*results)[0].getType(),
            RankedTensorType::get({2, 2}, b.getF32Type()));
}

TEST_F(InterpreterTest, AggregationsAndMovement) {
  func::FuncOp f = parse(R"mlir(
    func.func @g(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<5x2xf32>, tensor<3x2xf32>) {
      %mx = tra.einsum "ij->i" id (%x) reduce max : (tensor<2x3xf32>) -> tensor<2xf32>
      %pr = tra.einsum "ij->j" id (%x) reduce prod : (tensor<2x3xf32>) -> tensor<3xf32>
      %t = tra.einsum "ij->ji" id (%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %z = tra.fill 0.5 : tensor<2x2xf32>
      %c = tra.concat dim 0 (%t, %z) : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<5x2xf32>
      %r = tra.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
      %s = tra.slice %r dim 0 offset 1 size 4 : tensor<6xf32> -> tensor<4xf32>
      %u = tra.reshape %t : tensor<3x2xf32> -> tensor<3x2xf32>
      return %mx, %pr, %c, %u : tensor<2xf32>, tensor<3xf32>, tensor<5x2xf32>, tensor<3x2xf32>
    })mlir",
                         "g");
  ASSERT_TRUE(f);
  Builder b(&context);
  InterpTensor x(b.getF32Type(), {2, 3});
  x.data = {1, -2, 3, 4, 5, -6};
  auto results = interpret(f, {x});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0].data, (std::vector<double>{3, 5}));
  EXPECT_EQ((*results)[1].data, (std::vector<double>{4, -10, -18}));
  EXPECT_EQ((*results)[2].data,
            (std::vector<double>{1, 4, -2, 5, 3, -6, 0.5, 0.5, 0.5, 0.5}));
}

TEST_F(InterpreterTest, ArgumentTypeMismatchIsAnError) {
  func::FuncOp f = parse(R"mlir(
    func.func @h(%x: tensor<2xf32> {tra.name = "x"}) -> tensor<2xf32> {
      return %x : tensor<2xf32>
    })mlir",
                         "h");
  ASSERT_TRUE(f);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Builder b(&context);
  InterpTensor wrong(b.getF32Type(), {3});
  EXPECT_TRUE(failed(interpret(f, {wrong})));
  EXPECT_EQ(message,
            "argument 'x' expects 'tensor<2xf32>', got 'tensor<3xf32>'");
  EXPECT_TRUE(failed(interpret(f, {})));
  EXPECT_EQ(message, "expected 1 arguments, got 0");
}

TEST_F(InterpreterTest, Bf16StorageRounds) {
  func::FuncOp f = parse(R"mlir(
    func.func @k(%x: tensor<2xf32>) -> tensor<2xbf16> {
      %c = tra.convert %x : tensor<2xf32> to tensor<2xbf16>
      return %c : tensor<2xbf16>
    })mlir",
                         "k");
  ASSERT_TRUE(f);
  Builder b(&context);
  InterpTensor x(b.getF32Type(), {2});
  x.data = {1.0 + 1.0 / 1024, 3.0};
  auto results = interpret(f, {x});
  ASSERT_TRUE(succeeded(results));
  EXPECT_EQ((*results)[0].data, (std::vector<double>{1.0, 3.0}));
}

} // namespace
