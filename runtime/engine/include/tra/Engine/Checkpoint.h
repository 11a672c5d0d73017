//===- Checkpoint.h - Loading a whole LLaMA checkpoint ----------*- C++ -*-===//
//
// The in-process engine (LocalModel.h) runs on weights held in memory. No
// MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_CHECKPOINT_H
#define TRA_ENGINE_CHECKPOINT_H

#include "tra/Runtime/Llama.h"

#include <map>
#include <string>

namespace tra::engine {

/// Loads the LLaMA checkpoint at `path`, any format rt::openTensorSource
/// reads that states the model's parameters: a llama2.c `.bin` file
/// (mapped, f32), a Meta checkpoint directory (params.json +
/// consolidated.NN.pth, every shard merged into whole weights), a Hugging
/// Face LLaMA directory, a GGUF file or a tra-split checkpoint (every
/// weight read whole). Weights are f32, or with `keepStored` in the types
/// the checkpoint stores them in where step programs can read them so (see
/// LocalModel): f16/bf16, and a GGUF file's Q8_0 matrices as i8 values
/// under the weight's name plus f16 scales under rt::q8ScalesName (without
/// `keepStored` they are dequantised to f32). The weights of a model of at
/// least 2 MiB end up as views of one buffer on huge pages (LargePages.h),
/// each 64-byte aligned; the file pages or buffers they came from are
/// released as they are copied. Errors name the file.
rt::Result<rt::LlamaCheckpoint> loadCheckpoint(const std::string &path,
                                               bool keepStored = false);

/// The weights of `checkpoint` (loaded keeping its stored types) that step
/// programs read in a type other than f32: f16, bf16, and i8 for Q8_0
/// values (their scales, f16, included), by name (buildLlamaModule's
/// weightDTypes).
std::map<std::string, rt::DType>
storedWeightDTypes(const rt::LlamaCheckpoint &checkpoint);

/// What storedWeightDTypes found: 16-bit weights (not counting the f16
/// scales of Q8_0 weights), Q8_0 weights (i8 values).
struct StoredWeightKinds {
  bool sixteenBit = false, q8_0 = false;
};
StoredWeightKinds
storedWeightKinds(const std::map<std::string, rt::DType> &dtypes);

} // namespace tra::engine

#endif // TRA_ENGINE_CHECKPOINT_H
