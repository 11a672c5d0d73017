//===- TrainerTest.cpp - The training loop's pieces -----------------------===//
//
// The learning-rate schedule, the batches of a token stream, the training
// loop, and training checkpoints (llama2.c + safetensors, written atomically
// and read back). The compiled training step itself is run by
// test/Frontend/train.test.
//
//===----------------------------------------------------------------------===//

#include "tra/Engine/Trainer.h"
#include "tra/Engine/TrainLoop.h"

#include "tra/Runtime/File.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

using namespace tra;
using namespace tra::engine;

namespace {

TEST(LearningRateSchedule, WarmsUpLinearlyThenDecaysByACosine) {
  LearningRateSchedule s{/*peak=*/1.0, /*min=*/0.1, /*warmup=*/4,
                         /*total=*/14};
  EXPECT_DOUBLE_EQ(s.at(1), 0.25);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);
  // Halfway through the decay: the mean of peak and min.
  EXPECT_NEAR(s.at(9), 0.55, 1e-12);
  EXPECT_NEAR(s.at(14), 0.1, 1e-12);
  // Past the end (a resumed run with more steps) it stays at min.
  EXPECT_NEAR(s.at(20), 0.1, 1e-12);
  LearningRateSchedule constant{0.5, 0.5, 0, 10};
  for (int64_t t = 1; t <= 10; ++t)
    EXPECT_DOUBLE_EQ(constant.at(t), 0.5);
}

TEST(TokenBatches, WindowsFollowEachOtherAndWrapAround) {
  std::vector<int64_t> stream;
  for (int64_t i = 0; i < 10; ++i)
    stream.push_back(i);
  auto batches =
      TokenBatches::create(stream, 10, /*batch=*/2, /*seq=*/3, "data.npy");
  ASSERT_TRUE(batches.ok()) << batches.message();
  std::vector<int64_t> tokens, targets;
  batches->get(0, tokens, targets);
  EXPECT_EQ(tokens, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(targets, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  batches->get(1, tokens, targets);
  EXPECT_EQ(tokens, (std::vector<int64_t>{6, 7, 8, 9, 0, 1}));
  EXPECT_EQ(targets, (std::vector<int64_t>{7, 8, 9, 0, 1, 2}));
}

TEST(TokenBatches, HugeStepNumbersDoNotOverflow) {
  std::vector<int64_t> stream;
  for (int64_t i = 0; i < 97; ++i)
    stream.push_back(i);
  auto batches = TokenBatches::create(stream, 97, 3, 5, "data.npy");
  ASSERT_TRUE(batches.ok());
  int64_t index = int64_t(1) << 62;
  std::vector<int64_t> tokens, targets;
  batches->get(index, tokens, targets);
  for (int64_t b = 0; b < 3; ++b) {
    __int128 start = ((__int128)index * 3 + b) * 5 % 97;
    EXPECT_EQ(tokens[b * 5], int64_t(start)) << b;
    EXPECT_EQ(targets[b * 5 + 4], int64_t((start + 5) % 97)) << b;
  }
}

TEST(TokenBatches, BadStreamsAreErrorsNamingTheFile) {
  auto empty = TokenBatches::create({}, 10, 1, 3, "d.npy");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.message(), "d.npy: holds no tokens");
  auto shortStream = TokenBatches::create({1, 2, 3}, 10, 1, 3, "d.npy");
  ASSERT_FALSE(shortStream.ok());
  EXPECT_EQ(shortStream.message(),
            "d.npy: holds 3 tokens, fewer than one training sequence of 3 "
            "tokens and its next-token target (4)");
  auto badId = TokenBatches::create({1, 2, 10, 3}, 10, 1, 2, "d.npy");
  ASSERT_FALSE(badId.ok());
  EXPECT_EQ(badId.message(), "d.npy: token 2 is 10, outside the model's "
                             "vocabulary [0, 10)");
  auto negative = TokenBatches::create({1, -1, 2}, 10, 1, 2, "d.npy");
  ASSERT_FALSE(negative.ok());
}

/// A small model with distinct values in every weight.
rt::LlamaCheckpoint smallModel(bool shared) {
  rt::LlamaCheckpoint ckpt;
  rt::LlamaParams &p = ckpt.params;
  p.dim = 4;
  p.hiddenDim = 6;
  p.nLayers = 2;
  p.nHeads = 2;
  p.nKvHeads = 1;
  p.vocabSize = 7;
  p.maxSeqLen = 8;
  p.sharedClassifier = shared;
  double v = 0;
  for (auto &[name, shape] : rt::llamaWeightShapes(p)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<double> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(v += 0.25);
    ckpt.weights.push_back(
        {name, rt::HostTensor::fromDoubles(rt::DType::F32, shape, values)});
  }
  return ckpt;
}

std::string scratchDir(const char *name) {
  std::string dir = std::filesystem::temp_directory_path().string() +
                    "/tra-trainer-test-" + std::to_string(::getpid()) + "-" +
                    name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void expectSameWeights(const rt::LlamaCheckpoint &a,
                       const rt::LlamaCheckpoint &b) {
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (const auto &[name, tensor] : a.weights) {
    const rt::HostTensor *other = b.find(name);
    ASSERT_NE(other, nullptr) << name;
    ASSERT_EQ(other->shape(), tensor.shape()) << name;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      ASSERT_EQ(other->loadAsDouble(i), tensor.loadAsDouble(i)) << name;
  }
}

TEST(TrainLoop, StepsGetTheirBatchAndRateAndCheckpointsComeOnTime) {
  auto data = TokenBatches::create({0, 1, 2, 3, 4, 5, 6, 7, 8}, 9, 1, 2, "d");
  ASSERT_TRUE(data.ok()) << data.message();
  TrainingRun run;
  run.schedule = {/*peak=*/1.0, /*min=*/0.0, /*warmup=*/2, /*total=*/7};
  run.stepsDone = 2; // resumed: steps 3 ... 7
  run.steps = 5;
  run.saveEvery = 3;
  std::vector<int64_t> firstTokens;
  std::vector<double> rates;
  std::vector<int64_t> saved;
  auto step = [&](const std::vector<int64_t> &tokens,
                  const std::vector<int64_t> &targets,
                  double lr) -> rt::Result<TrainStepStats> {
    EXPECT_EQ(targets[0], (tokens[0] + 1) % 9);
    firstTokens.push_back(tokens[0]);
    rates.push_back(lr);
    return TrainStepStats{1.0, 0.5, lr};
  };
  auto save = [&](int64_t s) {
    saved.push_back(s);
    return rt::Status::success();
  };
  ASSERT_TRUE(runTraining(run, *data, 2, step, save).ok());
  // Step s takes batch s - 1: window s - 1 of 2 tokens, mod 9.
  EXPECT_EQ(firstTokens, (std::vector<int64_t>{4, 6, 8, 1, 3}));
  ASSERT_EQ(rates.size(), 5u);
  for (size_t i = 0; i < rates.size(); ++i)
    EXPECT_DOUBLE_EQ(rates[i], run.schedule.at(int64_t(i) + 3));
  // Every third step and the last.
  EXPECT_EQ(saved, (std::vector<int64_t>{3, 6, 7}));

  // A failing step stops the run with its error (after step 3's
  // checkpoint, before any other).
  saved.clear();
  int calls = 0;
  auto failing = [&](const std::vector<int64_t> &, const std::vector<int64_t> &,
                     double) -> rt::Result<TrainStepStats> {
    if (++calls == 2)
      return rt::Error{"step 4: not finite"};
    return TrainStepStats{};
  };
  rt::Status status = runTraining(run, *data, 2, failing, save);
  EXPECT_EQ(status.message(), "step 4: not finite");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(saved, (std::vector<int64_t>{3}));
  // So does a failing checkpoint.
  calls = 0;
  auto badSave = [&](int64_t) { return rt::Status(rt::Error{"disk full"}); };
  status = runTraining(run, *data, 2, failing, badSave);
  EXPECT_EQ(status.message(), "disk full");
}

TEST(Llama2c, WrittenCheckpointsReadBack) {
  std::string dir = scratchDir("llama2c");
  for (bool shared : {true, false}) {
    rt::LlamaCheckpoint ckpt = smallModel(shared);
    std::string path = dir + (shared ? "/shared.bin" : "/own.bin");
    rt::Status s = rt::writeLlama2c(path, ckpt);
    ASSERT_TRUE(s.ok()) << s.message();
    auto back = rt::readLlama2c(path);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->params.sharedClassifier, shared);
    EXPECT_EQ(back->params.vocabSize, 7);
    expectSameWeights(ckpt, *back);
  }
  rt::LlamaCheckpoint missing = smallModel(true);
  missing.weights.pop_back();
  rt::Status s = rt::writeLlama2c(dir + "/missing.bin", missing);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("has no weight 'norm.weight'"), std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.bin"));
  std::filesystem::remove_all(dir);
}

TEST(TrainingCheckpoint, WrittenAtomicallyAndReadBackThroughLatest) {
  std::string dir = scratchDir("checkpoint");
  rt::LlamaCheckpoint ckpt = smallModel(true);
  std::vector<rt::NamedTensor> states = {
      {"norm.weight.adam_m",
       rt::HostTensor::fromDoubles(rt::DType::F32, {4}, {1, 2, 3, 4})}};
  rt::Status s = writeTrainingCheckpoint(dir + "/step-3", ckpt, states, 3,
                                         {{"optimizer", "adamw"}});
  ASSERT_TRUE(s.ok()) << s.message();
  // No temporary directory is left, and latest names the checkpoint.
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"latest", "step-3"}));
  auto back = readTrainingCheckpoint(dir);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->step, 3);
  expectSameWeights(ckpt, back->weights);
  ASSERT_EQ(back->states.size(), 1u);
  EXPECT_EQ(back->states[0].name, "norm.weight.adam_m");
  EXPECT_EQ(back->states[0].tensor.loadAsDouble(3), 4.0);
  bool sawOptimizer = false;
  for (const auto &[key, value] : back->metadata)
    sawOptimizer |= key == "optimizer" && value == "adamw";
  EXPECT_TRUE(sawOptimizer);
  // A checkpoint never replaces another.
  rt::Status again =
      writeTrainingCheckpoint(dir + "/step-3", ckpt, states, 3, {});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("exists already"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(TrainingCheckpoint, ReadingNamesWhatIsMissing) {
  std::string dir = scratchDir("missing");
  auto none = readTrainingCheckpoint(dir + "/nothing");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("nothing/model.bin"), std::string::npos)
      << none.message();
  {
    auto w = rt::AtomicFileWriter::create(dir + "/latest");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write("../x\n", 5).ok());
    ASSERT_TRUE(w->commit().ok());
  }
  auto bad = readTrainingCheckpoint(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("does not name a checkpoint directory"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

} // namespace
