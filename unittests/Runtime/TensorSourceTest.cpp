//===- TensorSourceTest.cpp - openTensorSource and the tra-split layout ---===//
//
// Every format openTensorSource recognises must return any region of any
// tensor bit-exactly (regions crossing Meta shard and tra-split tile
// boundaries, uneven tiles, replicas, dtype conversion), and every damaged
// input must give an error naming the file and the tensor. The tra-split
// writer must write exactly the tiles of each rank and leave nothing behind
// on failure.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/TraSplit.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <random>

using namespace tra::rt;
using namespace tra::rt::test;
namespace fs = std::filesystem;

namespace {

/// Random regions of `shape`, plus the whole tensor and single elements.
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
randomRegions(const std::vector<int64_t> &shape, std::mt19937 &rng,
              int count = 12) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> out;
  auto random = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> offsets, sizes;
    for (int64_t dim : shape) {
      int64_t offset = random(0, dim - 1);
      offsets.push_back(offset);
      sizes.push_back(i % 4 == 3 ? 1 : random(1, dim - offset));
    }
    out.push_back({offsets, sizes});
  }
  out.push_back({std::vector<int64_t>(shape.size(), 0), shape});
  return out;
}

/// Checks every region of every tensor of `source` against `expected`
/// (tensor name -> whole tensor in the stored dtype), in the stored dtype
/// and converted to f32 and bf16.
void checkAllRegions(const TensorSource &source,
                     const std::vector<NamedTensor> &expected,
                     int64_t preferRank = -1, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  for (const NamedTensor &e : expected) {
    SCOPED_TRACE(e.name);
    const TensorInfo *info = source.find(e.name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->shape, e.tensor.shape());
    EXPECT_EQ(info->dtype, e.tensor.dtype());
    for (const auto &[offsets, sizes] : randomRegions(info->shape, rng)) {
      SCOPED_TRACE("region at " + formatShape(offsets) + " of " +
                   formatShape(sizes));
      HostTensor want = naiveTile(e.tensor, offsets, sizes);
      Result<HostTensor> got =
          source.readTile(e.name, offsets, sizes, std::nullopt, preferRank);
      ASSERT_TRUE(got.ok()) << got.message();
      EXPECT_TRUE(got->identical(want));
      for (DType to : {DType::F32, DType::BF16}) {
        Result<HostTensor> converted =
            source.readTile(e.name, offsets, sizes, to, preferRank);
        ASSERT_TRUE(converted.ok()) << converted.message();
        EXPECT_TRUE(converted->identical(convert(want, to)));
      }
    }
    Result<HostTensor> whole = source.read(e.name);
    ASSERT_TRUE(whole.ok()) << whole.message();
    EXPECT_TRUE(whole->identical(e.tensor));
  }
}

std::vector<NamedTensor> sampleTensors() {
  return {{"a", patternTensor(DType::F32, {7, 5}, 1)},
          {"b.weight", patternTensor(DType::BF16, {13, 6, 3}, 2)},
          {"c", patternTensor(DType::F16, {11}, 3)},
          {"d", patternTensor(DType::I32, {4, 9}, 4)}};
}

//===----------------------------------------------------------------------===//
// Safetensors
//===----------------------------------------------------------------------===//

TEST(TensorSourceTest, SafetensorsFile) {
  TempDir dir;
  std::vector<NamedTensor> tensors = sampleTensors();
  std::string path = dir.file("model.safetensors");
  ASSERT_TRUE(writeSafetensors(path, tensors).ok());
  Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
  ASSERT_TRUE(source.ok()) << source.message();
  EXPECT_STREQ((*source)->format(), "safetensors");
  EXPECT_EQ((*source)->path(), path);
  EXPECT_FALSE((*source)->llamaParams().has_value());
  ASSERT_EQ((*source)->tensors().size(), tensors.size());
  checkAllRegions(**source, tensors);

  // Recognised by its content too.
  std::string renamed = dir.file("weights.bin");
  fs::copy_file(path, renamed);
  Result<std::unique_ptr<TensorSource>> sniffed = openTensorSource(renamed);
  ASSERT_TRUE(sniffed.ok()) << sniffed.message();
  EXPECT_STREQ((*sniffed)->format(), "safetensors");
}

TEST(TensorSourceTest, SafetensorsIndex) {
  TempDir dir;
  std::vector<NamedTensor> tensors = sampleTensors();
  ASSERT_TRUE(
      writeSafetensors(dir.file("s-1.safetensors"), {tensors[0], tensors[2]})
          .ok());
  ASSERT_TRUE(
      writeSafetensors(dir.file("s-2.safetensors"), {tensors[1], tensors[3]})
          .ok());
  writeBytes(dir.file("model.safetensors.index.json"),
             R"({"metadata": {"total_size": 1}, "weight_map": {
                 "a": "s-1.safetensors", "b.weight": "s-2.safetensors",
                 "c": "s-1.safetensors", "d": "s-2.safetensors"}})");
  Result<std::unique_ptr<TensorSource>> source =
      openTensorSource(dir.file("model.safetensors.index.json"));
  ASSERT_TRUE(source.ok()) << source.message();
  EXPECT_STREQ((*source)->format(), "safetensors-index");
  checkAllRegions(**source, tensors);

  // A missing shard is named.
  fs::remove(dir.file("s-2.safetensors"));
  EXPECT_ERROR(openTensorSource(dir.file("model.safetensors.index.json")),
               "s-2.safetensors", "b.weight");
}

TEST(TensorSourceTest, SafetensorsErrors) {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  ASSERT_TRUE(writeSafetensors(path, sampleTensors()).ok());
  // Truncated.
  std::string bytes = readBytes(path);
  writeBytes(dir.file("t.safetensors"), bytes.substr(0, bytes.size() - 10));
  EXPECT_ERROR(openTensorSource(dir.file("t.safetensors")), "t.safetensors");
  // Unknown dtype.
  std::string header = R"({"x": {"dtype": "Q4", "shape": [2], )"
                       R"("data_offsets": [0, 2]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  writeBytes(dir.file("q.safetensors"), file + header + "ab");
  EXPECT_ERROR(openTensorSource(dir.file("q.safetensors")), "q.safetensors",
               "'x'", "Q4");
  // Regions outside the tensor, unknown tensors.
  Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
  ASSERT_TRUE(source.ok());
  EXPECT_ERROR((*source)->readTile("a", {5, 0}, {3, 5}), path, "'a'", "[7, 5]");
  EXPECT_ERROR((*source)->readTile("a", {0}, {7}), path, "'a'");
  EXPECT_ERROR((*source)->readTile("nope", {0}, {1}), path, "'nope'");
  // Missing files and unrecognised inputs.
  EXPECT_ERROR(openTensorSource(dir.file("missing.safetensors")),
               "missing.safetensors", "No such file");
  fs::create_directory(dir.file("empty"));
  EXPECT_ERROR(openTensorSource(dir.file("empty")), dir.file("empty"),
               "params.json", "tra-split.json");
  writeBytes(dir.file("other.json"), R"({"x": 1})");
  EXPECT_ERROR(openTensorSource(dir.file("other.json")), "other.json",
               "weight_map");
}

//===----------------------------------------------------------------------===//
// llama2.c
//===----------------------------------------------------------------------===//

TEST(TensorSourceTest, Llama2c) {
  TempDir dir;
  // dim 8, hidden 12, 2 layers, 2 heads, 1 KV head, vocab 10 (own
  // classifier), seq_len 4.
  const int32_t header[7] = {8, 12, 2, 2, 1, -10, 4};
  const int64_t D = 8, F = 12, L = 2, KV = 4, V = 10, T = 4, HD = 4;
  int64_t floats = V * D + L * D + L * D * D + 2 * L * KV * D + L * D * D +
                   L * D + 3 * L * F * D + D + T * HD + V * D;
  std::string bytes(reinterpret_cast<const char *>(header), sizeof(header));
  std::vector<float> values(floats);
  for (int64_t i = 0; i < floats; ++i)
    values[i] = float(i) * 0.25f - 7.0f;
  bytes.append(reinterpret_cast<const char *>(values.data()),
               values.size() * sizeof(float));
  std::string path = dir.file("tiny.bin");
  writeBytes(path, bytes);

  Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
  ASSERT_TRUE(source.ok()) << source.message();
  EXPECT_STREQ((*source)->format(), "llama2.c");
  ASSERT_TRUE((*source)->llamaParams().has_value());
  EXPECT_EQ((*source)->llamaParams()->dim, 8);
  EXPECT_EQ((*source)->llamaParams()->nKvHeads, 1);
  EXPECT_FALSE((*source)->llamaParams()->sharedClassifier);
  auto shapes = llamaWeightShapes(*(*source)->llamaParams());
  ASSERT_EQ((*source)->tensors().size(), shapes.size());
  // Listed in file order (kind by kind), every weight of the model.
  for (const auto &[name, shape] : shapes) {
    const TensorInfo *info = (*source)->find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->shape, shape) << name;
    EXPECT_EQ(info->dtype, DType::F32) << name;
  }
  // From the file layout: tok_embeddings first, wq of layer 1 after the
  // embedding, both rms_att rows and layer 0's wq; output last.
  HostTensor emb = HostTensor::copyOf(DType::F32, {V, D}, values.data());
  HostTensor wq1 = HostTensor::copyOf(DType::F32, {D, D},
                                      values.data() + V * D + L * D + D * D);
  HostTensor out =
      HostTensor::copyOf(DType::F32, {V, D}, values.data() + floats - V * D);
  checkAllRegions(**source, {{"tok_embeddings.weight", emb},
                             {"layers.1.attention.wq.weight", wq1},
                             {"output.weight", out}});

  writeBytes(dir.file("short.bin"), bytes.substr(0, 100));
  EXPECT_ERROR(openTensorSource(dir.file("short.bin")), "short.bin",
               "truncated");
}

//===----------------------------------------------------------------------===//
// Meta checkpoints
//===----------------------------------------------------------------------===//

TEST(TensorSourceTest, MetaShards) {
  TRA_REQUIRE_PYTHON("torch, numpy");
  TempDir dir;
  JsonValue specs = JsonValue::array();
  struct Case {
    const char *name;
    int mp;
    const char *dtype;
  };
  const Case cases[] = {{"mp2", 2, "bfloat16"}, {"mp4", 4, "float16"}};
  for (const Case &c : cases) {
    JsonValue spec = JsonValue::object();
    spec.set("dir", dir.file(c.name));
    spec.set("full_dir", dir.file(std::string(c.name) + "-full"));
    spec.set("dim", 64);
    spec.set("n_layers", 1);
    spec.set("n_heads", 8);
    spec.set("n_kv_heads", 4);
    spec.set("vocab_size", 96);
    spec.set("multiple_of", 32);
    spec.set("mp", c.mp);
    spec.set("dtype", c.dtype);
    spec.set("seed", c.mp);
    specs.push(std::move(spec));
  }
  writeBytes(dir.file("spec.json"), specs.serialize());
  CommandResult made = runCommand(std::string(kPython) + " " +
                                  shellQuote(TRA_MAKE_META_CHECKPOINT_PY) +
                                  " " + shellQuote(dir.file("spec.json")));
  ASSERT_EQ(made.exitCode, 0) << made.output;

  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::unique_ptr<TensorSource>> source =
        openTensorSource(dir.file(c.name));
    ASSERT_TRUE(source.ok()) << source.message();
    EXPECT_STREQ((*source)->format(), "meta");
    ASSERT_TRUE((*source)->llamaParams().has_value());
    EXPECT_EQ((*source)->llamaParams()->nKvHeads, 4);
    DType stored = *parseDType(c.dtype);
    std::vector<NamedTensor> expected;
    for (const TensorInfo &info : (*source)->tensors()) {
      Result<HostTensor> full = readNpy(
          dir.file(std::string(c.name) + "-full/" + info.name + ".npy"));
      ASSERT_TRUE(full.ok()) << full.message();
      expected.push_back({info.name, convert(*full, stored)});
    }
    checkAllRegions(**source, expected);
    // Regions straddling every shard boundary of a row-split and a
    // column-split weight.
    for (const char *name :
         {"layers.0.attention.wq.weight", "layers.0.feed_forward.w2.weight"}) {
      const NamedTensor *e = nullptr;
      for (const NamedTensor &t : expected)
        if (t.name == name)
          e = &t;
      ASSERT_NE(e, nullptr);
      int d = std::string(name).find("w2") != std::string::npos ? 1 : 0;
      int64_t block = e->tensor.shape()[d] / c.mp;
      for (int k = 1; k < c.mp; ++k) {
        std::vector<int64_t> offsets = {1, 2}, sizes = {5, 7};
        offsets[d] = k * block - 3;
        sizes[d] = 6;
        Result<HostTensor> got = (*source)->readTile(name, offsets, sizes);
        ASSERT_TRUE(got.ok()) << got.message();
        EXPECT_TRUE(got->identical(naiveTile(e->tensor, offsets, sizes)));
      }
    }
  }

  // Hugging Face layout (transformers' conversion: HF names, wq/wk rows
  // permuted per head), single file and sharded: read back in Meta's
  // layout, equal to the Meta checkpoint.
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string("hf ") + c.name);
    std::string hf = dir.file(std::string("hf-") + c.name);
    CommandResult converted = runCommand(
        std::string(kPython) + " " + shellQuote(TRA_MAKE_HF_CHECKPOINT_PY) +
        " " + shellQuote(dir.file(c.name)) + " " + shellQuote(hf) +
        (c.mp == 4 ? " --shards 3" : ""));
    ASSERT_EQ(converted.exitCode, 0) << converted.output;
    Result<std::unique_ptr<TensorSource>> meta =
        openTensorSource(dir.file(c.name));
    ASSERT_TRUE(meta.ok()) << meta.message();
    Result<std::unique_ptr<TensorSource>> source = openTensorSource(hf);
    ASSERT_TRUE(source.ok()) << source.message();
    EXPECT_STREQ((*source)->format(), "hf-llama");
    ASSERT_TRUE((*source)->llamaParams().has_value());
    EXPECT_EQ((*source)->llamaParams()->hiddenDim,
              (*meta)->llamaParams()->hiddenDim);
    EXPECT_EQ((*source)->llamaParams()->nKvHeads, 4);
    std::vector<NamedTensor> expected;
    for (const TensorInfo &info : (*meta)->tensors()) {
      Result<HostTensor> whole = (*meta)->read(info.name);
      ASSERT_TRUE(whole.ok()) << whole.message();
      expected.push_back({info.name, *whole});
    }
    ASSERT_EQ((*source)->tensors().size(), expected.size());
    checkAllRegions(**source, expected, -1, 3);
  }
  // A config.json without a required field, and a missing tensor.
  std::string config = readBytes(dir.file("hf-mp2/config.json"));
  writeBytes(dir.file("hf-mp2/config.json"), R"({"model_type": "llama"})");
  EXPECT_ERROR(openTensorSource(dir.file("hf-mp2")), "config.json",
               "missing 'hidden_size'");
  writeBytes(dir.file("hf-mp2/config.json"), config);
  Result<std::unique_ptr<TensorSource>> hf2 =
      openTensorSource(dir.file("hf-mp2"));
  ASSERT_TRUE(hf2.ok()) << hf2.message();
  fs::remove(dir.file("hf-mp2/model.safetensors"));
  EXPECT_ERROR(openTensorSource(dir.file("hf-mp2")), "hf-mp2", "config.json",
               "model.safetensors");

  // A missing shard is named.
  fs::remove(dir.file("mp4/consolidated.01.pth"));
  EXPECT_ERROR(openTensorSource(dir.file("mp4")), "consolidated.01.pth");
}

//===----------------------------------------------------------------------===//
// tra-split
//===----------------------------------------------------------------------===//

/// A layout over sampleTensors() on 5 ranks with uneven tiles, replicas, a
/// rank holding two tiles of one tensor and rank 4 holding nothing.
SplitLayout sampleLayout() {
  SplitLayout layout;
  layout.ranks = 5;
  // a [7, 5]: rows 0-3 on 0 and 1 (replicas), rows 4-6 on 2 and 3.
  layout.tensors.push_back(
      {"a",
       DType::F32,
       {7, 5},
       "[2, 1] on [[0, 1], [2, 3]]",
       {{{0, 0}, {4, 5}, {0, 1}, ""}, {{4, 0}, {3, 5}, {2, 3}, ""}}});
  // b.weight [13, 6, 3]: a 3 x 2 x 1 grid with uneven rows; rank 0 holds
  // two tiles.
  SplitTensor b{"b.weight", DType::BF16, {13, 6, 3}, "", {}};
  int64_t rows[] = {0, 5, 9, 13};
  int64_t owner = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      b.tiles.push_back({{rows[i], 3 * j, 0},
                         {rows[i + 1] - rows[i], 3, 3},
                         {owner++ % 4},
                         ""});
  layout.tensors.push_back(b);
  // c [11]: replicated on ranks 0-3.
  layout.tensors.push_back(
      {"c", DType::F16, {11}, "", {{{0}, {11}, {3, 0, 1, 2}, ""}}});
  // d [4, 9] as f16 (converted from i32): columns 0-4 and 5-8.
  layout.tensors.push_back(
      {"d",
       DType::F16,
       {4, 9},
       "",
       {{{0, 0}, {4, 5}, {1}, ""}, {{0, 5}, {4, 4}, {2}, ""}}});
  layout.llama = LlamaParams{8, 12, 2, 2, 1, 10, 4, 1e-5, 10000.0, true};
  layout.metadata = JsonValue::object();
  layout.metadata.set("hardware", "test");
  return layout;
}

struct SplitFixture {
  TempDir dir;
  std::vector<NamedTensor> tensors = sampleTensors();
  std::string sourcePath;
  std::unique_ptr<TensorSource> source;
  std::string out;

  SplitFixture() {
    sourcePath = dir.file("src.safetensors");
    EXPECT_TRUE(writeSafetensors(sourcePath, tensors).ok());
    Result<std::unique_ptr<TensorSource>> s = openTensorSource(sourcePath);
    EXPECT_TRUE(s.ok()) << s.message();
    if (s)
      source = std::move(*s);
    out = dir.file("split");
  }
  /// The expected tensors as the split stores them.
  std::vector<NamedTensor> stored(const SplitLayout &layout) const {
    std::vector<NamedTensor> result;
    for (const SplitTensor &t : layout.tensors)
      for (const NamedTensor &n : tensors)
        if (n.name == t.name)
          result.push_back({n.name, convert(n.tensor, t.dtype)});
    return result;
  }
};

TEST(TraSplitTest, WritesExactlyEachRanksTiles) {
  SplitFixture f;
  ASSERT_TRUE(f.source);
  SplitLayout layout = sampleLayout();
  std::vector<std::string> seen;
  Result<SplitWriteStats> stats = writeTraSplit(
      f.out, *f.source, layout,
      [&](size_t index, size_t count, const SplitTensor &t, uint64_t) {
        EXPECT_EQ(count, 4u);
        EXPECT_EQ(index, seen.size());
        seen.push_back(t.name);
      });
  ASSERT_TRUE(stats.ok()) << stats.message();
  // Written by decreasing element size: f32 first.
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b.weight", "c", "d"}));
  EXPECT_EQ(f.dir.list(),
            (std::vector<std::string>{"split", "src.safetensors"}));
  std::vector<std::string> files = {
      "rank-00000-of-00005.safetensors", "rank-00001-of-00005.safetensors",
      "rank-00002-of-00005.safetensors", "rank-00003-of-00005.safetensors",
      "rank-00004-of-00005.safetensors", "tra-split.json"};
  std::vector<std::string> listed;
  for (const auto &e : fs::directory_iterator(f.out))
    listed.push_back(e.path().filename().string());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, files);
  // Bytes read: every tile once (a 140 + b 234 + c 22 + d 72).
  EXPECT_EQ(stats->bytesRead, 7u * 5 * 4 + 13 * 6 * 3 * 2 + 11 * 2 + 36 * 2);

  // Each rank file holds exactly its tiles, bit-exact.
  ASSERT_TRUE(checkSplitLayout(layout, "test").ok());
  std::vector<NamedTensor> stored = f.stored(layout);
  for (int64_t r = 0; r < layout.ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    Result<SafetensorsFile> file =
        SafetensorsFile::open(f.out + "/" + traSplitRankFileName(r, 5));
    ASSERT_TRUE(file.ok()) << file.message();
    std::vector<std::string> want, got;
    for (size_t t = 0; t < layout.tensors.size(); ++t)
      for (const SplitTile &tile : layout.tensors[t].tiles)
        if (std::find(tile.ranks.begin(), tile.ranks.end(), r) !=
            tile.ranks.end()) {
          want.push_back(tile.key);
          Result<HostTensor> data = file->get(tile.key);
          ASSERT_TRUE(data.ok()) << data.message();
          EXPECT_TRUE(data->identical(
              naiveTile(stored[t].tensor, tile.offsets, tile.shape)))
              << tile.key;
        }
    for (const SafetensorsEntry &e : file->tensors())
      got.push_back(e.name);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(file->metadata(),
              (SafetensorsMetadata{{"format", "tra-split"},
                                   {"rank", std::to_string(r)},
                                   {"ranks", "5"}}));
  }
  // Rank 0 holds two tiles of b.weight, stored as NAME#K.
  EXPECT_EQ(layout.tensors[1].tiles[0].key, "b.weight#0");
  EXPECT_EQ(layout.tensors[0].tiles[0].key, "a");

  // The index reads back as written.
  Result<SplitLayout> index = readTraSplitIndex(f.out);
  ASSERT_TRUE(index.ok()) << index.message();
  EXPECT_EQ(index->ranks, 5);
  ASSERT_EQ(index->tensors.size(), 4u);
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(index->tensors[t].name, layout.tensors[t].name);
    EXPECT_EQ(index->tensors[t].dtype, layout.tensors[t].dtype);
    EXPECT_EQ(index->tensors[t].shape, layout.tensors[t].shape);
    ASSERT_EQ(index->tensors[t].tiles.size(), layout.tensors[t].tiles.size());
    for (size_t i = 0; i < layout.tensors[t].tiles.size(); ++i) {
      EXPECT_EQ(index->tensors[t].tiles[i].offsets,
                layout.tensors[t].tiles[i].offsets);
      EXPECT_EQ(index->tensors[t].tiles[i].ranks,
                layout.tensors[t].tiles[i].ranks);
      EXPECT_EQ(index->tensors[t].tiles[i].key, layout.tensors[t].tiles[i].key);
    }
  }
  EXPECT_EQ(index->tensors[0].dist, "[2, 1] on [[0, 1], [2, 3]]");
  ASSERT_TRUE(index->llama.has_value());
  EXPECT_EQ(index->llama->hiddenDim, 12);
  EXPECT_TRUE(index->llama->sharedClassifier);
  ASSERT_TRUE(index->metadata.isObject());
  EXPECT_EQ(index->metadata.find("hardware")->getString(), "test");
}

TEST(TraSplitTest, ReadsRegionsAcrossTiles) {
  SplitFixture f;
  ASSERT_TRUE(f.source);
  SplitLayout layout = sampleLayout();
  ASSERT_TRUE(writeTraSplit(f.out, *f.source, layout).ok());
  std::vector<NamedTensor> stored = f.stored(layout);
  for (const std::string &path :
       {f.out, f.out + "/", f.out + "/tra-split.json"}) {
    SCOPED_TRACE(path);
    Result<std::unique_ptr<TensorSource>> split = openTensorSource(path);
    ASSERT_TRUE(split.ok()) << split.message();
    EXPECT_STREQ((*split)->format(), "tra-split");
    ASSERT_TRUE((*split)->llamaParams().has_value());
    EXPECT_EQ((*split)->llamaParams()->dim, 8);
    for (int64_t prefer : {-1, 0, 3, 4})
      checkAllRegions(**split, stored, prefer, uint32_t(prefer + 7));
  }
}

TEST(TraSplitTest, PrefersTheRequestingRanksCopy) {
  SplitFixture f;
  ASSERT_TRUE(f.source);
  SplitLayout layout = sampleLayout();
  ASSERT_TRUE(writeTraSplit(f.out, *f.source, layout).ok());
  std::vector<NamedTensor> stored = f.stored(layout);
  // Without rank 2's file, 'a' rows 4-6 come from rank 3 (its replica), but
  // 'd' columns 0-4 ... rank 1, columns 5-8 only from rank 2.
  std::string rank2 = f.out + "/" + traSplitRankFileName(2, 5);
  fs::remove(rank2);
  Result<std::unique_ptr<TensorSource>> split = openTensorSource(f.out);
  ASSERT_TRUE(split.ok()) << split.message();
  for (int64_t prefer : {-1, 2, 3}) {
    Result<HostTensor> a =
        (*split)->readTile("a", {0, 0}, {7, 5}, std::nullopt, prefer);
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_TRUE(a->identical(stored[0].tensor));
  }
  Result<HostTensor> left = (*split)->readTile("d", {0, 0}, {4, 5});
  ASSERT_TRUE(left.ok()) << left.message();
  EXPECT_ERROR((*split)->readTile("d", {1, 3}, {2, 4}), rank2, "'d'",
               "No such file", "tra-split.json");
  // A damaged replica is not used when the requesting rank has its own:
  // rank 0's copy of 'c' works although rank 3's file is truncated.
  std::string rank3 = f.out + "/" + traSplitRankFileName(3, 5);
  std::string bytes = readBytes(rank3);
  writeBytes(rank3, bytes.substr(0, bytes.size() / 2));
  Result<std::unique_ptr<TensorSource>> again = openTensorSource(f.out);
  ASSERT_TRUE(again.ok());
  Result<HostTensor> c = (*again)->readTile("c", {0}, {11}, std::nullopt, 0);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->identical(stored[2].tensor));
  // Rank 3 asked first: its file is damaged, another replica serves.
  Result<HostTensor> c3 = (*again)->readTile("c", {0}, {11}, std::nullopt, 3);
  ASSERT_TRUE(c3.ok()) << c3.message();
  EXPECT_TRUE(c3->identical(stored[2].tensor));
  // 'a' rows 4-6 live only on ranks 2 (deleted) and 3 (truncated).
  EXPECT_ERROR((*again)->readTile("a", {4, 0}, {1, 5}), "'a'");
}

TEST(TraSplitTest, DamagedSplits) {
  SplitFixture f;
  ASSERT_TRUE(f.source);
  ASSERT_TRUE(writeTraSplit(f.out, *f.source, sampleLayout()).ok());
  const std::string index = f.out + "/tra-split.json";
  const std::string original = readBytes(index);
  Result<JsonValue> json = parseJson(original, index);
  ASSERT_TRUE(json.ok());
  auto edited = [&](auto &&edit) {
    JsonValue copy = *json;
    edit(copy);
    writeBytes(index, copy.serialize(1));
    return openTensorSource(f.out);
  };
  auto tensorOf = [](JsonValue &j, const char *name) -> JsonValue & {
    for (auto &m : j.getObject())
      if (m.first == "tensors")
        for (auto &t : m.second.getObject())
          if (t.first == name)
            return t.second;
    std::abort();
  };
  auto tilesOf = [&](JsonValue &j, const char *name) -> JsonValue::Array & {
    for (auto &m : tensorOf(j, name).getObject())
      if (m.first == "tiles")
        return m.second.getArray();
    std::abort();
  };

  // Unknown dtype.
  EXPECT_ERROR(
      edited([&](JsonValue &j) { tensorOf(j, "c").set("dtype", "Q4"); }), index,
      "tensor 'c'", "unknown dtype 'Q4'");
  // A tile out of range.
  EXPECT_ERROR(edited([&](JsonValue &j) {
                 tilesOf(j, "a")[1].set("offsets", JsonValue::array({5, 0}));
               }),
               index, "tensor 'a'", "tile 1");
  // Overlapping and missing tiles.
  EXPECT_ERROR(edited([&](JsonValue &j) {
                 tilesOf(j, "a")[1].set("offsets", JsonValue::array({3, 0}));
                 tilesOf(j, "a")[1].set("shape", JsonValue::array({4, 5}));
               }),
               index, "tensor 'a'", "overlaps tile 0");
  EXPECT_ERROR(edited([&](JsonValue &j) { tilesOf(j, "a").pop_back(); }), index,
               "tensor 'a'", "cover 20 of 35");
  // A rank out of range.
  EXPECT_ERROR(edited([&](JsonValue &j) {
                 tilesOf(j, "c")[0].set("ranks", JsonValue::array({7}));
               }),
               index, "tensor 'c'", "rank 7");
  // Wrong version, wrong file count.
  EXPECT_ERROR(edited([&](JsonValue &j) { j.set("version", 9); }), index,
               "version 9");
  EXPECT_ERROR(edited([&](JsonValue &j) { j.set("ranks", 4); }), index,
               "'files'");
  // Shape mismatch between the index and a rank file: the index says the
  // tile is [3, 5] at row 4; make it [2, 5] + [1, 5] in the index.
  Result<std::unique_ptr<TensorSource>> mismatch = edited([&](JsonValue &j) {
    tensorOf(j, "a").set("shape", JsonValue::array({6, 5}));
    tilesOf(j, "a")[1].set("shape", JsonValue::array({2, 5}));
  });
  ASSERT_TRUE(mismatch.ok()) << mismatch.message();
  EXPECT_ERROR((*mismatch)->readTile("a", {4, 0}, {2, 5}),
               f.out + "/rank-00002-of-00005.safetensors", "tensor 'a'",
               "f32 [3, 5]", "says f32 [2, 5]");
  // Invalid JSON.
  writeBytes(index, original.substr(0, original.size() / 2));
  EXPECT_ERROR(openTensorSource(f.out), index, "invalid JSON");
  // An index naming a missing file.
  writeBytes(index, original);
  fs::remove(f.out + "/rank-00001-of-00005.safetensors");
  Result<std::unique_ptr<TensorSource>> split = openTensorSource(f.out);
  ASSERT_TRUE(split.ok()) << split.message();
  EXPECT_ERROR((*split)->readTile("d", {0, 0}, {4, 9}),
               "rank-00001-of-00005.safetensors", "tensor 'd'", "No such file");
  // A truncated rank file.
  std::string rank0 = f.out + "/rank-00000-of-00005.safetensors";
  std::string bytes = readBytes(rank0);
  writeBytes(rank0, bytes.substr(0, bytes.size() - 7));
  Result<std::unique_ptr<TensorSource>> truncated = openTensorSource(f.out);
  ASSERT_TRUE(truncated.ok()) << truncated.message();
  EXPECT_ERROR((*truncated)->readTile("b.weight", {0, 0, 0}, {1, 1, 1}), rank0,
               "tensor 'b.weight'");
  // Out-of-range reads.
  EXPECT_ERROR((*truncated)->readTile("c", {10}, {2}), "tensor 'c'", "[11]");
}

TEST(TraSplitTest, WriterErrorsLeaveNothing) {
  SplitFixture f;
  ASSERT_TRUE(f.source);
  // Invalid layouts are refused before anything is written.
  SplitLayout overlap = sampleLayout();
  overlap.tensors[0].tiles[1].offsets = {3, 0};
  overlap.tensors[0].tiles[1].shape = {4, 5};
  EXPECT_ERROR(writeTraSplit(f.out, *f.source, overlap), "tensor 'a'",
               "overlaps");
  SplitLayout badRank = sampleLayout();
  badRank.tensors[2].tiles[0].ranks = {5};
  EXPECT_ERROR(writeTraSplit(f.out, *f.source, badRank), "tensor 'c'",
               "rank 5 is outside [0, 5)");
  SplitLayout unknown = sampleLayout();
  unknown.tensors[2].name = "zzz";
  EXPECT_ERROR(writeTraSplit(f.out, *f.source, unknown), f.sourcePath, "'zzz'");
  SplitLayout wrongShape = sampleLayout();
  wrongShape.tensors[2].shape = {12};
  wrongShape.tensors[2].tiles[0].shape = {12};
  EXPECT_ERROR(writeTraSplit(f.out, *f.source, wrongShape), f.sourcePath, "'c'",
               "[11]", "[12]");
  EXPECT_EQ(f.dir.list(), (std::vector<std::string>{"src.safetensors"}));

  // A source failing half-way: no DIR, no temporary directory.
  class Failing : public TensorSource {
  public:
    Failing(const TensorSource &inner)
        : TensorSource("failing-source"), inner(inner) {
      for (const TensorInfo &i : inner.tensors())
        addTensor(i);
    }
    const char *format() const override { return "test"; }

  protected:
    Result<HostTensor> readRegion(const TensorInfo &info,
                                  const std::vector<int64_t> &offsets,
                                  const std::vector<int64_t> &shape,
                                  DType dtype, int64_t) const override {
      if (++reads == 4)
        return fileError(path(), "tensor '" + info.name + "': read failed");
      return inner.readTile(info.name, offsets, shape, dtype);
    }

  private:
    const TensorSource &inner;
    mutable int reads = 0;
  };
  Failing failing(*f.source);
  EXPECT_ERROR(writeTraSplit(f.out, failing, sampleLayout()), "failing-source",
               "read failed");
  EXPECT_EQ(f.dir.list(), (std::vector<std::string>{"src.safetensors"}));

  // An existing split is replaced; a failed rewrite leaves it as it was.
  ASSERT_TRUE(writeTraSplit(f.out, *f.source, sampleLayout()).ok());
  std::string before = readBytes(f.out + "/tra-split.json");
  Failing failingAgain(*f.source);
  EXPECT_FALSE(writeTraSplit(f.out, failingAgain, sampleLayout()).ok());
  EXPECT_EQ(readBytes(f.out + "/tra-split.json"), before);
  EXPECT_EQ(f.dir.list(),
            (std::vector<std::string>{"split", "src.safetensors"}));
  SplitLayout two = sampleLayout();
  two.ranks = 6;
  ASSERT_TRUE(writeTraSplit(f.out, *f.source, two).ok());
  EXPECT_FALSE(fs::exists(f.out + "/rank-00000-of-00005.safetensors"));
  EXPECT_TRUE(fs::exists(f.out + "/rank-00005-of-00006.safetensors"));
  EXPECT_EQ(f.dir.list(),
            (std::vector<std::string>{"split", "src.safetensors"}));

  // A directory with other contents, a file, an unwritable parent.
  fs::create_directory(f.dir.file("busy"));
  writeBytes(f.dir.file("busy/notes.txt"), "x");
  EXPECT_ERROR(writeTraSplit(f.dir.file("busy"), *f.source, sampleLayout()),
               f.dir.file("busy"), "refusing to replace");
  EXPECT_EQ(readBytes(f.dir.file("busy/notes.txt")), "x");
  EXPECT_ERROR(
      writeTraSplit(f.dir.file("busy/notes.txt"), *f.source, sampleLayout()),
      "notes.txt", "not a directory");
  EXPECT_ERROR(writeTraSplit(f.dir.file("busy/notes.txt/sub"), *f.source,
                             sampleLayout()),
               "notes.txt");
  // An empty directory is fine.
  fs::create_directory(f.dir.file("empty"));
  ASSERT_TRUE(
      writeTraSplit(f.dir.file("empty"), *f.source, sampleLayout()).ok());
  EXPECT_TRUE(fs::exists(f.dir.file("empty/tra-split.json")));
}

TEST(TraSplitTest, ZeroSizedTilesAndNames) {
  // An extent smaller than the number of tiles leaves empty tiles.
  TempDir dir;
  std::string src = dir.file("s.safetensors");
  HostTensor t = patternTensor(DType::F32, {2, 3}, 9);
  ASSERT_TRUE(writeSafetensors(src, {{"x", t}}).ok());
  Result<std::unique_ptr<TensorSource>> source = openTensorSource(src);
  ASSERT_TRUE(source.ok());
  SplitLayout layout;
  layout.ranks = 3;
  layout.tensors.push_back({"x", DType::F32, {2, 3}, "", {}});
  layout.tensors[0].tiles = {{{0, 0}, {1, 3}, {0}, ""},
                             {{1, 0}, {1, 3}, {1}, ""},
                             {{2, 0}, {0, 3}, {2}, ""}};
  ASSERT_TRUE(writeTraSplit(dir.file("out"), **source, layout).ok());
  Result<std::unique_ptr<TensorSource>> split =
      openTensorSource(dir.file("out"));
  ASSERT_TRUE(split.ok()) << split.message();
  Result<HostTensor> all = (*split)->read("x");
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_TRUE(all->identical(t));
  EXPECT_EQ(traSplitRankFileName(3, 8), "rank-00003-of-00008.safetensors");
  EXPECT_EQ(traSplitRankFileName(123456, 200000),
            "rank-123456-of-200000.safetensors");
}

} // namespace
