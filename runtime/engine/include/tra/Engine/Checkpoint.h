//===- Checkpoint.h - Loading a whole LLaMA checkpoint ----------*- C++ -*-===//
//
// The in-process engine (LocalModel.h) runs on weights held in memory. No
// MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_CHECKPOINT_H
#define TRA_ENGINE_CHECKPOINT_H

#include "tra/Runtime/Llama.h"

#include <string>

namespace tra::engine {

/// Loads the LLaMA checkpoint at `path`, any format rt::openTensorSource
/// reads that states the model's parameters: a llama2.c `.bin` file
/// (mapped, f32), a Meta checkpoint directory (params.json +
/// consolidated.NN.pth, every shard merged into whole weights), a Hugging
/// Face LLaMA directory, a GGUF file (Q8_0 weights dequantised to f32) or a
/// tra-split checkpoint (every weight read whole). Weights are f32, or with
/// `keepSixteenBit` f16/bf16 where the checkpoint stores them so (for step
/// programs that read them 16-bit, see LocalModel). Errors name the file.
rt::Result<rt::LlamaCheckpoint> loadCheckpoint(const std::string &path,
                                               bool keepSixteenBit = false);

} // namespace tra::engine

#endif // TRA_ENGINE_CHECKPOINT_H
