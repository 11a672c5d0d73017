//===- StreamingTest.cpp - Weights kept in memory tiers -------------------===//
//
// The planner's side of memory tiers (docs/CostModel.md, "Weights in memory
// tiers"): plans that stream weights fit the devices by the planner's own
// accounting and by the report's, which agree; tiers are recorded on the
// arguments; the step time adds only what compute does not hide.
//
//===----------------------------------------------------------------------===//

#include "TestHardware.h"

#include "tra/Dialect/Plan/IR/PlanDialect.h"
#include "tra/Dialect/TRA/IR/TRAOps.h"
#include "tra/Optimizer/Pipeline.h"
#include "tra/Optimizer/Report.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::tra;
using namespace mlir::tra::plan;
namespace hw = ::tra::hw;

namespace {

class StreamingTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<TRADialect, PlanDialect, func::FuncDialect>();
  }

  /// `layers` matmuls of 64 x `width` activations with `width` x `width`
  /// f32 weights, a relu between them.
  OwningOpRef<ModuleOp> buildMlp(unsigned layers, int64_t width) {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto act = RankedTensorType::get({64, width}, b.getF32Type());
    auto weight = RankedTensorType::get({width, width}, b.getF32Type());
    SmallVector<Type> inputs = {act};
    inputs.append(layers, weight);
    auto func =
        func::FuncOp::create(b, loc, "mlp", b.getFunctionType(inputs, {act}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value h = entry->getArgument(0);
    for (unsigned l = 0; l < layers; ++l) {
      h = EinsumOp::create(b, loc, act, "bd,de->be", CombinerKind::mul,
                           AggregationKind::sum,
                           ValueRange{h, entry->getArgument(1 + l)});
      if (l + 1 < layers)
        h = EinsumOp::create(b, loc, act, "be->be", CombinerKind::relu,
                             AggregationKind::sum, ValueRange{h});
    }
    func::ReturnOp::create(b, loc, h);
    return module;
  }

  /// `nodes` x `perNode` GPUs of `memory` bytes; with `host` > 0, each node
  /// has that much host memory at 10 GB/s.
  static hw::HardwareDescription makeHardware(unsigned nodes, unsigned perNode,
                                              uint64_t memory, uint64_t host) {
    return tra_test::makeHardware(nodes, perNode, 100e9, 10e9, memory, host);
  }

  MLIRContext context;
};

// Shrinking the devices until the weights no longer fit: every plan fits
// by both accountings, which agree, and the tiers recorded on the arguments
// are the ones the summary counts; without a tier the same sizes fail.
TEST_F(StreamingTest, PlansFitAndAccountingsAgree) {
  const unsigned layers = 6;
  const int64_t width = 256; // 256 KiB per weight
  unsigned streamedBefore = 0;
  for (auto [nodes, perNode] :
       {std::pair(1u, 1u), std::pair(1u, 2u), std::pair(2u, 2u)}) {
    for (uint64_t memory :
         {4ull << 20, 1ull << 20, 700ull << 10, 400ull << 10, 300ull << 10}) {
      SCOPED_TRACE(std::to_string(nodes) + "x" + std::to_string(perNode) +
                   " devices of " + std::to_string(memory) + " bytes");
      OwningOpRef<ModuleOp> module = buildMlp(layers, width);
      auto func = module->lookupSymbol<func::FuncOp>("mlp");
      CostModel model(makeHardware(nodes, perNode, memory, 64ull << 20));
      auto summary = planFunction(func, model, {});
      if (!summary) {
        // Too small even for the buffers of two streamed weights: the
        // error says what streaming left.
        std::string message = llvm::toString(summary.takeError());
        EXPECT_NE(message.find("kept in the memory tiers and streamed"),
                  std::string::npos)
            << message;
        EXPECT_LT(memory, 700ull << 10) << message;
        continue;
      }
      PlanReport report = analyzePlan(func, model);
      unsigned tiered = 0;
      double tieredBytes = 0;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (auto tier = func.getArgAttrOfType<StringAttr>(
                i, PlanDialect::kTierAttrName)) {
          EXPECT_EQ(tier.getValue(), "host");
          ++tiered;
          auto type =
              llvm::cast<RankedTensorType>(func.getArgument(i).getType());
          tieredBytes += double(type.getNumElements()) * 4;
        }
      EXPECT_EQ(tiered, summary->streamed);
      llvm::errs() << nodes << "x" << perNode << " " << memory << ": " << tiered
                   << " streamed, stall " << report.streamStall << "\n";
      EXPECT_EQ(report.streamed, summary->streamed);
      EXPECT_EQ(report.hostBytes, tieredBytes);
      EXPECT_EQ(report.diskBytes, 0.0);
      for (unsigned d = 0; d < model.getNumDevices(); ++d) {
        EXPECT_LE(summary->memory.getPeak(d), double(memory)) << d;
        EXPECT_LE(report.memory.getPeak(d), double(memory)) << d;
        EXPECT_EQ(report.memory.resident[d], summary->memory.resident[d]) << d;
        if (summary->streamed)
          EXPECT_EQ(report.memory.streamed[d], summary->memory.streamed[d])
              << d;
      }
      EXPECT_LE(report.streamStall, report.streamTime);
      EXPECT_GE(report.streamStall, 0.0);
      if (memory == (4ull << 20) && nodes * perNode == 1)
        EXPECT_EQ(summary->streamed, 0u) << "1.5 MiB of weights fit";
      if (memory == (700ull << 10) && nodes * perNode == 1) {
        EXPECT_GT(summary->streamed, 0u);
        EXPECT_GT(report.streamStall, 0.0) << "one device cannot hide 1 ms";
        streamedBefore = summary->streamed;
      }
      // Without a tier the devices alone must hold everything.
      OwningOpRef<ModuleOp> again = buildMlp(layers, width);
      auto plain = again->lookupSymbol<func::FuncOp>("mlp");
      CostModel noTier(makeHardware(nodes, perNode, memory, 0));
      auto fits = planFunction(plain, noTier, {});
      if (summary->streamed)
        EXPECT_FALSE(bool(fits));
      if (!fits)
        llvm::consumeError(fits.takeError());
    }
  }
  EXPECT_GT(streamedBefore, 0u);
}

// With stream=false the planner keeps the plain error.
TEST_F(StreamingTest, CanBeTurnedOff) {
  OwningOpRef<ModuleOp> module = buildMlp(6, 256);
  auto func = module->lookupSymbol<func::FuncOp>("mlp");
  CostModel model(makeHardware(1, 1, 700ull << 10, 64ull << 20));
  PlannerOptions options;
  options.stream = false;
  auto summary = planFunction(func, model, options);
  ASSERT_FALSE(bool(summary));
  std::string message = llvm::toString(summary.takeError());
  EXPECT_NE(message.find("of host memory and no disk"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("streamed"), std::string::npos) << message;
}

} // namespace
