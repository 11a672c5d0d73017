//===- RecomputeTest.cpp - Which activations are computed again -----------===//

#include "tra/Optimizer/Recompute.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

namespace {

class RecomputeTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<TRADialect, func::FuncDialect>();
  }

  /// Parses `body` as the function @f(%x, %w: tensor<8x8xf32>) returning
  /// `results` 8x8 values, and runs recomputeActivations with a gap of 3.
  unsigned run(StringRef body, unsigned results) {
    std::string text =
        "func.func @f(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (";
    for (unsigned i = 0; i < results; ++i)
      text += std::string(i ? ", " : "") + "tensor<8x8xf32>";
    text += ") {\n" + body.str() + "}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    if (!module)
      return ~0u;
    func = *module->getOps<func::FuncOp>().begin();
    unsigned added = recomputeActivations(func, /*minGap=*/3);
    EXPECT_TRUE(succeeded(verify(*module)));
    return added;
  }

  unsigned countRecomputed() {
    unsigned count = 0;
    func.walk(
        [&](Operation *op) { count += op->hasAttr(kRecomputedAttrName); });
    return count;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
};

#define T "tensor<8x8xf32>"
#define UNARY(name, kind, in)                                                  \
  "  %" name " = tra.einsum \"ab->ab\" " kind " (" in ") : (" T ") -> " T "\n"
#define BINARY(name, spec, in0, in1)                                           \
  "  %" name " = tra.einsum \"" spec "\" mul (" in0 ", " in1 ") : (" T ", " T  \
  ") -> " T "\n"

// relu(h) is read at once and again after a long stretch, and h is read
// after that: the late read gets a copy, placed just before it.
TEST_F(RecomputeTest, LateReadGetsACopy) {
  unsigned added =
      run(BINARY("h", "ab,bc->ac", "%x", "%w") UNARY("a", "relu", "%h")
              BINARY("y", "ab,bc->ac", "%a", "%w") UNARY("z0", "tanh", "%y")
                  UNARY("z1", "tanh", "%z0") UNARY("z2", "tanh", "%z1")
                      BINARY("g", "ab,ab->ab", "%a", "%z2") BINARY(
                          "d", "ab,ab->ab", "%g", "%h") "  return %d : " T "\n",
          1);
  EXPECT_EQ(added, 1u);
  EXPECT_EQ(countRecomputed(), 1u);
  // The copy reads h and feeds g; the original now feeds only y.
  Operation *copy = nullptr;
  func.walk([&](EinsumOp op) {
    if (op->hasAttr(kRecomputedAttrName))
      copy = op;
  });
  ASSERT_TRUE(copy);
  ASSERT_TRUE(copy->getResult(0).hasOneUse());
  EXPECT_EQ(copy->getNextNode(), *copy->getResult(0).getUsers().begin());
  EXPECT_FALSE(
      copy->getOperand(0).getDefiningOp()->hasAttr(kRecomputedAttrName));
}

// The same, but h is not read after g: a copy would keep h alive longer
// than a itself, so a is kept.
TEST_F(RecomputeTest, DeadInputsAreNotRevived) {
  unsigned added = run(
      BINARY("h", "ab,bc->ac", "%x", "%w") UNARY("a", "relu", "%h")
          BINARY("y", "ab,bc->ac", "%a", "%w") UNARY("z0", "tanh", "%y")
              UNARY("z1", "tanh", "%z0") UNARY("z2", "tanh", "%z1")
                  BINARY("g", "ab,ab->ab", "%a", "%z2") "  return %g : " T "\n",
      1);
  EXPECT_EQ(added, 0u);
}

// A returned value, a contraction and reads close together are kept.
TEST_F(RecomputeTest, ReturnedContractionsAndShortGapsAreKept) {
  EXPECT_EQ(run(UNARY("a", "relu", "%x") BINARY("y", "ab,bc->ac", "%a", "%w")
                    UNARY("z0", "tanh", "%y") UNARY("z1", "tanh", "%z0")
                        UNARY("z2", "tanh", "%z1")
                            BINARY("g", "ab,ab->ab", "%a",
                                   "%z2") "  return %g, %a : " T ", " T "\n",
                2),
            0u);
  EXPECT_EQ(run(BINARY("h", "ab,bc->ac", "%x", "%w") UNARY("z0", "tanh", "%h")
                    UNARY("z1", "tanh", "%z0") UNARY("z2", "tanh", "%z1")
                        BINARY("g", "ab,ab->ab", "%h", "%z2") "  return %g : " T
                                                              "\n",
                1),
            0u);
  EXPECT_EQ(run(UNARY("a", "relu", "%x") BINARY("y", "ab,ab->ab", "%a", "%w")
                    BINARY("g", "ab,ab->ab", "%a", "%y") "  return %g : " T
                                                         "\n",
                1),
            0u);
}

} // namespace
