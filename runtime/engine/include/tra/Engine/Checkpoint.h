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

/// Loads the LLaMA checkpoint at `path`: a llama2.c `.bin` file (mapped, f32)
/// or a Meta checkpoint directory (params.json + consolidated.NN.pth, every
/// shard merged into whole f32 weights). Errors name the file.
rt::Result<rt::LlamaCheckpoint> loadCheckpoint(const std::string &path);

} // namespace tra::engine

#endif // TRA_ENGINE_CHECKPOINT_H
