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
// compiles it for the hardware, and runs it in this process with the
// runtime's engine::Trainer: a progress line per step, checkpoints written
// atomically every --save-every steps and at the end (DIR/step-N, with
// DIR/latest naming the newest), resumable with --resume DIR.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TOOLS_TRA_LLAMA_TRAIN_H
#define TRA_TOOLS_TRA_LLAMA_TRAIN_H

#include <cstdint>
#include <string>

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
};

/// Runs the command; prints errors as "tra-llama: error: ..." and returns
/// the exit status.
int runTrain(const TrainRequest &request);

} // namespace tra
} // namespace mlir

#endif // TRA_TOOLS_TRA_LLAMA_TRAIN_H
