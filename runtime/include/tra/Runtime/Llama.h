//===- Llama.h - LLaMA hyper-parameters and llama2.c checkpoints -*- C++
//-*-===//
//
// The hyper-parameters of a LLaMA-architecture model, and the reader of
// llama2.c `.bin` checkpoints. Tensors are named as in Meta's checkpoints
// ("tok_embeddings.weight", "layers.0.attention.wq.weight", ...), with
// matrices stored [out][in], so every checkpoint format maps onto the same
// model arguments.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_LLAMA_H
#define TRA_RUNTIME_LLAMA_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tra::rt {

/// Hyper-parameters of a LLaMA 1/2 model.
struct LlamaParams {
  int64_t dim = 0;
  int64_t hiddenDim = 0;
  int64_t nLayers = 0;
  int64_t nHeads = 0;
  int64_t nKvHeads = 0;
  int64_t vocabSize = 0;
  /// Longest sequence the model (and its KV cache) supports.
  int64_t maxSeqLen = 0;
  double normEps = 1e-5;
  double ropeTheta = 10000.0;
  /// The output classifier is the token embedding matrix.
  bool sharedClassifier = false;

  int64_t headDim() const { return nHeads ? dim / nHeads : 0; }
  int64_t kvDim() const { return nKvHeads * headDim(); }
  /// Succeeds if the parameters describe a buildable model, else fails with
  /// what is wrong ("dim 63 is not a multiple of n_heads 8").
  Status validate() const;
};

/// Meta's FFN hidden size: 2/3 of 4*dim, times an optional multiplier,
/// rounded up to a multiple of `multipleOf`.
int64_t metaHiddenDim(int64_t dim, int64_t multipleOf,
                      double ffnDimMultiplier = 1.0);

/// The names and shapes of the weights of a model with `params`, in Meta's
/// naming, in a fixed order (embedding, layers, final norm, classifier
/// unless shared).
std::vector<std::pair<std::string, std::vector<int64_t>>>
llamaWeightShapes(const LlamaParams &params);

/// Weights quantised as llama.cpp's Q8_0 are two tensors: the weight's name
/// holds its values as i8 (its shape), and this name (`name` + ".scales")
/// one f16 scale per block of kQ8BlockValues values along the last
/// dimension: value [r, c] = i8 [r, c] * scales [r, c / kQ8BlockValues].
inline constexpr int64_t kQ8BlockValues = 32;
std::string q8ScalesName(const std::string &weightName);

/// The rotary tables of Meta's precompute_freqs_cis: cos and sin of
/// pos * theta^(-2i/HD) for pos < maxSeqLen, i < HD/2, row-major (the
/// `freqs_cos` and `freqs_sin` arguments of the model's @forward).
void computeRopeTables(const LlamaParams &params, std::vector<float> &cosTable,
                       std::vector<float> &sinTable);

/// A checkpoint loaded in memory: parameters and named weights (views into
/// the memory-mapped file where the format allows).
struct LlamaCheckpoint {
  LlamaParams params;
  std::vector<std::pair<std::string, HostTensor>> weights;

  /// The weight named `name`, or null.
  const HostTensor *find(const std::string &name) const;
};

/// Reads a llama2.c `.bin` checkpoint (version 0: a 7 x int32 header, then
/// float32 arrays; a negative vocab_size means a separate classifier
/// follows). Checks the header and that the file holds exactly the bytes the
/// header implies; every error names the file.
Result<LlamaCheckpoint> readLlama2c(const std::string &path);

/// Writes `checkpoint` (every weight of its parameters, any element type,
/// stored as f32) as a llama2.c `.bin` file readLlama2c reads back,
/// atomically, with the rotary tables of computeRopeTables.
Status writeLlama2c(const std::string &path, const LlamaCheckpoint &checkpoint);

} // namespace tra::rt

#endif // TRA_RUNTIME_LLAMA_H
