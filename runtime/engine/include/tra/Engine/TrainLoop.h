//===- TrainLoop.h - The loop of a training run -----------------*- C++ -*-===//
//
// What a training run does around its steps, the same whether the step runs
// in this process (Trainer.h) or as the ranks of one MPI job
// (RankTrainer.h): the batch and the learning rate of every step, a
// progress line per step, and a checkpoint every `saveEvery` steps and
// after the last. The step and the checkpoint writer are the caller's.
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_TRAINLOOP_H
#define TRA_ENGINE_TRAINLOOP_H

#include "tra/Engine/Trainer.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace tra::engine {

struct TrainingRun {
  LearningRateSchedule schedule;
  /// Steps taken before this run (a resumed checkpoint's); the run takes
  /// steps stepsDone + 1 ... stepsDone + steps.
  int64_t stepsDone = 0, steps = 1;
  /// A checkpoint after every step divisible by this (0: only the last).
  int64_t saveEvery = 0;
  /// The progress lines go here (null: none, e.g. ranks other than 0).
  std::FILE *progress = nullptr;
};

/// Runs one step on the batch's tokens and targets at learning rate `lr`.
using TrainStepFn = std::function<rt::Result<TrainStepStats>(
    const std::vector<int64_t> &tokens, const std::vector<int64_t> &targets,
    double lr)>;
/// Writes the checkpoint of step `step` (1-based).
using SaveCheckpointFn = std::function<rt::Status(int64_t step)>;

/// Runs the steps of `run` on the batches of `data`: step s takes batch
/// s - 1. Prints "step S/T: loss L, lr R, grad norm N, K tokens/s" per step
/// and stops at the first failing step or checkpoint.
rt::Status runTraining(const TrainingRun &run, const TokenBatches &data,
                       int64_t tokensPerStep, const TrainStepFn &step,
                       const SaveCheckpointFn &save);

} // namespace tra::engine

#endif // TRA_ENGINE_TRAINLOOP_H
