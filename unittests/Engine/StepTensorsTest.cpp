//===- StepTensorsTest.cpp - Names of a LLaMA step program's tensors ------===//

#include "tra/Engine/StepTensors.h"

#include <gtest/gtest.h>

using namespace tra::engine;

TEST(StepTensors, Inputs) {
  EXPECT_EQ(classifyStepInput("tokens", 2).kind, StepTensorKind::Tokens);
  EXPECT_EQ(classifyStepInput("pos", 2).kind, StepTensorKind::Position);
  EXPECT_EQ(classifyStepInput("logits_row", 2).kind, StepTensorKind::LogitsRow);
  EXPECT_EQ(classifyStepInput("freqs_cos", 2).kind, StepTensorKind::RopeCos);
  EXPECT_EQ(classifyStepInput("freqs_sin", 2).kind, StepTensorKind::RopeSin);
  StepTensorRole k1 = classifyStepInput("layers.1.k_cache", 2);
  EXPECT_EQ(k1.kind, StepTensorKind::Cache);
  EXPECT_EQ(k1.cache, 2);
  EXPECT_EQ(classifyStepInput("layers.1.v_cache", 2).cache, 3);
  EXPECT_EQ(classifyStepInput("layers.0.attention.wq.weight", 2).kind,
            StepTensorKind::Other);
  // Not caches: a layer out of range, a result's name, malformed numbers.
  for (const char *name :
       {"layers.2.k_cache", "layers.0.k_cache_out", "layers.-1.k_cache",
        "layers..k_cache", "layers.1x.v_cache", "layers.0.q_cache",
        "layers.99999999999999999999.k_cache"})
    EXPECT_EQ(classifyStepInput(name, 2).kind, StepTensorKind::Other) << name;
}

TEST(StepTensors, Outputs) {
  EXPECT_EQ(classifyStepOutput("logits", 1).kind, StepTensorKind::Logits);
  StepTensorRole v0 = classifyStepOutput("layers.0.v_cache_out", 1);
  EXPECT_EQ(v0.kind, StepTensorKind::Cache);
  EXPECT_EQ(v0.cache, 1);
  EXPECT_EQ(classifyStepOutput("layers.0.v_cache", 1).kind,
            StepTensorKind::Other);
  EXPECT_EQ(classifyStepOutput("tokens", 1).kind, StepTensorKind::Other);
}

TEST(StepTensors, Shapes) {
  tra::rt::LlamaParams p;
  p.dim = 64;
  p.nHeads = 8;
  p.nKvHeads = 4;
  p.maxSeqLen = 32;
  EXPECT_EQ(cacheShape(p), (std::vector<int64_t>{32, 4, 8}));
  EXPECT_EQ(ropeTableShape(p), (std::vector<int64_t>{32, 4}));
}
