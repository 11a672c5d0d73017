//===- GgufLlama.cpp - LLaMA models in GGUF files -------------------------===//

#include "tra/Runtime/GgufLlama.h"

#include <algorithm>

#include <optional>
#include <unordered_map>

using namespace tra::rt;

/// The largest hyper-parameter accepted (sizes beyond it are not a model).
static constexpr uint64_t kMaxParam = uint64_t(1) << 31;

//===----------------------------------------------------------------------===//
// Hyper-parameters
//===----------------------------------------------------------------------===//

Result<LlamaParams> tra::rt::ggufLlamaParams(const GgufFile &file) {
  const std::string &path = file.path();
  Result<std::string_view> arch = file.getString("general.architecture");
  if (!arch)
    return arch.error();
  if (*arch != "llama")
    return fileError(path, "general.architecture " + quoteName(*arch) +
                               " is not supported (tra reads 'llama')");
  LlamaParams p;
  std::optional<Error> problem;
  auto integer = [&](const char *key, int64_t &out) {
    if (problem)
      return;
    Result<uint64_t> v = file.getUnsigned(key);
    if (!v)
      problem = v.error();
    else if (*v > kMaxParam)
      problem = fileError(path, "metadata key " + quoteName(key) + " is " +
                                    std::to_string(*v) + ", too large");
    else
      out = int64_t(*v);
  };
  auto number = [&](const char *key, double &out) {
    if (problem)
      return;
    Result<double> v = file.getFloat(key);
    if (!v)
      problem = v.error();
    else
      out = *v;
  };
  integer("llama.embedding_length", p.dim);
  integer("llama.feed_forward_length", p.hiddenDim);
  integer("llama.block_count", p.nLayers);
  integer("llama.attention.head_count", p.nHeads);
  p.nKvHeads = p.nHeads;
  if (file.find("llama.attention.head_count_kv"))
    integer("llama.attention.head_count_kv", p.nKvHeads);
  integer("llama.context_length", p.maxSeqLen);
  number("llama.attention.layer_norm_rms_epsilon", p.normEps);
  if (file.find("llama.rope.freq_base"))
    number("llama.rope.freq_base", p.ropeTheta);

  // The vocabulary size: stated, else the vocabulary's, else the
  // embedding's rows.
  const GgufTensor *embedding = file.findTensor("token_embd.weight");
  const char *vocabFrom = "llama.vocab_size";
  if (file.find("llama.vocab_size")) {
    integer("llama.vocab_size", p.vocabSize);
  } else if (const GgufEntry *tokens = file.find("tokenizer.ggml.tokens");
             tokens && tokens->type == GgufValueType::Array) {
    vocabFrom = "tokenizer.ggml.tokens";
    p.vocabSize = int64_t(std::min<uint64_t>(tokens->count, kMaxParam));
  } else if (embedding && embedding->shape.size() == 2) {
    vocabFrom = "token_embd.weight";
    p.vocabSize = embedding->shape[0];
  }
  if (problem)
    return *problem;
  if (!embedding)
    return fileError(path, "tensor 'token_embd.weight' "
                           "(tok_embeddings.weight) is missing");
  if (embedding->shape.size() == 2 && embedding->shape[0] != p.vocabSize)
    return fileError(path, "tensor 'token_embd.weight' has " +
                               std::to_string(embedding->shape[0]) +
                               " rows, but the vocabulary size (" + vocabFrom +
                               ") is " + std::to_string(p.vocabSize));
  p.sharedClassifier = file.findTensor("output.weight") == nullptr;
  if (Status valid = p.validate(); !valid.ok())
    return fileError(path, "invalid model parameters: " + valid.message());
  // Every layer has tensors of its own: refuse more layers than the file
  // has tensors before anything is built per layer (fuzz-gguf: a block
  // count of 4 million made opening the file list 38 million weight names
  // before finding the first one missing).
  if (uint64_t(p.nLayers) > file.tensors().size())
    return fileError(path, "llama.block_count " + std::to_string(p.nLayers) +
                               " is more layers than the file has tensors (" +
                               std::to_string(file.tensors().size()) + ")");

  // What tra's model does not compute.
  if (file.find("llama.rope.dimension_count")) {
    Result<uint64_t> rot = file.getUnsigned("llama.rope.dimension_count");
    if (!rot)
      return rot.error();
    if (*rot != uint64_t(p.headDim()))
      return fileError(path, "llama.rope.dimension_count " +
                                 std::to_string(*rot) +
                                 " differs from the head size " +
                                 std::to_string(p.headDim()) +
                                 ": partial rotary embeddings are not "
                                 "supported");
  }
  if (file.find("llama.rope.scaling.type")) {
    Result<std::string_view> scaling =
        file.getString("llama.rope.scaling.type");
    if (!scaling)
      return scaling.error();
    if (*scaling != "none")
      return fileError(path, "llama.rope.scaling.type " + quoteName(*scaling) +
                                 ": RoPE scaling is not supported");
  }
  if (file.findTensor("rope_freqs.weight"))
    return fileError(path, "tensor 'rope_freqs.weight' (Llama 3.1 RoPE "
                           "frequency factors) is not supported");
  if (file.find("llama.expert_count")) {
    Result<uint64_t> experts = file.getUnsigned("llama.expert_count");
    if (!experts)
      return experts.error();
    if (*experts > 0)
      return fileError(path, "llama.expert_count " + std::to_string(*experts) +
                                 ": mixture-of-experts models are not "
                                 "supported");
  }
  return p;
}

//===----------------------------------------------------------------------===//
// Tensor names
//===----------------------------------------------------------------------===//

std::string tra::rt::ggufLlamaTensorName(const std::string &metaName) {
  static const std::unordered_map<std::string, std::string> global = {
      {"tok_embeddings.weight", "token_embd.weight"},
      {"norm.weight", "output_norm.weight"},
      {"output.weight", "output.weight"}};
  static const std::unordered_map<std::string, std::string> layer = {
      {"attention_norm.weight", "attn_norm.weight"},
      {"attention.wq.weight", "attn_q.weight"},
      {"attention.wk.weight", "attn_k.weight"},
      {"attention.wv.weight", "attn_v.weight"},
      {"attention.wo.weight", "attn_output.weight"},
      {"ffn_norm.weight", "ffn_norm.weight"},
      {"feed_forward.w1.weight", "ffn_gate.weight"},
      {"feed_forward.w2.weight", "ffn_down.weight"},
      {"feed_forward.w3.weight", "ffn_up.weight"}};
  if (auto it = global.find(metaName); it != global.end())
    return it->second;
  // "layers.N.REST" -> "blk.N." + layer[REST].
  const std::string prefix = "layers.";
  if (metaName.compare(0, prefix.size(), prefix) != 0)
    return "";
  size_t dot = metaName.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size())
    return "";
  auto it = layer.find(metaName.substr(dot + 1));
  if (it == layer.end())
    return "";
  return "blk." + metaName.substr(prefix.size(), dot - prefix.size()) + "." +
         it->second;
}

//===----------------------------------------------------------------------===//
// TensorSource
//===----------------------------------------------------------------------===//

namespace {
/// A GGUF file's LLaMA weights under Meta's names.
class GgufSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>> open(const std::string &path) {
    Result<GgufFile> file = GgufFile::open(path);
    if (!file)
      return file.error();
    Result<LlamaParams> p = ggufLlamaParams(*file);
    if (!p)
      return p.error();
    std::unique_ptr<GgufSource> source(new GgufSource(path));
    source->params = *p;
    source->file.emplace(std::move(*file));
    for (auto &[name, shape] : llamaWeightShapes(*p)) {
      const std::string ggufName = ggufLlamaTensorName(name);
      const GgufTensor *tensor = source->file->findTensor(ggufName);
      if (!tensor)
        return fileError(path, "tensor " + quoteName(ggufName) + " (" + name +
                                   ") is missing");
      if (tensor->shape != shape)
        return fileError(path, "tensor " + quoteName(ggufName) + " (" + name +
                                   ") has shape " + formatShape(tensor->shape) +
                                   ", the metadata implies " +
                                   formatShape(shape));
      source->addTensor(
          {name, tensor->dtype(), shape, tensor->type == GgmlType::Q8_0});
      source->byMetaName.emplace(name, tensor);
    }
    return std::unique_ptr<TensorSource>(std::move(source));
  }
  const char *format() const override { return "gguf"; }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t) const override {
    const GgufTensor &tensor = *byMetaName.at(info.name);
    // A whole tensor in its stored type: a view into the mapped file (no
    // second copy of the weights in memory).
    if (tensor.type != GgmlType::Q8_0 && dtype == tensor.dtype() &&
        shape == tensor.shape &&
        std::all_of(offsets.begin(), offsets.end(),
                    [](int64_t o) { return o == 0; }))
      return file->read(tensor);
    Result<HostTensor> tile = file->readTile(tensor, offsets, shape);
    if (!tile || tile->dtype() == dtype)
      return tile;
    return convert(*tile, dtype);
  }
  Result<Q8Tensor> readStoredQ8_0(const TensorInfo &info) const override {
    Result<std::pair<HostTensor, HostTensor>> blocks =
        file->readQ8_0(*byMetaName.at(info.name));
    if (!blocks)
      return blocks.error();
    return Q8Tensor{std::move(blocks->first), std::move(blocks->second)};
  }

private:
  using TensorSource::TensorSource;
  std::optional<GgufFile> file;
  std::unordered_map<std::string, const GgufTensor *> byMetaName;
};
} // namespace

Result<std::unique_ptr<TensorSource>>
tra::rt::openGgufLlamaSource(const std::string &path) {
  return GgufSource::open(path);
}
