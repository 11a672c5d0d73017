//===- MetaCheckpoint.cpp - Meta-format LLaMA checkpoints -----------------===//

#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/StridedCopy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <sys/stat.h>

using namespace tra::rt;

static std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

//===----------------------------------------------------------------------===//
// params.json
//===----------------------------------------------------------------------===//

int64_t MetaModelArgs::hiddenDim() const {
  return metaHiddenDim(dim, multipleOf, ffnDimMultiplier.value_or(1.0));
}

LlamaParams MetaModelArgs::toLlamaParams(int64_t vocab,
                                         bool sharedClassifier) const {
  LlamaParams p;
  p.dim = dim;
  p.hiddenDim = hiddenDim();
  p.nLayers = nLayers;
  p.nHeads = nHeads;
  p.nKvHeads = nKvHeads;
  p.vocabSize = vocab;
  p.maxSeqLen = maxSeqLen;
  p.normEps = normEps;
  p.ropeTheta = ropeTheta;
  p.sharedClassifier = sharedClassifier;
  return p;
}

Result<MetaModelArgs> tra::rt::parseMetaParams(std::string_view text,
                                               const std::string &source) {
  Result<JsonValue> json = parseJson(text, source);
  if (!json)
    return json.error();
  if (!json->isObject())
    return fileError(source, "params.json must hold a JSON object");
  const JsonValue &root = *json;
  auto present = [&](const char *key) -> const JsonValue * {
    const JsonValue *value = root.find(key);
    return value && !value->isNull() ? value : nullptr;
  };
  // Reads a positive integer; `required` keys must be present. Sizes are
  // at most 2^31 (as llama2.c's and GGUF's are), so that the sizes computed
  // from them (the FFN hidden size, weight shapes) cannot overflow.
  constexpr int64_t kMaxSize = int64_t(1) << 31;
  auto getInt = [&](const char *key, bool required,
                    int64_t &out) -> std::optional<Error> {
    const JsonValue *value = present(key);
    if (!value) {
      if (required)
        return fileError(source, std::string("missing '") + key + "'");
      return std::nullopt;
    }
    if (!value->isInteger() || value->getInteger() < 1)
      return fileError(source, std::string("'") + key +
                                   "' must be an integer >= 1, got " +
                                   value->serialize());
    if (value->getInteger() > kMaxSize)
      return fileError(source, std::string("'") + key + "' is " +
                                   value->serialize() + ", more than 2^31");
    out = value->getInteger();
    return std::nullopt;
  };
  auto getPositive = [&](const char *key, double &out) -> std::optional<Error> {
    const JsonValue *value = present(key);
    if (!value)
      return std::nullopt;
    if (!value->isNumber() || !(value->getNumber() > 0))
      return fileError(source, std::string("'") + key +
                                   "' must be a positive number, got " +
                                   value->serialize());
    out = value->getNumber();
    return std::nullopt;
  };

  MetaModelArgs args;
  if (auto e = getInt("dim", true, args.dim))
    return *e;
  if (auto e = getInt("n_layers", true, args.nLayers))
    return *e;
  if (auto e = getInt("n_heads", true, args.nHeads))
    return *e;
  args.nKvHeads = args.nHeads;
  if (auto e = getInt("n_kv_heads", false, args.nKvHeads))
    return *e;
  const JsonValue *vocab = present("vocab_size");
  if (!vocab)
    return fileError(source, "missing 'vocab_size'");
  if (!vocab->isInteger() ||
      (vocab->getInteger() < 1 && vocab->getInteger() != -1))
    return fileError(source, "'vocab_size' must be -1 or an integer >= 1, "
                             "got " +
                                 vocab->serialize());
  if (vocab->getInteger() > kMaxSize)
    return fileError(source, "'vocab_size' is " + vocab->serialize() +
                                 ", more than 2^31");
  args.vocabSize = vocab->getInteger();
  if (auto e = getInt("multiple_of", false, args.multipleOf))
    return *e;
  if (present("ffn_dim_multiplier")) {
    double multiplier = 1.0;
    if (auto e = getPositive("ffn_dim_multiplier", multiplier))
      return *e;
    if (multiplier > 1024)
      return fileError(source, "'ffn_dim_multiplier' is " +
                                   present("ffn_dim_multiplier")->serialize() +
                                   ", more than 1024");
    args.ffnDimMultiplier = multiplier;
  }
  if (auto e = getPositive("norm_eps", args.normEps))
    return *e;
  if (auto e = getPositive("rope_theta", args.ropeTheta))
    return *e;
  if (auto e = getInt("max_seq_len", false, args.maxSeqLen))
    return *e;
  if (const JsonValue *scaled = present("use_scaled_rope")) {
    if (!scaled->isBool())
      return fileError(source, "'use_scaled_rope' must be a boolean");
    if (scaled->getBool())
      return fileError(source, "'use_scaled_rope': true (LLaMA 3.1 rope "
                               "frequency scaling) is not supported");
  }
  return args;
}

Result<MetaModelArgs> tra::rt::readMetaParams(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.error();
  return parseMetaParams(*text, path);
}

//===----------------------------------------------------------------------===//
// Split rule
//===----------------------------------------------------------------------===//

int tra::rt::metaSplitDim(std::string_view name) {
  // Strip "layers.N." so the rest names the weight within a layer.
  if (name.rfind("layers.", 0) == 0) {
    size_t dot = name.find('.', 7);
    if (dot != std::string_view::npos)
      name.remove_prefix(dot + 1);
  }
  static const char *const rows[] = {
      "attention.wq.weight",    "attention.wk.weight",    "attention.wv.weight",
      "feed_forward.w1.weight", "feed_forward.w3.weight", "output.weight"};
  static const char *const columns[] = {
      "attention.wo.weight", "feed_forward.w2.weight", "tok_embeddings.weight"};
  for (const char *row : rows)
    if (name == row)
      return 0;
  for (const char *column : columns)
    if (name == column)
      return 1;
  return -1;
}

std::string tra::rt::metaShardName(int64_t index) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "consolidated.%02lld.pth",
                static_cast<long long>(index));
  return buffer;
}

/// Parses "consolidated.NN.pth"; returns the index or -1.
static int64_t parseShardName(const std::string &name) {
  const std::string head = "consolidated.", tail = ".pth";
  if (name.size() <= head.size() + tail.size() ||
      name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return -1;
  std::string digits =
      name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(digits);
}

//===----------------------------------------------------------------------===//
// MetaCheckpoint
//===----------------------------------------------------------------------===//

Result<MetaCheckpoint> MetaCheckpoint::open(const std::string &dir) {
  MetaCheckpoint ckpt;
  ckpt.dirPath = dir;
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    return fileError(dir,
                     systemError("cannot open checkpoint directory", errno));
  if (!S_ISDIR(info.st_mode))
    return fileError(dir, "not a directory (a Meta checkpoint is a directory "
                          "holding params.json and consolidated.NN.pth)");

  const std::string paramsPath = joinPath(dir, "params.json");
  if (::stat(paramsPath.c_str(), &info) != 0)
    return fileError(paramsPath, "missing: a Meta checkpoint directory holds "
                                 "params.json and consolidated.NN.pth files");
  Result<MetaModelArgs> args = readMetaParams(paramsPath);
  if (!args)
    return args.error();
  ckpt.modelArgs = *args;

  // Find the shards: consolidated.00.pth .. consolidated.(MP-1).pth.
  std::map<int64_t, std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    int64_t index = parseShardName(name);
    if (index < 0)
      continue;
    auto [slot, inserted] = found.emplace(index, name);
    if (!inserted)
      return fileError(dir, "shard " + std::to_string(index) +
                                " appears twice: " + slot->second + " and " +
                                name);
  }
  if (ec)
    return fileError(dir, "cannot list the directory: " + ec.message());
  if (found.empty())
    return fileError(dir, "no consolidated.NN.pth shard files");
  const int64_t shardCount = found.rbegin()->first + 1;
  for (int64_t k = 0; k < shardCount; ++k) {
    if (found.count(k))
      continue;
    std::string present;
    for (const auto &[index, name] : found)
      present += (present.empty() ? "" : ", ") + name;
    return fileError(joinPath(dir, metaShardName(k)),
                     "missing shard: the directory holds " + present +
                         ", so shards " + metaShardName(0) + " to " +
                         metaShardName(shardCount - 1) + " are expected");
  }
  for (const auto &[index, name] : found) {
    Result<PthFile> shard = PthFile::open(joinPath(dir, name));
    if (!shard)
      return shard.error();
    ckpt.shardFiles.push_back(std::move(*shard));
  }
  const PthFile &first = ckpt.shardFiles.front();

  // The vocabulary size may come from the embedding (split along dim 1, so
  // every shard has all rows).
  int64_t vocab = ckpt.modelArgs.vocabSize;
  if (vocab < 0) {
    const PthTensor *embedding = first.find("tok_embeddings.weight");
    if (!embedding || embedding->shape.size() != 2)
      return fileError(first.path(),
                       "params.json's vocab_size is -1, but there is no 2-D "
                       "tensor 'tok_embeddings.weight' to take it from");
    vocab = embedding->shape[0];
  }
  bool shared = first.find("output.weight") == nullptr;
  ckpt.llamaParams = ckpt.modelArgs.toLlamaParams(vocab, shared);
  if (Status problem = ckpt.llamaParams.validate(); !problem.ok())
    return fileError(paramsPath,
                     "invalid model parameters: " + problem.message());

  // The logical weights, and whether MP divides their split dimensions.
  for (auto &[name, shape] : llamaWeightShapes(ckpt.llamaParams)) {
    MetaWeight weight;
    weight.name = name;
    weight.shape = shape;
    weight.splitDim = metaSplitDim(name);
    if (weight.splitDim >= 0 && shape[weight.splitDim] % shardCount != 0)
      return fileError(dir, "weight " + quoteName(name) + " of shape " +
                                formatShape(shape) + " cannot be split into " +
                                std::to_string(shardCount) +
                                " shards: Meta's rule splits it along dim " +
                                std::to_string(weight.splitDim) + ", and " +
                                std::to_string(shape[weight.splitDim]) +
                                " is not a multiple of the shard count " +
                                std::to_string(shardCount));
    ckpt.byName.emplace(name, ckpt.weightList.size());
    ckpt.weightList.push_back(std::move(weight));
  }

  // Every shard must hold exactly these weights, with the per-shard shapes
  // and one floating-point dtype per weight.
  for (int64_t k = 0; k < shardCount; ++k) {
    const PthFile &shard = ckpt.shardFiles[k];
    for (MetaWeight &weight : ckpt.weightList) {
      const PthTensor *tensor = shard.find(weight.name);
      if (!tensor)
        return fileError(shard.path(),
                         "tensor " + quoteName(weight.name) + " is missing");
      std::vector<int64_t> expected = weight.shape;
      std::string how = "replicated in every shard";
      if (weight.splitDim >= 0) {
        expected[weight.splitDim] /= shardCount;
        how = "the logical shape " + formatShape(weight.shape) + " split " +
              std::to_string(shardCount) + " ways along dim " +
              std::to_string(weight.splitDim);
      }
      if (tensor->shape != expected)
        return fileError(shard.path(),
                         "tensor " + quoteName(weight.name) + " has shape " +
                             formatShape(tensor->shape) + ", expected " +
                             formatShape(expected) + " (" + how + ")");
      if (!isFloatingPoint(tensor->dtype))
        return fileError(shard.path(), "tensor " + quoteName(weight.name) +
                                           " has dtype " +
                                           dtypeName(tensor->dtype) +
                                           ", expected a floating-point "
                                           "dtype (f32, f16, bf16, f64)");
      if (k == 0)
        weight.dtype = tensor->dtype;
      else if (tensor->dtype != weight.dtype)
        return fileError(shard.path(),
                         "tensor " + quoteName(weight.name) + " has dtype " +
                             dtypeName(tensor->dtype) + ", but " +
                             dtypeName(weight.dtype) + " in " + first.path());
      if (weight.splitDim < 0 && k > 0) {
        Result<HostTensor> mine = shard.get(weight.name);
        Result<HostTensor> reference = first.get(weight.name);
        if (!mine)
          return mine.error();
        if (!reference)
          return reference.error();
        if (!mine->identical(*reference))
          return fileError(shard.path(),
                           "replicated tensor " + quoteName(weight.name) +
                               " differs from its copy in " + first.path());
      }
    }
    for (const PthTensor &tensor : shard.tensors())
      if (tensor.name != "rope.freqs" && !ckpt.byName.count(tensor.name))
        return fileError(
            shard.path(),
            "unexpected tensor " + quoteName(tensor.name) +
                " (not a weight of the model params.json describes: " +
                std::to_string(ckpt.llamaParams.nLayers) + " layers" +
                (shared ? ", no output.weight" : "") + ")");
  }
  return ckpt;
}

const MetaWeight *MetaCheckpoint::find(std::string_view name) const {
  auto it = byName.find(std::string(name));
  return it == byName.end() ? nullptr : &weightList[it->second];
}

Result<HostTensor> MetaCheckpoint::readTile(std::string_view name,
                                            const std::vector<int64_t> &offsets,
                                            const std::vector<int64_t> &sizes,
                                            DType dtype) const {
  const MetaWeight *weight = find(name);
  if (!weight)
    return fileError(dirPath, "no weight named " + quoteName(name));
  Status problem = checkTile(weight->shape, offsets, sizes);
  if (!problem.ok())
    return fileError(dirPath,
                     "weight " + quoteName(name) + ": " + problem.message());
  HostTensor tile = HostTensor::zeros(weight->dtype, sizes);
  const std::vector<int64_t> strides = rowMajorStrides(sizes);
  const int d = weight->splitDim;
  if (tile.numElements() > 0) {
    if (d < 0) {
      Status status = shardFiles.front().readTileInto(
          name, offsets, sizes, tile.mutableData(), strides);
      if (!status)
        return status.error();
    } else {
      // Shard k holds rows (or columns) [k * block, (k + 1) * block).
      const int64_t block = weight->shape[d] / shardCount();
      const int64_t begin = offsets[d], end = offsets[d] + sizes[d];
      const size_t elementSize = dtypeSize(weight->dtype);
      uint8_t *out = tile.mutableData();
      for (int64_t k = begin / block; k * block < end; ++k) {
        int64_t from = std::max(begin, k * block);
        int64_t to = std::min(end, (k + 1) * block);
        std::vector<int64_t> localOffsets = offsets, localSizes = sizes;
        localOffsets[d] = from - k * block;
        localSizes[d] = to - from;
        Status status = shardFiles[k].readTileInto(
            name, localOffsets, localSizes,
            out + (from - begin) * strides[d] * elementSize, strides);
        if (!status)
          return status.error();
      }
    }
  }
  if (dtype == weight->dtype)
    return tile;
  return convert(tile, dtype);
}

Result<HostTensor> MetaCheckpoint::read(std::string_view name,
                                        DType dtype) const {
  const MetaWeight *weight = find(name);
  if (!weight)
    return fileError(dirPath, "no weight named " + quoteName(name));
  return readTile(name, std::vector<int64_t>(weight->shape.size(), 0),
                  weight->shape, dtype);
}

Result<LlamaCheckpoint>
MetaCheckpoint::loadAll(std::optional<DType> dtype) const {
  LlamaCheckpoint result;
  result.params = llamaParams;
  for (const MetaWeight &weight : weightList) {
    Result<HostTensor> tensor = read(weight.name, dtype.value_or(weight.dtype));
    if (!tensor)
      return tensor.error();
    result.weights.emplace_back(weight.name, std::move(*tensor));
    // Weight by weight: the copies and the pages they came from are not
    // resident together.
    for (const PthFile &shard : shardFiles)
      shard.releasePages();
  }
  return result;
}
