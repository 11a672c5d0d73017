//===- Train.h - tra-llama train: train a LLaMA model -----------*- C++ -*-===//
//
//   tra-llama train (--checkpoint PATH | --config PARAMS.json | --resume DIR)
//                   --data FILE [--tokenizer TOK.bin] -o DIR
//                   [--hw local|FILE.json] [--batch N] [--seq-len N]
//                   [--steps N] [--lr X] [--min-lr X] [--warmup N]
//                   [--optimizer adamw|sgd] [--weight-decay X] ...
//
// Builds the model's training loss and its whole training step (forward,
// tra-autodiff gradients, clipping, optimizer update) as one tra program,
// compiles it for the hardware, and runs it: on one device in this process
// with the runtime's engine::Trainer, on several devices planned for the
// hardware as one MPI job of tra-llama-train-worker ranks
// (engine::RankTrainer). Either way a progress line per step, checkpoints
// written atomically every --save-every steps and at the end (DIR/step-N,
// with DIR/latest naming the newest), resumable with --resume DIR on any
// hardware.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TOOLS_TRA_LLAMA_TRAIN_H
#define TRA_TOOLS_TRA_LLAMA_TRAIN_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace tra {

/// What `tra-llama train` was asked to do (the options it shares with the
/// other commands; its own are in Train.cpp).
struct TrainRequest {
  std::string checkpoint;
  std::string hardware;
  std::string output;
  std::string tokenizer;
  std::string cacheDirectory; // "" for none
  int64_t steps = 0;
  int64_t threads = 0;
  uint64_t seed = 0;
  /// GPU hardware files run their plan with CPU code (--emulate-on-cpu).
  bool emulate = false;
  /// Several devices: mpirun's --hostfile and extra arguments, and the
  /// ranks' --step-timeout (seconds, 0: none).
  std::string hostfile;
  std::vector<std::string> mpirunArgs;
  double stepTimeout = 0;
};

/// Runs the command; prints errors as "tra-llama: error: ..." and returns
/// the exit status.
int runTrain(const TrainRequest &request);

} // namespace tra
} // namespace mlir

#endif // TRA_TOOLS_TRA_LLAMA_TRAIN_H
