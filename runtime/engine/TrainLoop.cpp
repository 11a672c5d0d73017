//===- TrainLoop.cpp - The loop of a training run -------------------------===//

#include "tra/Engine/TrainLoop.h"

#include <chrono>

using namespace tra;
using namespace tra::engine;

rt::Status tra::engine::runTraining(const TrainingRun &run,
                                    const TokenBatches &data,
                                    int64_t tokensPerStep,
                                    const TrainStepFn &step,
                                    const SaveCheckpointFn &save) {
  std::vector<int64_t> tokens, targets;
  for (int64_t i = 0; i < run.steps; ++i) {
    int64_t number = run.stepsDone + i + 1;
    data.get(number - 1, tokens, targets);
    double lr = run.schedule.at(number);
    auto start = std::chrono::steady_clock::now();
    rt::Result<TrainStepStats> stats = step(tokens, targets, lr);
    if (!stats)
      return stats.error();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (run.progress) {
      std::fprintf(run.progress,
                   "step %lld/%lld: loss %.4f, lr %.3g, grad norm %.3f, %.0f "
                   "tokens/s\n",
                   static_cast<long long>(number),
                   static_cast<long long>(run.schedule.total), stats->loss, lr,
                   stats->gradNorm, double(tokensPerStep) / seconds);
      std::fflush(run.progress);
    }
    bool last = i + 1 == run.steps;
    if (last || (run.saveEvery > 0 && number % run.saveEvery == 0))
      if (rt::Status status = save(number); !status)
        return status;
  }
  return rt::Status::success();
}
