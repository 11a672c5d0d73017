//===- tra-llama-train-worker.cpp - One MPI rank of tra-llama train -------===//
//
//   mpirun -np N tra-llama-train-worker --program STEP.so --weights CKPT
//       [--states OPT.safetensors] --data IDS.npy --output DIR
//       --optimizer NAME --steps-done K --steps N --save-every M
//       --threads T --lr X --min-lr Y --warmup W [--step-timeout S]
//
// `tra-llama train` starts this program under mpirun (tra/Engine/MpiJob.h
// writes the command line), once for the whole training run, when its
// hardware file has several devices. Each rank is a tra::engine::RankTrainer
// (tra/Engine/RankTrainer.h): it loads the training step, reads only its
// tiles of the weights and optimizer states and keeps them between steps.
// Every rank cuts the same batches from the token stream (the engine's
// training loop, tra/Engine/TrainLoop.h); rank 0 prints the progress lines
// and, for each checkpoint, receives every tile and writes the checkpoint
// (atomically, as in one process).
//
// Any failure aborts the whole job with a message naming the rank; a rank
// that dies makes mpirun end the job, non-zero.
//
//===----------------------------------------------------------------------===//

#include "tra/Engine/MpiJob.h"
#include "tra/Engine/RankTrainer.h"
#include "tra/Engine/TrainLoop.h"
#include "tra/Engine/Watchdog.h"
#include "tra/Runtime/Mpi.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tra;

namespace {

constexpr const char *kTool = "tra-llama-train-worker";

[[noreturn]] void fatal(const std::string &message) {
  std::string text = std::string(kTool) + ": " + message;
  tra_mpi_fatal(text.c_str());
  std::abort();
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  auto early = [](const std::string &message) {
    return engine::reportEarlyFailure(kTool, message);
  };
  rt::Result<engine::TrainWorkerOptions> options =
      engine::TrainWorkerOptions::parse(argc, argv);
  if (!options)
    return early(options.message());
  rt::Result<std::unique_ptr<engine::RankTrainer>> loaded =
      engine::RankTrainer::load(options->program);
  if (!loaded)
    return early(loaded.message());
  engine::RankTrainer &trainer = **loaded;

  tra_mpi_init(&argc, &argv, trainer.numRanks(), trainer.fingerprint(), kTool);
  int rank = tra_mpi_rank();
  if (rt::Status status = trainer.init(rank, options->weights, options->states,
                                       options->stepsDone, options->threads);
      !status)
    fatal("rank " + std::to_string(rank) + ": " + status.message());
  const rt::LlamaParams &p = trainer.params();
  rt::Result<std::vector<int64_t>> ids = engine::readTokenIds(options->data);
  if (!ids)
    fatal(ids.message());
  rt::Result<engine::TokenBatches> batches = engine::TokenBatches::create(
      std::move(*ids), p.vocabSize, trainer.batch(), trainer.seqLen(),
      options->data);
  if (!batches)
    fatal(batches.message());

  engine::TrainingRun run;
  run.schedule.peak = options->peakLr;
  run.schedule.min = options->minLr;
  run.schedule.warmup = options->warmup;
  run.schedule.total = options->stepsDone + options->steps;
  run.stepsDone = options->stepsDone;
  run.steps = options->steps;
  run.saveEvery = options->saveEvery;
  run.progress = rank == 0 ? stdout : nullptr;
  rt::SafetensorsMetadata meta = {{"optimizer", options->optimizer}};
  engine::Watchdog watchdog(options->stepTimeout, rank, kTool);
  auto step = [&](const std::vector<int64_t> &tokens,
                  const std::vector<int64_t> &targets, double lr) {
    watchdog.stepStarts(trainer.stepsDone());
    return trainer.step(tokens, targets, lr);
  };
  auto save = [&](int64_t number) -> rt::Status {
    rt::LlamaCheckpoint weights;
    std::vector<rt::NamedTensor> states;
    if (rt::Status status = trainer.gather(weights, states); !status)
      return status;
    if (rank != 0)
      return rt::Status::success();
    std::string dir = options->output + "/step-" + std::to_string(number);
    if (rt::Status status =
            engine::writeTrainingCheckpoint(dir, weights, states, number, meta);
        !status)
      return status;
    std::fprintf(stderr, "tra-llama: checkpoint %s\n", dir.c_str());
    return rt::Status::success();
  };
  if (rt::Status status = engine::runTraining(
          run, *batches, trainer.batch() * trainer.seqLen(), step, save);
      !status)
    fatal("rank " + std::to_string(rank) + ": " + status.message());
  watchdog.disarm();
  if (rank == 0 && trainer.relayoutBytes > 0)
    std::fprintf(stderr,
                 "tra-llama: %lld bytes of weights and optimizer states moved "
                 "between ranks to the next step's tiles\n",
                 static_cast<long long>(trainer.relayoutBytes));
  tra_mpi_finalize(0);
  return 0;
}
