//===- TraSplit.cpp - Checkpoints re-split for a plan, one file per rank --===//

#include "tra/Runtime/TraSplit.h"
#include "tra/Runtime/File.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/StridedCopy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <unistd.h>

using namespace tra::rt;
namespace fs = std::filesystem;

std::string tra::rt::traSplitRankFileName(int64_t rank, int64_t ranks) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "rank-%05lld-of-%05lld.safetensors",
                static_cast<long long>(rank), static_cast<long long>(ranks));
  return buffer;
}

//===----------------------------------------------------------------------===//
// Layout checks
//===----------------------------------------------------------------------===//

/// Returns true if the boxes [a, a + as) and [b, b + bs) share an element.
static bool overlaps(const SplitTile &a, const SplitTile &b) {
  for (size_t d = 0; d < a.offsets.size(); ++d)
    if (std::max(a.offsets[d], b.offsets[d]) >=
        std::min(a.offsets[d] + a.shape[d], b.offsets[d] + b.shape[d]))
      return false;
  return true;
}

Status tra::rt::checkSplitLayout(SplitLayout &layout,
                                 const std::string &source) {
  if (layout.ranks < 1)
    return fileError(source, "the number of ranks must be at least 1, got " +
                                 std::to_string(layout.ranks));
  std::map<std::string, size_t> names;
  for (SplitTensor &t : layout.tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      return fileError(source, "invalid tensor name " + quoteName(t.name));
    if (!names.emplace(t.name, 0).second)
      return fileError(source, "tensor " + quoteName(t.name) + " listed twice");
    auto fail = [&](const std::string &problem) {
      return fileError(source, "tensor " + quoteName(t.name) + " of shape " +
                                   formatShape(t.shape) + ": " + problem);
    };
    std::optional<int64_t> volume = shapeElementCount(t.shape);
    if (!volume || !shapeByteSize(t.dtype, t.shape))
      return fail("invalid shape");
    if (t.tiles.empty())
      return fail("no tiles");
    int64_t covered = 0;
    // Tiles per rank, to name a rank's second tile of the tensor "NAME#K".
    std::map<int64_t, int> perRank;
    for (size_t i = 0; i < t.tiles.size(); ++i) {
      SplitTile &tile = t.tiles[i];
      std::string where = "tile " + std::to_string(i) + " at " +
                          formatShape(tile.offsets) + " of shape " +
                          formatShape(tile.shape);
      if (tile.offsets.size() != t.shape.size() ||
          tile.shape.size() != t.shape.size())
        return fail(where + " does not have the tensor's rank " +
                    std::to_string(t.shape.size()));
      Status problem = checkTile(t.shape, tile.offsets, tile.shape);
      if (!problem.ok())
        return fail(where + ": " + problem.message());
      if (tile.ranks.empty())
        return fail(where + " is held by no rank");
      std::vector<int64_t> sorted = tile.ranks;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k) {
        if (sorted[k] < 0 || sorted[k] >= layout.ranks)
          return fail(where + ": rank " + std::to_string(sorted[k]) +
                      " is outside [0, " + std::to_string(layout.ranks) + ")");
        if (k && sorted[k] == sorted[k - 1])
          return fail(where + ": rank " + std::to_string(sorted[k]) +
                      " listed twice");
      }
      for (size_t j = 0; j < i; ++j)
        if (overlaps(tile, t.tiles[j]) ||
            (tile.offsets == t.tiles[j].offsets &&
             tile.shape == t.tiles[j].shape))
          return fail(where + " overlaps tile " + std::to_string(j));
      covered += *shapeElementCount(tile.shape);
      for (int64_t r : tile.ranks)
        ++perRank[r];
    }
    if (covered != *volume)
      return fail("the tiles cover " + std::to_string(covered) + " of " +
                  std::to_string(*volume) + " elements");
    for (size_t i = 0; i < t.tiles.size(); ++i) {
      bool shared = false;
      for (int64_t r : t.tiles[i].ranks)
        shared |= perRank[r] > 1;
      t.tiles[i].key = shared ? t.name + "#" + std::to_string(i) : t.name;
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Index JSON
//===----------------------------------------------------------------------===//

static JsonValue shapeJson(const std::vector<int64_t> &shape) {
  JsonValue array = JsonValue::array();
  for (int64_t d : shape)
    array.push(JsonValue(d));
  return array;
}

static JsonValue llamaJson(const LlamaParams &p) {
  JsonValue o = JsonValue::object();
  o.set("dim", p.dim);
  o.set("hidden_dim", p.hiddenDim);
  o.set("n_layers", p.nLayers);
  o.set("n_heads", p.nHeads);
  o.set("n_kv_heads", p.nKvHeads);
  o.set("vocab_size", p.vocabSize);
  o.set("max_seq_len", p.maxSeqLen);
  o.set("norm_eps", p.normEps);
  o.set("rope_theta", p.ropeTheta);
  o.set("shared_classifier", p.sharedClassifier);
  return o;
}

static JsonValue indexJson(const SplitLayout &layout) {
  JsonValue index = JsonValue::object();
  index.set("format", "tra-split");
  index.set("version", kTraSplitVersion);
  index.set("ranks", layout.ranks);
  JsonValue files = JsonValue::array();
  for (int64_t r = 0; r < layout.ranks; ++r)
    files.push(traSplitRankFileName(r, layout.ranks));
  index.set("files", std::move(files));
  if (layout.metadata.isObject())
    index.set("metadata", layout.metadata);
  if (layout.llama)
    index.set("llama", llamaJson(*layout.llama));
  JsonValue tensors = JsonValue::object();
  for (const SplitTensor &t : layout.tensors) {
    JsonValue entry = JsonValue::object();
    entry.set("dtype", safetensorsDTypeName(t.dtype));
    entry.set("shape", shapeJson(t.shape));
    if (!t.dist.empty())
      entry.set("dist", t.dist);
    JsonValue tiles = JsonValue::array();
    for (const SplitTile &tile : t.tiles) {
      JsonValue o = JsonValue::object();
      o.set("offsets", shapeJson(tile.offsets));
      o.set("shape", shapeJson(tile.shape));
      o.set("ranks", shapeJson(tile.ranks));
      o.set("key", tile.key);
      tiles.push(std::move(o));
    }
    entry.set("tiles", std::move(tiles));
    tensors.set(t.name, std::move(entry));
  }
  index.set("tensors", std::move(tensors));
  return index;
}

namespace {
/// Reads the members of a JSON index, reporting problems against its path.
struct IndexReader {
  const std::string &path;
  std::string problem;

  const JsonValue *member(const JsonValue &object, const char *key,
                          const std::string &where) {
    const JsonValue *value = object.find(key);
    if (!value && problem.empty())
      problem = where + "missing '" + key + "'";
    return value;
  }
  bool integer(const JsonValue *value, int64_t &out, const std::string &what) {
    if (!value)
      return false;
    if (!value->isInteger()) {
      if (problem.empty())
        problem = what + " must be an integer";
      return false;
    }
    out = value->getInteger();
    return true;
  }
  bool integers(const JsonValue *value, std::vector<int64_t> &out,
                const std::string &what) {
    if (!value)
      return false;
    if (!value->isArray()) {
      if (problem.empty())
        problem = what + " must be an array of integers";
      return false;
    }
    out.clear();
    for (const JsonValue &v : value->getArray()) {
      if (!v.isInteger()) {
        if (problem.empty())
          problem = what + " must be an array of integers";
        return false;
      }
      out.push_back(v.getInteger());
    }
    return true;
  }
};
} // namespace

static Result<LlamaParams> parseLlamaJson(const JsonValue &o,
                                          const std::string &path) {
  LlamaParams p;
  IndexReader r{path, ""};
  std::string where = "'llama': ";
  if (!o.isObject())
    return fileError(path, "'llama' must be an object");
  std::pair<const char *, int64_t *> ints[] = {
      {"dim", &p.dim},           {"hidden_dim", &p.hiddenDim},
      {"n_layers", &p.nLayers},  {"n_heads", &p.nHeads},
      {"n_kv_heads", &p.nKvHeads}, {"vocab_size", &p.vocabSize},
      {"max_seq_len", &p.maxSeqLen}};
  for (auto &[key, out] : ints)
    r.integer(r.member(o, key, where), *out, where + "'" + key + "'");
  for (auto &[key, out] : {std::pair<const char *, double *>{"norm_eps",
                                                              &p.normEps},
                           {"rope_theta", &p.ropeTheta}}) {
    const JsonValue *v = r.member(o, key, where);
    if (v && !v->isNumber() && r.problem.empty())
      r.problem = where + "'" + key + "' must be a number";
    if (v && v->isNumber())
      *out = v->getNumber();
  }
  const JsonValue *shared = r.member(o, "shared_classifier", where);
  if (shared && !shared->isBool() && r.problem.empty())
    r.problem = where + "'shared_classifier' must be a boolean";
  if (shared && shared->isBool())
    p.sharedClassifier = shared->getBool();
  if (!r.problem.empty())
    return fileError(path, r.problem);
  if (Status e = p.validate(); !e.ok())
    return fileError(path, where + "invalid model parameters: " + e.message());
  return p;
}

static Result<SplitLayout> parseIndex(const JsonValue &json,
                                      const std::string &path,
                                      std::vector<std::string> &files) {
  if (!json.isObject())
    return fileError(path, "the index must be a JSON object");
  IndexReader r{path, ""};
  const JsonValue *format = r.member(json, "format", "");
  if (format && (!format->isString() || format->getString() != "tra-split"))
    return fileError(path, "'format' must be \"tra-split\"");
  int64_t version = 0;
  if (r.integer(r.member(json, "version", ""), version, "'version'") &&
      version != kTraSplitVersion)
    return fileError(path, "unsupported tra-split version " +
                               std::to_string(version) + " (this build reads " +
                               std::to_string(kTraSplitVersion) + ")");
  SplitLayout layout;
  r.integer(r.member(json, "ranks", ""), layout.ranks, "'ranks'");
  if (!r.problem.empty())
    return fileError(path, r.problem);
  if (layout.ranks < 1 || layout.ranks > 1000000)
    return fileError(path, "'ranks' must be in [1, 1000000], got " +
                               std::to_string(layout.ranks));
  const JsonValue *fileList = r.member(json, "files", "");
  if (!r.problem.empty())
    return fileError(path, r.problem);
  if (!fileList->isArray() ||
      int64_t(fileList->getArray().size()) != layout.ranks)
    return fileError(path, "'files' must list one file per rank (" +
                               std::to_string(layout.ranks) + ")");
  files.clear();
  for (const JsonValue &f : fileList->getArray()) {
    if (!f.isString() || f.getString().empty() ||
        f.getString().find('/') != std::string::npos ||
        f.getString() == "." || f.getString() == "..")
      return fileError(path, "'files' entries must be file names in the "
                             "index's directory");
    files.push_back(f.getString());
  }
  if (const JsonValue *meta = json.find("metadata"))
    layout.metadata = *meta;
  if (const JsonValue *llama = json.find("llama")) {
    Result<LlamaParams> p = parseLlamaJson(*llama, path);
    if (!p)
      return p.error();
    layout.llama = *p;
  }
  const JsonValue *tensors = r.member(json, "tensors", "");
  if (!r.problem.empty())
    return fileError(path, r.problem);
  if (!tensors->isObject())
    return fileError(path, "'tensors' must be an object");
  for (const auto &[name, entry] : tensors->getObject()) {
    std::string where = "tensor " + quoteName(name) + ": ";
    SplitTensor t;
    t.name = name;
    if (!entry.isObject())
      return fileError(path, where + "must be an object");
    const JsonValue *dtype = r.member(entry, "dtype", where);
    if (dtype) {
      std::optional<DType> parsed =
          dtype->isString() ? parseSafetensorsDType(dtype->getString())
                            : std::nullopt;
      if (!parsed)
        return fileError(path,
                         where + "unknown dtype " +
                             (dtype->isString() ? quoteName(dtype->getString())
                                                : dtype->serialize()));
      t.dtype = *parsed;
    }
    r.integers(r.member(entry, "shape", where), t.shape, where + "'shape'");
    if (const JsonValue *dist = entry.find("dist"); dist && dist->isString())
      t.dist = dist->getString();
    const JsonValue *tiles = r.member(entry, "tiles", where);
    if (!r.problem.empty())
      return fileError(path, r.problem);
    if (!tiles->isArray())
      return fileError(path, where + "'tiles' must be an array");
    for (const JsonValue &tj : tiles->getArray()) {
      SplitTile tile;
      std::string tw = where + "tile " + std::to_string(t.tiles.size()) + ": ";
      if (!tj.isObject())
        return fileError(path, tw + "must be an object");
      r.integers(r.member(tj, "offsets", tw), tile.offsets, tw + "'offsets'");
      r.integers(r.member(tj, "shape", tw), tile.shape, tw + "'shape'");
      r.integers(r.member(tj, "ranks", tw), tile.ranks, tw + "'ranks'");
      const JsonValue *key = r.member(tj, "key", tw);
      if (!r.problem.empty())
        return fileError(path, r.problem);
      if (!key->isString())
        return fileError(path, tw + "'key' must be a string");
      tile.key = key->getString();
      t.tiles.push_back(std::move(tile));
    }
    layout.tensors.push_back(std::move(t));
  }
  // The checks recompute the keys; the index must agree with them.
  std::vector<std::vector<std::string>> keys;
  for (const SplitTensor &t : layout.tensors) {
    keys.emplace_back();
    for (const SplitTile &tile : t.tiles)
      keys.back().push_back(tile.key);
  }
  if (Status s = checkSplitLayout(layout, path); !s)
    return s.error();
  for (size_t i = 0; i < layout.tensors.size(); ++i)
    for (size_t j = 0; j < layout.tensors[i].tiles.size(); ++j)
      if (layout.tensors[i].tiles[j].key != keys[i][j])
        return fileError(path, "tensor " + quoteName(layout.tensors[i].name) +
                                   ": tile " + std::to_string(j) +
                                   " has key " + quoteName(keys[i][j]) +
                                   ", expected " +
                                   quoteName(layout.tensors[i].tiles[j].key));
  return layout;
}

static std::string indexPathOf(const std::string &path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return (fs::path(path) / kTraSplitIndexName).string();
  return path;
}

Result<SplitLayout> tra::rt::readTraSplitIndex(const std::string &path) {
  std::string indexPath = indexPathOf(path);
  Result<std::string> text = readFile(indexPath);
  if (!text)
    return text.error();
  Result<JsonValue> json = parseJson(*text, indexPath);
  if (!json)
    return json.error();
  std::vector<std::string> files;
  return parseIndex(*json, indexPath, files);
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

static uint64_t tileBytes(DType dtype, const std::vector<int64_t> &shape) {
  return static_cast<uint64_t>(*shapeByteSize(dtype, shape));
}

namespace {
/// Removes a directory tree on destruction unless released.
struct DirectoryGuard {
  std::string path;
  ~DirectoryGuard() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};
} // namespace

/// Checks what is at `dir` now: nothing, an empty directory or a previous
/// split may be replaced.
static Status checkDestination(const std::string &dir, bool &exists) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(dir, ec);
  exists = false;
  if (ec && ec != std::errc::no_such_file_or_directory)
    return fileError(dir, systemError("cannot access", ec.value()));
  if (!fs::exists(st))
    return Status::success();
  if (!fs::is_directory(st))
    return fileError(dir, "exists and is not a directory");
  exists = true;
  if (fs::exists(fs::path(dir) / kTraSplitIndexName, ec))
    return Status::success();
  if (!fs::is_empty(dir, ec) || ec)
    return fileError(dir, std::string("exists and is neither empty nor a "
                                      "tra-split directory (no ") +
                              kTraSplitIndexName +
                              "); refusing to replace it");
  return Status::success();
}

Result<SplitWriteStats> tra::rt::writeTraSplit(const std::string &dirArg,
                                               const TensorSource &source,
                                               SplitLayout layout,
                                               const SplitProgress &progress) {
  std::string dir = dirArg;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (dir.empty())
    return fileError(dirArg, "empty output directory name");
  if (Status s = checkSplitLayout(layout, dir); !s)
    return s.error();
  // Every tile must come from a tensor of the source with the same shape.
  for (const SplitTensor &t : layout.tensors) {
    const TensorInfo *info = source.find(t.name);
    if (!info)
      return fileError(source.path(), "no tensor named " + quoteName(t.name) +
                                          " (needed for " + dir + ")");
    if (info->shape != t.shape)
      return fileError(source.path(),
                       "tensor " + quoteName(t.name) + " has shape " +
                           formatShape(info->shape) + ", but the split of " +
                           dir + " is for shape " + formatShape(t.shape));
  }
  bool exists = false;
  if (Status s = checkDestination(dir, exists); !s)
    return s.error();

  // Create the parent directories and the temporary directory next to DIR.
  fs::path target(dir);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      return fileError(target.parent_path().string(),
                       systemError("cannot create directory", ec.value()));
  }
  std::string temp = dir + ".tmp." + std::to_string(::getpid());
  fs::remove_all(temp, ec);
  if (!fs::create_directory(temp, ec) || ec)
    return fileError(
        dir, systemError("cannot create temporary directory '" + temp + "'",
                         ec ? ec.value() : EEXIST));
  DirectoryGuard guard{temp};

  // Data order: by decreasing element size (stable), so that every tile is
  // aligned to its element size in each file.
  std::vector<size_t> order(layout.tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    size_t sizeA = dtypeSize(layout.tensors[a].dtype);
    size_t sizeB = dtypeSize(layout.tensors[b].dtype);
    return sizeA != sizeB ? sizeA > sizeB : a < b;
  });

  // The headers of every rank file.
  const int64_t ranks = layout.ranks;
  std::vector<JsonValue> headers(ranks, JsonValue::object());
  std::vector<uint64_t> sizes(ranks, 0);
  for (int64_t r = 0; r < ranks; ++r) {
    JsonValue meta = JsonValue::object();
    meta.set("format", "tra-split");
    meta.set("rank", std::to_string(r));
    meta.set("ranks", std::to_string(ranks));
    headers[r].getObject().emplace_back("__metadata__", std::move(meta));
  }
  for (size_t i : order) {
    const SplitTensor &t = layout.tensors[i];
    for (const SplitTile &tile : t.tiles) {
      uint64_t bytes = tileBytes(t.dtype, tile.shape);
      for (int64_t r : tile.ranks) {
        JsonValue info = JsonValue::object();
        info.getObject().emplace_back("dtype", safetensorsDTypeName(t.dtype));
        info.getObject().emplace_back("shape", shapeJson(tile.shape));
        info.getObject().emplace_back(
            "data_offsets", JsonValue::array({JsonValue(sizes[r]),
                                              JsonValue(sizes[r] + bytes)}));
        headers[r].getObject().emplace_back(tile.key, std::move(info));
        sizes[r] += bytes;
      }
    }
  }

  SplitWriteStats stats;
  // At most this many rank files are open at once; more ranks are written
  // in several passes over the source.
  const int64_t batch = 256;
  const int64_t passes = (ranks + batch - 1) / batch;
  for (int64_t first = 0; first < ranks; first += batch) {
    const int64_t last = std::min(ranks, first + batch);
    std::vector<AtomicFileWriter> writers;
    writers.reserve(last - first);
    for (int64_t r = first; r < last; ++r) {
      Result<AtomicFileWriter> w = AtomicFileWriter::create(
          (fs::path(temp) / traSplitRankFileName(r, ranks)).string());
      if (!w)
        return w.error();
      writers.push_back(std::move(*w));
      std::string text = headers[r].serialize();
      text.append((8 - text.size() % 8) % 8, ' ');
      uint8_t length[8];
      for (int k = 0; k < 8; ++k)
        length[k] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * k));
      if (Status s = writers.back().write(length, 8); !s)
        return s.error();
      if (Status s = writers.back().write(text.data(), text.size()); !s)
        return s.error();
      stats.bytesWritten += 8 + text.size() + sizes[r];
    }
    for (size_t n = 0; n < order.size(); ++n) {
      const SplitTensor &t = layout.tensors[order[n]];
      if (progress) {
        uint64_t bytes = 0;
        for (const SplitTile &tile : t.tiles)
          bytes += tileBytes(t.dtype, tile.shape) * tile.ranks.size();
        progress(size_t(first / batch) * order.size() + n,
                 size_t(passes) * order.size(), t, bytes);
      }
      for (const SplitTile &tile : t.tiles) {
        bool needed = false;
        for (int64_t r : tile.ranks)
          needed |= r >= first && r < last;
        if (!needed)
          continue;
        Result<HostTensor> data =
            source.readTile(t.name, tile.offsets, tile.shape, t.dtype);
        if (!data)
          return data.error();
        if (data->dtype() != t.dtype || data->shape() != tile.shape)
          return fileError(source.path(),
                           "tensor " + quoteName(t.name) +
                               ": internal error: read a tile of the wrong "
                               "dtype or shape");
        stats.bytesRead += data->byteSize();
        for (int64_t r : tile.ranks)
          if (r >= first && r < last)
            if (Status s = writers[r - first].write(data->data(),
                                                    data->byteSize());
                !s)
              return s.error();
      }
    }
    for (AtomicFileWriter &w : writers)
      if (Status s = w.commit(); !s)
        return s.error();
  }

  // The index last: a directory without it is not a split.
  std::string indexText = indexJson(layout).serialize(1) + "\n";
  {
    Result<AtomicFileWriter> w =
        AtomicFileWriter::create((fs::path(temp) / kTraSplitIndexName).string());
    if (!w)
      return w.error();
    if (Status s = w->write(indexText.data(), indexText.size()); !s)
      return s.error();
    if (Status s = w->commit(); !s)
      return s.error();
    stats.bytesWritten += indexText.size();
  }

  // Move the finished split into place; an old one goes aside first and is
  // removed once the new one is there.
  if (exists) {
    std::string old = dir + ".old." + std::to_string(::getpid());
    fs::remove_all(old, ec);
    if (::rename(dir.c_str(), old.c_str()) != 0)
      return fileError(dir, systemError("cannot move the previous split "
                                        "aside",
                                        errno));
    if (::rename(temp.c_str(), dir.c_str()) != 0) {
      int err = errno;
      ::rename(old.c_str(), dir.c_str());
      return fileError(dir, systemError("cannot rename '" + temp + "'", err));
    }
    fs::remove_all(old, ec);
  } else if (::rename(temp.c_str(), dir.c_str()) != 0) {
    return fileError(dir, systemError("cannot rename '" + temp + "'", errno));
  }
  guard.path.clear();
  return stats;
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

namespace {
class TraSplitSource : public TensorSource {
public:
  static Result<std::unique_ptr<TensorSource>>
  open(const std::string &indexPath) {
    Result<std::string> text = readFile(indexPath);
    if (!text)
      return text.error();
    Result<JsonValue> json = parseJson(*text, indexPath);
    if (!json)
      return json.error();
    std::vector<std::string> files;
    Result<SplitLayout> layout = parseIndex(*json, indexPath, files);
    if (!layout)
      return layout.error();
    std::string dir = fs::path(indexPath).parent_path().string();
    std::unique_ptr<TraSplitSource> source(
        new TraSplitSource(dir.empty() ? indexPath : dir));
    source->indexPath = indexPath;
    source->params = layout->llama;
    for (const SplitTensor &t : layout->tensors)
      source->addTensor({t.name, t.dtype, t.shape});
    for (const std::string &f : files)
      source->files.push_back(
          dir.empty() ? f : (fs::path(dir) / f).string());
    source->opened.resize(files.size());
    source->layout = std::move(*layout);
    for (size_t i = 0; i < source->layout.tensors.size(); ++i)
      source->tensorIndex.emplace(source->layout.tensors[i].name, i);
    return std::unique_ptr<TensorSource>(std::move(source));
  }
  const char *format() const override { return "tra-split"; }

protected:
  Result<HostTensor> readRegion(const TensorInfo &info,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &shape, DType dtype,
                                int64_t preferRank) const override {
    const SplitTensor &t = layout.tensors.at(tensorIndex.at(info.name));
    HostTensor out = HostTensor::zeros(t.dtype, shape);
    const size_t elementSize = dtypeSize(t.dtype);
    const std::vector<int64_t> outStrides = rowMajorStrides(shape);
    const size_t rank = shape.size();
    for (const SplitTile &tile : t.tiles) {
      std::vector<int64_t> lo(rank), sizes(rank), inTile(rank);
      bool empty = false;
      int64_t outOffset = 0;
      for (size_t d = 0; d < rank; ++d) {
        lo[d] = std::max(offsets[d], tile.offsets[d]);
        int64_t hi = std::min(offsets[d] + shape[d],
                              tile.offsets[d] + tile.shape[d]);
        if (hi <= lo[d])
          empty = true;
        sizes[d] = hi - lo[d];
        inTile[d] = lo[d] - tile.offsets[d];
        outOffset += (lo[d] - offsets[d]) * outStrides[d];
      }
      if (empty)
        continue;
      // The requesting rank's copy first, then the others in index order.
      std::vector<int64_t> candidates;
      if (std::find(tile.ranks.begin(), tile.ranks.end(), preferRank) !=
          tile.ranks.end())
        candidates.push_back(preferRank);
      for (int64_t r : tile.ranks)
        if (r != preferRank)
          candidates.push_back(r);
      std::optional<Error> firstError;
      bool done = false;
      for (int64_t r : candidates) {
        Result<HostTensor> view = tileView(t, tile, r);
        if (!view) {
          if (!firstError)
            firstError = view.error();
          continue;
        }
        copyStridedTile(elementSize, view->data(),
                        rowMajorStrides(tile.shape), inTile, sizes,
                        out.mutableData() + outOffset * elementSize,
                        outStrides);
        done = true;
        break;
      }
      if (!done)
        return *firstError;
    }
    return out.dtype() == dtype ? out : convert(out, dtype);
  }

private:
  using TensorSource::TensorSource;

  /// Returns the file of rank `r`, opening it on first use.
  Result<std::shared_ptr<const SafetensorsFile>> rankFile(int64_t r) const {
    std::lock_guard<std::mutex> lock(mutex);
    if (!opened[r]) {
      Result<SafetensorsFile> file = SafetensorsFile::open(files[r]);
      if (!file)
        return Error{file.message() + " (the file of rank " +
                     std::to_string(r) + " in " + indexPath + ")"};
      opened[r] = std::make_shared<const SafetensorsFile>(std::move(*file));
    }
    return opened[r];
  }

  /// Returns a view of `tile` in the file of rank `r`, checked against the
  /// index.
  Result<HostTensor> tileView(const SplitTensor &t, const SplitTile &tile,
                              int64_t r) const {
    Result<std::shared_ptr<const SafetensorsFile>> file = rankFile(r);
    if (!file)
      return Error{file.message() + ": cannot read tensor " + quoteName(t.name)};
    const SafetensorsFile &f = **file;
    const SafetensorsEntry *entry = f.find(tile.key);
    if (!entry)
      return fileError(f.path(), "tensor " + quoteName(t.name) + ": no tile " +
                                     quoteName(tile.key) + " (the index " +
                                     indexPath + " places its tile at " +
                                     formatShape(tile.offsets) +
                                     " on rank " + std::to_string(r) + ")");
    if (entry->dtype != t.dtype || entry->shape != tile.shape)
      return fileError(
          f.path(), "tensor " + quoteName(t.name) + ": tile " +
                        quoteName(tile.key) + " is " + dtypeName(entry->dtype) +
                        " " + formatShape(entry->shape) + ", but the index " +
                        indexPath + " says " + dtypeName(t.dtype) + " " +
                        formatShape(tile.shape));
    return f.get(tile.key);
  }

  std::string indexPath;
  SplitLayout layout;
  std::unordered_map<std::string, size_t> tensorIndex;
  std::vector<std::string> files;
  mutable std::mutex mutex;
  mutable std::vector<std::shared_ptr<const SafetensorsFile>> opened;
};
} // namespace

namespace tra::rt::detail {
Result<std::unique_ptr<TensorSource>>
openTraSplitSource(const std::string &indexPath) {
  return TraSplitSource::open(indexPath);
}
} // namespace tra::rt::detail
