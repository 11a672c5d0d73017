//===- TensorSource.cpp - One way to read tiles of any checkpoint ---------===//

#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/ByteOrder.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/GgufLlama.h"
#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/Strings.h"
#include "tra/Runtime/TraSplit.h"

#include <cstring>
#include <sys/stat.h>

using namespace tra::rt;

namespace tra::rt::detail {
// Defined in TraSplit.cpp.
Result<std::unique_ptr<TensorSource>>
openTraSplitSource(const std::string &indexPath);
} // namespace tra::rt::detail

//===----------------------------------------------------------------------===//
// TensorSource
//===----------------------------------------------------------------------===//

const TensorInfo *TensorSource::find(std::string_view name) const {
  auto it = byName.find(std::string(name));
  return it == byName.end() ? nullptr : &infos[it->second];
}

void TensorSource::addTensor(TensorInfo info) {
  byName.emplace(info.name, infos.size());
  infos.push_back(std::move(info));
}

Result<HostTensor> TensorSource::readTile(std::string_view name,
                                          const std::vector<int64_t> &offsets,
                                          const std::vector<int64_t> &shape,
                                          std::optional<DType> dtype,
                                          int64_t preferRank) const {
  const TensorInfo *info = find(name);
  if (!info)
    return fileError(path(), "no tensor named " + quoteName(name));
  Status problem = checkTile(info->shape, offsets, shape);
  if (!problem.ok())
    return fileError(path(), "tensor " + quoteName(name) + " of shape " +
                                 formatShape(info->shape) + ": " +
                                 problem.message());
  return readRegion(*info, offsets, shape, dtype.value_or(info->dtype),
                    preferRank);
}

Result<HostTensor> TensorSource::read(std::string_view name,
                                      std::optional<DType> dtype) const {
  const TensorInfo *info = find(name);
  if (!info)
    return fileError(path(), "no tensor named " + quoteName(name));
  return readTile(name, std::vector<int64_t>(info->shape.size(), 0),
                  info->shape, dtype);
}

Result<Q8Tensor> TensorSource::readQ8_0(std::string_view name) const {
  const TensorInfo *info = find(name);
  if (!info)
    return fileError(path(), "no tensor named " + quoteName(name));
  if (!info->q8_0)
    return fileError(path(), "tensor " + quoteName(name) + " is stored as " +
                                 dtypeName(info->dtype) + ", not Q8_0");
  return readStoredQ8_0(*info);
}

Result<Q8Tensor> TensorSource::readStoredQ8_0(const TensorInfo &info) const {
  return fileError(path(), "tensor " + quoteName(info.name) +
                               ": this format stores no Q8_0 tensors");
}

/// Converts `tile` to `dtype` unless it already has it.
static HostTensor toDType(HostTensor tile, DType dtype) {
  return tile.dtype() == dtype ? tile : convert(tile, dtype);
}

//===----------------------------------------------------------------------===//
// llama2.c
//===----------------------------------------------------------------------===//

namespace {
/// A llama2.c .bin: every weight is a view into the mapped file.
class Llama2cSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>> open(const std::string &path) {
    Result<LlamaCheckpoint> ckpt = readLlama2c(path);
    if (!ckpt)
      return ckpt.error();
    std::unique_ptr<Llama2cSource> source(new Llama2cSource(path));
    source->params = ckpt->params;
    for (auto &[name, tensor] : ckpt->weights)
      source->addTensor({name, tensor.dtype(), tensor.shape()});
    source->ckpt = std::move(*ckpt);
    return std::unique_ptr<TensorSource>(std::move(source));
  }
  const char *format() const override { return "llama2.c"; }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t) const override {
    const HostTensor *tensor = ckpt.find(info.name);
    Result<HostTensor> tile = extractTile(*tensor, offsets, shape);
    if (!tile)
      return fileError(path(), "tensor " + quoteName(info.name) + ": " +
                                   tile.message());
    return toDType(std::move(*tile), dtype);
  }

private:
  using TensorSource::TensorSource;
  LlamaCheckpoint ckpt;
};

/// A Meta checkpoint directory (params.json + consolidated.NN.pth).
class MetaSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>> open(const std::string &dir) {
    Result<MetaCheckpoint> ckpt = MetaCheckpoint::open(dir);
    if (!ckpt)
      return ckpt.error();
    std::unique_ptr<MetaSource> source(new MetaSource(dir));
    source->params = ckpt->params();
    for (const MetaWeight &w : ckpt->weights())
      source->addTensor({w.name, w.dtype, w.shape});
    source->ckpt.emplace(std::move(*ckpt));
    return std::unique_ptr<TensorSource>(std::move(source));
  }
  const char *format() const override { return "meta"; }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t) const override {
    return ckpt->readTile(info.name, offsets, shape, dtype);
  }

private:
  using TensorSource::TensorSource;
  std::optional<MetaCheckpoint> ckpt;
};

/// A safetensors file or a sharded checkpoint's index.
class SafetensorsSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>> open(const std::string &path) {
    Result<SafetensorsCheckpoint> ckpt = SafetensorsCheckpoint::open(path);
    if (!ckpt)
      return ckpt.error();
    std::unique_ptr<SafetensorsSource> source(new SafetensorsSource(path));
    for (const std::string &name : ckpt->tensorNames()) {
      Result<const SafetensorsEntry *> entry = ckpt->entry(name);
      if (!entry)
        return entry.error();
      source->addTensor({name, (*entry)->dtype, (*entry)->shape});
    }
    source->ckpt.emplace(std::move(*ckpt));
    return std::unique_ptr<TensorSource>(std::move(source));
  }
  const char *format() const override {
    return ckpt->isSharded() ? "safetensors-index" : "safetensors";
  }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t) const override {
    Result<HostTensor> tile = ckpt->readTile(info.name, offsets, shape);
    if (!tile)
      return tile.error();
    return toDType(std::move(*tile), dtype);
  }

private:
  using TensorSource::TensorSource;
  std::optional<SafetensorsCheckpoint> ckpt;
};

/// A Hugging Face LLaMA checkpoint directory: config.json plus
/// model.safetensors or model.safetensors.index.json, with HF's names. It is
/// presented with Meta's names and layout: HF stores the rows of each head
/// of wq and wk permuted for its rotary convention (rotate_half: row
/// h*HD + j*HD/2 + i holds Meta's row h*HD + 2*i + j), which reading undoes.
class HfLlamaSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>> open(const std::string &dir,
                                                    const std::string &config,
                                                    const std::string &weights);
  const char *format() const override { return "hf-llama"; }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t) const override {
    const Mapped &m = mapped.at(info.name);
    if (m.heads == 0) {
      Result<HostTensor> tile = ckpt->readTile(m.hfName, offsets, shape);
      if (!tile)
        return tile.error();
      return toDType(std::move(*tile), dtype);
    }
    // Meta row r = h*HD + 2*i + j lives in HF row h*HD + j*HD/2 + i: copy
    // row by row (each a contiguous run of the region's columns).
    const int64_t hd = info.shape[0] / m.heads;
    HostTensor out = HostTensor::zeros(info.dtype, shape);
    const size_t rowBytes = size_t(shape[1]) * dtypeSize(info.dtype);
    for (int64_t k = 0; k < shape[0]; ++k) {
      const int64_t r = offsets[0] + k;
      const int64_t h = r / hd, i = (r % hd) / 2, j = r % 2;
      const int64_t hfRow = h * hd + j * (hd / 2) + i;
      Result<HostTensor> row =
          ckpt->readTile(m.hfName, {hfRow, offsets[1]}, {1, shape[1]});
      if (!row)
        return row.error();
      if (rowBytes)
        std::memcpy(out.mutableData() + k * rowBytes, row->data(), rowBytes);
    }
    return toDType(std::move(out), dtype);
  }

private:
  using TensorSource::TensorSource;
  struct Mapped {
    std::string hfName;
    /// Heads whose rows are permuted (wq: n_heads, wk: n_kv_heads), or 0.
    int64_t heads = 0;
  };
  std::optional<SafetensorsCheckpoint> ckpt;
  std::unordered_map<std::string, Mapped> mapped;
};

Result<std::unique_ptr<TensorSource>>
HfLlamaSource::open(const std::string &dir, const std::string &config,
                    const std::string &weights) {
  Result<std::string> text = readFile(config);
  if (!text)
    return text.error();
  Result<JsonValue> json = parseJson(*text, config);
  if (!json)
    return json.error();
  if (!json->isObject())
    return fileError(config, "must be a JSON object");
  LlamaParams p;
  std::string problem;
  auto integer = [&](const char *key, int64_t &out, bool required,
                     int64_t fallback) {
    const JsonValue *v = json->find(key);
    if (!v || v->isNull()) {
      if (required && problem.empty())
        problem = std::string("missing '") + key + "'";
      out = fallback;
    } else if (!v->isInteger()) {
      if (problem.empty())
        problem = std::string("'") + key + "' must be an integer";
    } else {
      out = v->getInteger();
    }
  };
  auto number = [&](const char *key, double &out, double fallback) {
    const JsonValue *v = json->find(key);
    if (!v || v->isNull())
      out = fallback;
    else if (!v->isNumber()) {
      if (problem.empty())
        problem = std::string("'") + key + "' must be a number";
    } else
      out = v->getNumber();
  };
  if (const JsonValue *type = json->find("model_type");
      type && !(type->isString() && type->getString() == "llama"))
    return fileError(config,
                     "model_type " + type->serialize() + " is not \"llama\"");
  if (const JsonValue *scaling = json->find("rope_scaling");
      scaling && !scaling->isNull())
    return fileError(config, "'rope_scaling' is not supported");
  integer("hidden_size", p.dim, true, 0);
  integer("intermediate_size", p.hiddenDim, true, 0);
  integer("num_hidden_layers", p.nLayers, true, 0);
  integer("num_attention_heads", p.nHeads, true, 0);
  integer("num_key_value_heads", p.nKvHeads, false, p.nHeads);
  integer("vocab_size", p.vocabSize, true, 0);
  integer("max_position_embeddings", p.maxSeqLen, false, 2048);
  number("rms_norm_eps", p.normEps, 1e-6);
  number("rope_theta", p.ropeTheta, 10000.0);
  if (const JsonValue *tie = json->find("tie_word_embeddings");
      tie && tie->isBool())
    p.sharedClassifier = tie->getBool();
  if (!problem.empty())
    return fileError(config, problem);
  if (Status e = p.validate(); !e.ok())
    return fileError(config, "invalid model parameters: " + e.message());

  Result<SafetensorsCheckpoint> ckpt = SafetensorsCheckpoint::open(weights);
  if (!ckpt)
    return ckpt.error();
  std::unique_ptr<HfLlamaSource> source(new HfLlamaSource(dir));
  source->params = p;
  auto hfName = [](const std::string &meta) -> std::string {
    static const std::pair<const char *, const char *> layer[] = {
        {"attention.wq.weight", "self_attn.q_proj.weight"},
        {"attention.wk.weight", "self_attn.k_proj.weight"},
        {"attention.wv.weight", "self_attn.v_proj.weight"},
        {"attention.wo.weight", "self_attn.o_proj.weight"},
        {"feed_forward.w1.weight", "mlp.gate_proj.weight"},
        {"feed_forward.w2.weight", "mlp.down_proj.weight"},
        {"feed_forward.w3.weight", "mlp.up_proj.weight"},
        {"attention_norm.weight", "input_layernorm.weight"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"}};
    if (meta == "tok_embeddings.weight")
      return "model.embed_tokens.weight";
    if (meta == "norm.weight")
      return "model.norm.weight";
    if (meta == "output.weight")
      return "lm_head.weight";
    size_t dot = meta.find('.', 7); // after "layers.N"
    std::string prefix = meta.substr(0, dot + 1), rest = meta.substr(dot + 1);
    for (auto &[m, h] : layer)
      if (rest == m)
        return "model." + prefix + h;
    return meta;
  };
  for (auto &[name, shape] : llamaWeightShapes(p)) {
    Mapped m{hfName(name), 0};
    Result<const SafetensorsEntry *> entry = ckpt->entry(m.hfName);
    if (!entry)
      return fileError(weights,
                       "tensor '" + m.hfName + "' (" + name + ") is missing");
    if ((*entry)->shape != shape)
      return fileError(weights, "tensor '" + m.hfName + "' has shape " +
                                    formatShape((*entry)->shape) +
                                    ", config.json implies " +
                                    formatShape(shape));
    if (name.find("attention.wq.") != std::string::npos)
      m.heads = p.nHeads;
    else if (name.find("attention.wk.") != std::string::npos)
      m.heads = p.nKvHeads;
    source->addTensor({name, (*entry)->dtype, shape});
    source->mapped.emplace(name, std::move(m));
  }
  source->ckpt.emplace(std::move(*ckpt));
  return std::unique_ptr<TensorSource>(std::move(source));
}
} // namespace

//===----------------------------------------------------------------------===//
// openTensorSource
//===----------------------------------------------------------------------===//

static bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Returns true if `file` starts like a safetensors file: an 8-byte header
/// length that fits in the file, then '{'.
static bool looksLikeSafetensors(const MappedFile &file) {
  if (file.size() < 9)
    return false;
  const uint64_t length = readLE64(file.data());
  return length >= 2 && length <= file.size() - 8 && file.data()[8] == '{';
}

Result<std::unique_ptr<TensorSource>>
tra::rt::openTensorSource(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    return fileError(path, systemError("cannot open", err));
  }
  if (S_ISDIR(st.st_mode)) {
    std::string dir = path;
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    if (isFile(dir + "/" + kTraSplitIndexName))
      return detail::openTraSplitSource(dir + "/" + kTraSplitIndexName);
    if (isFile(dir + "/params.json"))
      return MetaSource::open(path);
    if (isFile(dir + "/config.json")) {
      for (const char *weights :
           {"model.safetensors.index.json", "model.safetensors"})
        if (isFile(dir + "/" + weights))
          return HfLlamaSource::open(path, dir + "/config.json",
                                     dir + "/" + weights);
      return fileError(path, "holds config.json but neither "
                             "model.safetensors nor "
                             "model.safetensors.index.json");
    }
    return fileError(path, std::string("not a checkpoint directory: it holds "
                                       "none of ") +
                               kTraSplitIndexName +
                               " (tra-split), params.json (Meta) or "
                               "config.json (Hugging Face)");
  }
  if (endsWith(path, ".json")) {
    Result<std::string> text = readFile(path);
    if (!text)
      return text.error();
    Result<JsonValue> json = parseJson(*text, path);
    if (!json)
      return json.error();
    const JsonValue *format = json->find("format");
    if (format && format->isString() && format->getString() == "tra-split")
      return detail::openTraSplitSource(path);
    if (json->find("weight_map"))
      return SafetensorsSource::open(path);
    return fileError(path, "not a checkpoint index: neither \"format\": "
                           "\"tra-split\" nor a safetensors \"weight_map\"");
  }
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  if (endsWith(path, ".gguf") || hasGgufMagic((*file)->data(), (*file)->size()))
    return openGgufLlamaSource(path);
  if (endsWith(path, ".safetensors") || looksLikeSafetensors(**file))
    return SafetensorsSource::open(path);
  return Llama2cSource::open(path);
}
