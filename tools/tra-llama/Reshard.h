//===- Reshard.h - tra-llama reshard: re-split a checkpoint for a plan ----===//
//
//   tra-llama reshard --checkpoint PATH --hw FILE.json -o DIR
//                     [--dtype f32|f16|bf16|keep] [--seq N] [--max-seq-len N]
//                     [--quiet]
//
// Builds the LLaMA model of the checkpoint (any format openTensorSource
// reads that states the model's parameters), plans its @forward step for the
// hardware exactly as tra-compile does, and writes DIR in the tra-split
// layout (runtime/include/tra/Runtime/TraSplit.h): one safetensors file per
// rank with the tiles the plan gives that rank's device, plus
// tra-split.json. Streams tensor by tensor; DIR appears only once complete.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_TOOLS_TRA_LLAMA_RESHARD_H
#define TRA_TOOLS_TRA_LLAMA_RESHARD_H

#include <cstdint>
#include <string>

namespace mlir {
namespace tra {

/// What `tra-llama reshard` was asked to do (the options it shares with the
/// other commands; --dtype and --quiet are its own, see Reshard.cpp).
struct ReshardRequest {
  std::string checkpoint;
  std::string hardware;
  std::string output;
  /// Tokens per step the plan is made for.
  int64_t seqLen = 1;
  /// KV-cache length the plan is made for (0: the model's).
  int64_t maxSeqLen = 0;
};

/// Runs the command; prints errors as "tra-llama: error: ..." and returns
/// the exit status.
int runReshard(const ReshardRequest &request);

} // namespace tra
} // namespace mlir

#endif // TRA_TOOLS_TRA_LLAMA_RESHARD_H
