//===- Llama.cpp - LLaMA hyper-parameters and llama2.c checkpoints --------===//

#include "tra/Runtime/Llama.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/File.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace tra::rt;

Status LlamaParams::validate() const {
  for (auto [name, v] : {std::pair<const char *, int64_t>{"dim", dim},
                         {"hidden_dim", hiddenDim},
                         {"n_layers", nLayers},
                         {"n_heads", nHeads},
                         {"n_kv_heads", nKvHeads},
                         {"vocab_size", vocabSize},
                         {"seq_len", maxSeqLen}})
    if (v <= 0)
      return Error{std::string(name) + " must be positive, got " +
                   std::to_string(v)};
  if (dim % nHeads)
    return Error{"dim " + std::to_string(dim) +
                 " is not a multiple of n_heads " + std::to_string(nHeads)};
  if (headDim() % 2)
    return Error{"head dim " + std::to_string(headDim()) +
                 " is odd; rotary embeddings rotate pairs"};
  if (nHeads % nKvHeads)
    return Error{"n_heads " + std::to_string(nHeads) +
                 " is not a multiple of n_kv_heads " +
                 std::to_string(nKvHeads)};
  if (!(normEps > 0))
    return Error{"norm_eps must be positive"};
  if (!(ropeTheta > 0))
    return Error{"rope_theta must be positive"};
  return Status::success();
}

int64_t tra::rt::metaHiddenDim(int64_t dim, int64_t multipleOf,
                               double ffnDimMultiplier) {
  int64_t hidden = 2 * (4 * dim) / 3;
  hidden = static_cast<int64_t>(ffnDimMultiplier * double(hidden));
  return multipleOf * ((hidden + multipleOf - 1) / multipleOf);
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
tra::rt::llamaWeightShapes(const LlamaParams &p) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  shapes.push_back({"tok_embeddings.weight", {p.vocabSize, p.dim}});
  for (int64_t l = 0; l < p.nLayers; ++l) {
    std::string pre = "layers." + std::to_string(l) + ".";
    shapes.push_back({pre + "attention_norm.weight", {p.dim}});
    shapes.push_back({pre + "attention.wq.weight", {p.dim, p.dim}});
    shapes.push_back({pre + "attention.wk.weight", {p.kvDim(), p.dim}});
    shapes.push_back({pre + "attention.wv.weight", {p.kvDim(), p.dim}});
    shapes.push_back({pre + "attention.wo.weight", {p.dim, p.dim}});
    shapes.push_back({pre + "ffn_norm.weight", {p.dim}});
    shapes.push_back({pre + "feed_forward.w1.weight", {p.hiddenDim, p.dim}});
    shapes.push_back({pre + "feed_forward.w2.weight", {p.dim, p.hiddenDim}});
    shapes.push_back({pre + "feed_forward.w3.weight", {p.hiddenDim, p.dim}});
  }
  shapes.push_back({"norm.weight", {p.dim}});
  if (!p.sharedClassifier)
    shapes.push_back({"output.weight", {p.vocabSize, p.dim}});
  return shapes;
}

std::string tra::rt::q8ScalesName(const std::string &weightName) {
  return weightName + ".scales";
}

void tra::rt::computeRopeTables(const LlamaParams &p,
                                std::vector<float> &cosTable,
                                std::vector<float> &sinTable) {
  int64_t hd = p.headDim(), half = hd / 2;
  cosTable.assign(p.maxSeqLen * half, 0.0f);
  sinTable.assign(p.maxSeqLen * half, 0.0f);
  for (int64_t t = 0; t < p.maxSeqLen; ++t)
    for (int64_t i = 0; i < half; ++i) {
      // Meta: freqs = 1 / theta^(arange(0, hd, 2) / hd), computed in f32.
      float freq =
          1.0f / std::pow(float(p.ropeTheta), float(2 * i) / float(hd));
      float angle = float(t) * freq;
      cosTable[t * half + i] = std::cos(angle);
      sinTable[t * half + i] = std::sin(angle);
    }
}

const HostTensor *LlamaCheckpoint::find(const std::string &name) const {
  for (const auto &[n, t] : weights)
    if (n == name)
      return &t;
  return nullptr;
}

Result<LlamaCheckpoint> tra::rt::readLlama2c(const std::string &path) {
  auto file = MappedFile::open(path);
  if (!file)
    return file.error();
  std::shared_ptr<const MappedFile> mapped = *file;
  const uint8_t *data = mapped->data();
  size_t size = mapped->size();
  constexpr size_t kHeader = 7 * sizeof(int32_t);
  if (size < kHeader)
    return fileError(path,
                     "truncated llama2.c header: " + std::to_string(size) +
                         " bytes, need " + std::to_string(kHeader));
  int32_t h[7];
  std::memcpy(h, data, kHeader);
  LlamaCheckpoint ckpt;
  LlamaParams &p = ckpt.params;
  p.dim = h[0];
  p.hiddenDim = h[1];
  p.nLayers = h[2];
  p.nHeads = h[3];
  p.nKvHeads = h[4];
  p.sharedClassifier = h[5] > 0;
  p.vocabSize = h[5] < 0 ? -int64_t(h[5]) : h[5];
  p.maxSeqLen = h[6];
  if (Status e = p.validate(); !e.ok())
    return fileError(path,
                     "not a valid llama2.c checkpoint header: " + e.message());

  // llama2.c layout: per-kind arrays covering all layers.
  const int64_t L = p.nLayers, D = p.dim, F = p.hiddenDim, KV = p.kvDim();
  const int64_t V = p.vocabSize, T = p.maxSeqLen, HD = p.headDim();
  // Element counts of the arrays in file order, as factors: the header's
  // fields are untrusted, and their products can overflow.
  std::vector<std::vector<int64_t>> order = {
      {V, D},    {L, D},      {L, D, D},  {L, KV, D}, {L, KV, D},
      {L, D, D}, {L, D},      {L, F, D},  {L, D, F},  {L, F, D},
      {D},       {T, HD / 2}, {T, HD / 2}};
  if (!p.sharedClassifier)
    order.push_back({V, D});
  std::optional<int64_t> total = int64_t(kHeader);
  for (const std::vector<int64_t> &factors : order) {
    std::optional<int64_t> bytes = int64_t(sizeof(float));
    for (int64_t factor : factors)
      bytes = bytes ? checkedMul(*bytes, factor) : std::nullopt;
    total = total && bytes ? checkedAdd(*total, *bytes) : std::nullopt;
  }
  if (!total)
    return fileError(path, "the header (dim " + std::to_string(D) + ", " +
                               std::to_string(L) + " layers, vocab " +
                               std::to_string(V) +
                               ") implies more than 2^63 bytes");
  const uint64_t expected = uint64_t(*total);
  if (size != expected)
    return fileError(
        path, std::string(size < expected ? "truncated"
                                          : "unexpected trailing data") +
                  ": the header (dim " + std::to_string(D) + ", " +
                  std::to_string(L) + " layers, vocab " + std::to_string(V) +
                  ") implies " + std::to_string(expected) +
                  " bytes, the file has " + std::to_string(size));

  std::shared_ptr<const void> owner = mapped;
  const uint8_t *cursor = data + kHeader;
  auto take = [&](int64_t count) {
    const uint8_t *at = cursor;
    cursor += count * sizeof(float);
    return at;
  };
  auto view = [&](const uint8_t *at, std::vector<int64_t> shape) {
    return HostTensor::view(DType::F32, std::move(shape), at, owner);
  };
  auto layerName = [](int64_t l, const char *suffix) {
    return "layers." + std::to_string(l) + "." + suffix;
  };
  auto addLayered = [&](const char *suffix, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    for (int64_t l = 0; l < L; ++l)
      ckpt.weights.push_back({layerName(l, suffix), view(take(n), shape)});
  };
  const uint8_t *emb = take(V * D);
  ckpt.weights.push_back({"tok_embeddings.weight", view(emb, {V, D})});
  addLayered("attention_norm.weight", {D});
  addLayered("attention.wq.weight", {D, D});
  addLayered("attention.wk.weight", {KV, D});
  addLayered("attention.wv.weight", {KV, D});
  addLayered("attention.wo.weight", {D, D});
  addLayered("ffn_norm.weight", {D});
  addLayered("feed_forward.w1.weight", {F, D});
  addLayered("feed_forward.w2.weight", {D, F});
  addLayered("feed_forward.w3.weight", {F, D});
  ckpt.weights.push_back({"norm.weight", view(take(D), {D})});
  take(T * HD / 2); // freq_cis_real: recomputed from rope_theta
  take(T * HD / 2); // freq_cis_imag
  if (!p.sharedClassifier)
    ckpt.weights.push_back({"output.weight", view(take(V * D), {V, D})});
  return ckpt;
}

Status tra::rt::writeLlama2c(const std::string &path,
                             const LlamaCheckpoint &checkpoint) {
  const LlamaParams &p = checkpoint.params;
  if (Status e = p.validate(); !e.ok())
    return fileError(path,
                     "cannot write a llama2.c checkpoint: " + e.message());
  const int64_t limit = std::numeric_limits<int32_t>::max();
  for (int64_t v : {p.dim, p.hiddenDim, p.nLayers, p.nHeads, p.nKvHeads,
                    p.vocabSize, p.maxSeqLen})
    if (v > limit)
      return fileError(path, "a hyper-parameter exceeds the llama2.c "
                             "header's 32-bit fields");
  auto writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.error();
  int32_t header[7] = {int32_t(p.dim),      int32_t(p.hiddenDim),
                       int32_t(p.nLayers),  int32_t(p.nHeads),
                       int32_t(p.nKvHeads), int32_t(p.vocabSize),
                       int32_t(p.maxSeqLen)};
  if (!p.sharedClassifier)
    header[5] = -header[5];
  if (Status s = writer->write(header, sizeof(header)); !s.ok())
    return s;
  auto put = [&](const std::string &name) -> Status {
    const HostTensor *w = checkpoint.find(name);
    if (!w)
      return fileError(path, "the checkpoint has no weight " + quoteName(name));
    HostTensor f = convert(*w, DType::F32);
    return writer->write(f.data(), f.byteSize());
  };
  auto layered = [&](const char *suffix) -> Status {
    for (int64_t l = 0; l < p.nLayers; ++l)
      if (Status s = put("layers." + std::to_string(l) + "." + suffix); !s.ok())
        return s;
    return Status::success();
  };
  std::vector<float> cos, sin;
  computeRopeTables(p, cos, sin);
  Status s = put("tok_embeddings.weight");
  for (const char *suffix :
       {"attention_norm.weight", "attention.wq.weight", "attention.wk.weight",
        "attention.wv.weight", "attention.wo.weight", "ffn_norm.weight",
        "feed_forward.w1.weight", "feed_forward.w2.weight",
        "feed_forward.w3.weight"})
    if (s.ok())
      s = layered(suffix);
  if (s.ok())
    s = put("norm.weight");
  if (s.ok())
    s = writer->write(cos.data(), cos.size() * sizeof(float));
  if (s.ok())
    s = writer->write(sin.data(), sin.size() * sizeof(float));
  if (s.ok() && !p.sharedClassifier)
    s = put("output.weight");
  if (!s.ok())
    return s;
  return writer->commit();
}
