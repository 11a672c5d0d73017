//===- MetaCheckpoint.h - Meta-format LLaMA checkpoints ------- -*- C++ -*-===//
//
// Reads LLaMA checkpoints in the layout Meta distributes them in: a directory
// holding `params.json` and one `consolidated.NN.pth` file (a torch.save
// state dict, see Pth.h) per model-parallel rank, NN = 00 .. MP-1.
//
// Meta's model-parallel split rule: `attention.wq/wk/wv`, `feed_forward.w1/w3`
// and `output` are split along dim 0 (their rows), `attention.wo`,
// `feed_forward.w2` and `tok_embeddings` along dim 1 (their columns), each
// into MP equal consecutive blocks, shard k holding block k; the 1-D norms
// are replicated in every shard; `rope.freqs` (LLaMA 1) is ignored.
//
// `MetaCheckpoint` presents the logical (unsplit) weights, named and shaped as
// `llamaWeightShapes` says, and reads any rectangular tile of one by reading
// only the byte ranges of the shards that hold it: a process can take exactly
// the part of a weight its plan assigns to it, whatever split the checkpoint
// came in, without ever holding a whole tensor.
//
// Opening checks params.json, that shards 00 .. MP-1 all exist, that MP
// divides every split dimension, that every shard holds exactly the expected
// tensors with the expected per-shard shapes and one floating-point dtype per
// tensor (f32, f16, bf16 or f64), and that the replicated tensors are
// bit-identical in all shards. Only the replicated (1-D) tensors are read at
// open. Every message names the file (or directory) and the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_METACHECKPOINT_H
#define TRA_RUNTIME_METACHECKPOINT_H

#include "tra/Runtime/Error.h"
#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Pth.h"
#include "tra/Runtime/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tra::rt {

/// The model arguments of a Meta `params.json`.
struct MetaModelArgs {
  int64_t dim = 0;
  int64_t nLayers = 0;
  int64_t nHeads = 0;
  /// n_kv_heads; n_heads when absent (or null).
  int64_t nKvHeads = 0;
  /// vocab_size; -1 means "take it from the checkpoint's tok_embeddings".
  int64_t vocabSize = -1;
  int64_t multipleOf = 256;
  /// ffn_dim_multiplier, if present and not null.
  std::optional<double> ffnDimMultiplier;
  double normEps = 1e-5;
  double ropeTheta = 10000.0;
  /// max_seq_len if present, else 2048 (the default of Meta's ModelArgs;
  /// params.json usually leaves it to the caller).
  int64_t maxSeqLen = 2048;

  /// Returns the FFN hidden size (`metaHiddenDim`).
  int64_t hiddenDim() const;
  /// Returns the LlamaParams of these arguments with the given vocabulary
  /// size (which replaces a -1 `vocabSize`) and classifier sharing.
  LlamaParams toLlamaParams(int64_t vocab, bool sharedClassifier) const;
};

/// Parses a Meta `params.json`. Requires "dim", "n_layers", "n_heads" and
/// "vocab_size" (an integer >= 1, or -1); "n_kv_heads", "multiple_of" (256),
/// "ffn_dim_multiplier", "norm_eps" (1e-5), "rope_theta" (10000) and
/// "max_seq_len" (2048) are optional, null meaning absent. Other keys are
/// ignored, except "use_scaled_rope": true (LLaMA 3.1's rope scaling), which is
/// refused as unsupported. Every message names `source`.
Result<MetaModelArgs> parseMetaParams(std::string_view text,
                                      const std::string &source);
/// Reads and parses the `params.json` at `path`.
Result<MetaModelArgs> readMetaParams(const std::string &path);

/// Returns the dimension along which Meta's model-parallel checkpoints split
/// the weight `name` (0 or 1), or -1 if it is replicated in every shard.
int metaSplitDim(std::string_view name);

/// Returns the file name of shard `index`: "consolidated.00.pth", ...
std::string metaShardName(int64_t index);

/// One logical weight of a Meta checkpoint.
struct MetaWeight {
  std::string name;
  /// The full (unsplit) shape.
  std::vector<int64_t> shape;
  /// The dtype stored in the shards.
  DType dtype = DType::F16;
  /// The split dimension (0 or 1), or -1 if replicated.
  int splitDim = -1;
};

/// A Meta-format checkpoint directory, opened and validated.
class MetaCheckpoint {
public:
  /// Opens the checkpoint in directory `dir` (see the file comment).
  static Result<MetaCheckpoint> open(const std::string &dir);

  /// Returns the directory the checkpoint was opened from.
  const std::string &directory() const { return dirPath; }
  /// Returns params.json's arguments as written (vocabSize may be -1).
  const MetaModelArgs &args() const { return modelArgs; }
  /// Returns the model's hyper-parameters (vocabulary size resolved; the
  /// classifier is shared only if the checkpoint has no output.weight).
  const LlamaParams &params() const { return llamaParams; }
  /// Returns the number of model-parallel shards (MP).
  int64_t shardCount() const { return static_cast<int64_t>(shardFiles.size()); }
  /// Returns the shard files, in rank order.
  const std::vector<PthFile> &shards() const { return shardFiles; }
  /// Returns the logical weights, in `llamaWeightShapes` order (their shapes
  /// equal `llamaWeightShapes(params())`).
  const std::vector<MetaWeight> &weights() const { return weightList; }
  /// Returns the weight named `name`, or null.
  const MetaWeight *find(std::string_view name) const;

  /// Returns the tile of extent `sizes` at `offsets` of the logical weight
  /// `name`, converted to `dtype` (see `convert`). Reads only the tile's
  /// elements, from the shards that hold them.
  Result<HostTensor> readTile(std::string_view name,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes,
                              DType dtype = DType::F32) const;
  /// Returns the whole logical weight `name`, converted to `dtype`.
  Result<HostTensor> read(std::string_view name,
                          DType dtype = DType::F32) const;
  /// Reads every weight, converted to `dtype` (none: in the dtype the
  /// shards store), into memory of its own (the shards' pages are released
  /// after each weight: the weights are never resident twice).
  Result<LlamaCheckpoint>
  loadAll(std::optional<DType> dtype = DType::F32) const;

private:
  MetaCheckpoint() = default;

  std::string dirPath;
  MetaModelArgs modelArgs;
  LlamaParams llamaParams;
  std::vector<PthFile> shardFiles;
  std::vector<MetaWeight> weightList;
  std::unordered_map<std::string, size_t> byName;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_METACHECKPOINT_H
