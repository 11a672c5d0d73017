//===- ReportTest.cpp - Estimates read back from a planned function -------===//

#include "TestHardware.h"

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Optimizer/Report.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;

namespace {

// A weight read whole on all 8 devices whose update is written in 8
// column shards: the next step must gather it again.
constexpr const char *kShardedUpdate = R"mlir(
func.func @step(%w: tensor<32x32xf32> {tra.name = "w", tra_plan.dist = #tra_plan.dist<[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]>},
                %g: tensor<32x32xf32> {tra_plan.dist = #tra_plan.dist<[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>})
    -> (tensor<32x32xf32> {tra.name = "w_out", tra.carries = 0 : i64})
    attributes {tra_plan.hardware = "test", tra_plan.num_devices = 8 : i64} {
  %0 = tra_plan.repartition %w from <[1, 1] on [[0, 1, 2, 3, 4, 5, 6, 7]]> to <[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]> : tensor<32x32xf32>
  %1 = tra.einsum "de,de->de" sub (%0, %g) {tra_plan.operands = [#tra_plan.dist<[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>, #tra_plan.dist<[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>], tra_plan.results = [#tra_plan.dist<[1, 8] on [0, 1, 2, 3, 4, 5, 6, 7]>], tra_plan.split = #tra_plan.split<e = 8>} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %1 : tensor<32x32xf32>
}
)mlir";

class ReportTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<TRADialect, PlanDialect, func::FuncDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }

  MLIRContext context;
};

// The move a carried result needs for the next step is a row of the report,
// charged to the step's communication like the moves inside it.
TEST_F(ReportTest, CarriedResultInOtherTilesIsAMove) {
  OwningOpRef<ModuleOp> module = parse(kShardedUpdate);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  CostModel model(tra_test::makeHardware(8, 1));
  PlanReport report = analyzePlan(func, model);
  EXPECT_EQ(report.carries, 1u);
  ASSERT_FALSE(report.rows.empty());
  const ReportRow &carry = report.rows.back();
  EXPECT_EQ(carry.name, "w_out");
  EXPECT_EQ(carry.operation, "carried to w");
  EXPECT_TRUE(carry.isMove);
  // Every device receives the 7 column shards it lacks: 7/8 of 4 KiB each.
  EXPECT_DOUBLE_EQ(carry.bytes.total(), 8 * 7 * 32 * 4 * 4.0);
  EXPECT_GT(carry.time, 0);
  EXPECT_GE(report.communicationTime, carry.time);

  // Written in the weight's own tiles, nothing is carried.
  func.setArgAttr(0, PlanDialect::kDistAttrName,
                  func.getArgAttr(1, PlanDialect::kDistAttrName));
  PlanReport same = analyzePlan(func, model);
  EXPECT_EQ(same.carries, 0u);
  EXPECT_NE(same.rows.back().operation, "carried to w");
}

} // namespace
