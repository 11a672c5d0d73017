//===- MetaCheckpointTest.cpp - Meta-format LLaMA checkpoints -------------===//
//
// make_meta_checkpoint.py (PyTorch) writes random-weight checkpoints in Meta's
// layout, params.json + consolidated.NN.pth for MP = 1, 2, 4 and 8, fp16 and
// bf16, with and without grouped-query attention, plus the unsplit weights as
// f32 .npy files; the runtime must read every weight, and every tile of one,
// bit-exactly, and report each kind of damaged checkpoint naming the file and
// tensor. Fails when /usr/bin/python3 cannot import torch (a declared
// dependency).
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/MetaCheckpoint.h"
#include "tra/Runtime/Json.h"
#include "tra/Runtime/Npy.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <memory>
#include <random>
#include <unistd.h>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

/// A valid checkpoint of the test matrix.
struct Config {
  const char *name;
  int mp;
  const char *dtype; // torch dtype name
  bool gqa;          // n_kv_heads 4 of 8 heads, ffn_dim_multiplier 1.3
  bool vocabFromEmbedding;
  bool ropeFreqs;
  bool sharedOutput;
};

const Config kConfigs[] = {
    {"mp1_f16", 1, "float16", false, true, true, false},
    {"mp1_bf16", 1, "bfloat16", false, false, false, false},
    {"mp1_f16_gqa", 1, "float16", true, false, true, false},
    {"mp1_bf16_gqa", 1, "bfloat16", true, true, false, false},
    {"mp2_f16", 2, "float16", false, false, true, false},
    {"mp2_bf16", 2, "bfloat16", false, true, false, false},
    {"mp2_f16_gqa", 2, "float16", true, true, true, false},
    {"mp2_bf16_gqa", 2, "bfloat16", true, false, false, false},
    {"mp4_f16", 4, "float16", false, true, true, false},
    {"mp4_bf16", 4, "bfloat16", false, false, false, false},
    {"mp4_f16_gqa", 4, "float16", true, false, true, false},
    {"mp4_bf16_gqa", 4, "bfloat16", true, true, false, false},
    {"mp8_f16_gqa", 8, "float16", true, true, false, false},
    {"mp2_f32_shared", 2, "float32", false, false, false, true},
};

/// The base spec shared by all checkpoints: dim 64, 2 layers, 8 heads,
/// vocabulary 96, multiple_of 32 (hidden 192, or 224 with multiplier 1.3).
JsonValue baseSpec(const std::string &dir, int mp, const char *dtype,
                   bool gqa) {
  JsonValue spec = JsonValue::object();
  spec.set("dir", dir);
  spec.set("dim", 64);
  spec.set("n_layers", 2);
  spec.set("n_heads", 8);
  spec.set("vocab_size", 96);
  spec.set("multiple_of", 32);
  spec.set("norm_eps", 1e-5);
  spec.set("mp", mp);
  spec.set("dtype", dtype);
  spec.set("seed", mp * 10 + (gqa ? 1 : 0));
  if (gqa) {
    spec.set("n_kv_heads", 4);
    spec.set("ffn_dim_multiplier", 1.3);
    spec.set("rope_theta", 500000.0);
  }
  return spec;
}

/// A damaged checkpoint and the error it must produce.
struct ErrorCase {
  const char *name;
  int mp;
  const char *mutations; // JSON list
  /// The file the message must start with, relative to the checkpoint
  /// directory ("" for the directory itself).
  const char *file;
  std::vector<std::string> parts;
};

const ErrorCase kErrorCases[] = {
    {"no_params",
     2,
     R"([{"kind": "delete_params"}])",
     "params.json",
     {"missing"}},
    {"missing_shard",
     3,
     R"([{"kind": "delete_shard", "shard": 1}])",
     "consolidated.01.pth",
     {"missing shard", "consolidated.00.pth, consolidated.02.pth"}},
    {"no_shards",
     1,
     R"([{"kind": "delete_shard", "shard": 0}])",
     "",
     {"no consolidated.NN.pth"}},
    {"uneven",
     3,
     "[]",
     "",
     {"'tok_embeddings.weight' of shape [96, 64] cannot be split into 3 "
      "shards",
      "along dim 1"}},
    {"wrong_shape",
     2,
     R"([{"kind": "reshape", "shard": 1,
          "name": "layers.1.feed_forward.w2.weight"}])",
     "consolidated.01.pth",
     {"tensor 'layers.1.feed_forward.w2.weight' has shape [64, 110], "
      "expected [64, 112]",
      "split 2 ways along dim 1"}},
    {"truncated",
     2,
     R"([{"kind": "truncate", "shard": 1, "fraction": 0.5}])",
     "consolidated.01.pth",
     {"end-of-central-directory", "truncated"}},
    {"complex_dtype",
     2,
     R"([{"kind": "dtype", "shard": 0, "name": "layers.0.attention.wq.weight",
          "dtype": "complex64"}])",
     "consolidated.00.pth",
     {"tensor 'layers.0.attention.wq.weight'", "unsupported storage type",
      "ComplexFloatStorage"}},
    {"int_dtype",
     2,
     R"([{"kind": "dtype", "shard": 1, "name": "norm.weight",
          "dtype": "int32"}])",
     "consolidated.01.pth",
     {"tensor 'norm.weight' has dtype i32", "floating-point"}},
    {"mixed_dtype",
     2,
     R"([{"kind": "dtype", "shard": 1, "name": "output.weight",
          "dtype": "float32"}])",
     "consolidated.01.pth",
     {"tensor 'output.weight' has dtype f32, but f16 in", "consolidated.00"}},
    {"replicated_differs",
     4,
     R"([{"kind": "perturb", "shard": 2, "name": "layers.1.ffn_norm.weight"}])",
     "consolidated.02.pth",
     {"replicated tensor 'layers.1.ffn_norm.weight' differs from its copy in",
      "consolidated.00.pth"}},
    {"replicated_shape",
     2,
     R"([{"kind": "reshape", "shard": 1, "name": "norm.weight"}])",
     "consolidated.01.pth",
     {"tensor 'norm.weight' has shape [62], expected [64] (replicated"}},
    {"missing_tensor",
     2,
     R"([{"kind": "drop", "shard": 1, "name": "layers.0.attention.wk.weight"}])",
     "consolidated.01.pth",
     {"tensor 'layers.0.attention.wk.weight' is missing"}},
    {"extra_tensor",
     2,
     R"([{"kind": "extra", "shard": 0, "name": "layers.2.attention.wq.weight"}])",
     "consolidated.00.pth",
     {"unexpected tensor 'layers.2.attention.wq.weight'"}},
    {"vocab_mismatch",
     2,
     R"([{"kind": "params", "set": {"vocab_size": 100}}])",
     "consolidated.00.pth",
     {"tensor 'tok_embeddings.weight' has shape [96, 32], expected [100, 32]"}},
    {"more_layers",
     2,
     R"([{"kind": "params", "set": {"n_layers": 3}}])",
     "consolidated.00.pth",
     {"tensor 'layers.2.attention_norm.weight' is missing"}},
    {"fewer_layers",
     2,
     R"([{"kind": "params", "set": {"n_layers": 1}}])",
     "consolidated.00.pth",
     {"unexpected tensor 'layers.1."}},
    {"bad_heads",
     2,
     R"([{"kind": "params", "set": {"n_heads": 7}}])",
     "params.json",
     {"invalid model parameters", "dim 64 is not a multiple of n_heads 7"}},
    {"no_dim",
     2,
     R"([{"kind": "params", "remove": ["dim"]}])",
     "params.json",
     {"missing 'dim'"}},
    {"bad_vocab",
     2,
     R"([{"kind": "params", "set": {"vocab_size": -2}}])",
     "params.json",
     {"'vocab_size' must be -1 or an integer >= 1, got -2"}},
    {"scaled_rope",
     2,
     R"([{"kind": "params", "set": {"use_scaled_rope": true}}])",
     "params.json",
     {"use_scaled_rope", "not supported"}},
};

/// The generated checkpoints: one Python run writes them all.
struct Generated {
  std::unique_ptr<TempDir> dir;
  std::string error;
};

Generated generateAll() {
  Generated g;
  g.dir = std::make_unique<TempDir>();
  JsonValue specs = JsonValue::array();
  for (const Config &c : kConfigs) {
    JsonValue spec = baseSpec(g.dir->file(c.name), c.mp, c.dtype, c.gqa);
    spec.set("full_dir", g.dir->file(std::string(c.name) + "-full"));
    if (c.vocabFromEmbedding)
      spec.set("params_vocab_size", -1);
    spec.set("rope_freqs", c.ropeFreqs);
    spec.set("shared_output", c.sharedOutput);
    specs.push(std::move(spec));
  }
  for (const ErrorCase &e : kErrorCases) {
    JsonValue spec = baseSpec(g.dir->file(std::string("error-") + e.name), e.mp,
                              "float16", true);
    Result<JsonValue> mutations = parseJson(e.mutations, e.name);
    if (!mutations) {
      g.error = mutations.message();
      return g;
    }
    spec.set("mutations", std::move(*mutations));
    specs.push(std::move(spec));
  }
  std::string specPath = g.dir->file("spec.json");
  writeBytes(specPath, specs.serialize(1));
  CommandResult result = runCommand(std::string(kPython) + " " +
                                    shellQuote(TRA_MAKE_META_CHECKPOINT_PY) +
                                    " " + shellQuote(specPath));
  if (result.exitCode != 0)
    g.error = "make_meta_checkpoint.py failed:\n" + result.output;
  return g;
}

/// Returns the directory holding the generated checkpoints (generating them
/// on first use), or "" after reporting a failure.
std::string checkpoints() {
  static Generated g = generateAll();
  if (!g.error.empty()) {
    ADD_FAILURE() << g.error;
    return "";
  }
  return g.dir->path();
}

#define REQUIRE_CHECKPOINTS(root)                                              \
  TRA_REQUIRE_PYTHON("torch, numpy");                                          \
  const std::string root = checkpoints();                                      \
  if (root.empty())                                                            \
    return;

/// Reads the unsplit weight `name` written by the generator.
HostTensor fullWeight(const std::string &fullDir, const std::string &name) {
  Result<HostTensor> tensor = readNpy(fullDir + "/" + name + ".npy");
  EXPECT_TRUE(tensor.ok()) << tensor.message();
  return tensor ? *tensor : HostTensor();
}

/// Tiles of `shape` to check: random ones, ones straddling every shard
/// boundary along `splitDim`, single rows/columns and the whole tensor.
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
tilesFor(const std::vector<int64_t> &shape, int splitDim, int mp,
         std::mt19937 &rng) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> tiles;
  auto random = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto randomTile = [&]() {
    std::vector<int64_t> offsets, sizes;
    for (int64_t dim : shape) {
      int64_t offset = random(0, dim - 1);
      offsets.push_back(offset);
      sizes.push_back(random(1, dim - offset));
    }
    return std::make_pair(offsets, sizes);
  };
  for (int i = 0; i < 6; ++i)
    tiles.push_back(randomTile());
  if (splitDim >= 0) {
    int64_t block = shape[splitDim] / mp;
    for (int k = 1; k < mp; ++k) {
      auto tile = randomTile();
      int64_t before = random(1, block), after = random(1, block);
      if (k + 1 < mp)
        after = random(1, 2 * block); // may cover a whole shard
      after = std::min(after, shape[splitDim] - k * block);
      tile.first[splitDim] = k * block - before;
      tile.second[splitDim] = before + after;
      tiles.push_back(tile);
    }
    // Exactly one shard's block, and everything but the first and last
    // element along the split.
    auto tile = randomTile();
    tile.first[splitDim] = (mp - 1) * block;
    tile.second[splitDim] = block;
    tiles.push_back(tile);
    tile.first[splitDim] = 1;
    tile.second[splitDim] = shape[splitDim] - 2;
    tiles.push_back(tile);
  }
  tiles.push_back({std::vector<int64_t>(shape.size(), 0), shape});
  return tiles;
}

class MetaCheckpointMatrixTest : public ::testing::TestWithParam<Config> {};

TEST_P(MetaCheckpointMatrixTest, ReadsEveryWeightAndTileExactly) {
  REQUIRE_CHECKPOINTS(root);
  const Config &c = GetParam();
  const std::string dir = root + "/" + c.name;
  const std::string fullDir = dir + "-full";
  Result<MetaCheckpoint> ckpt = MetaCheckpoint::open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.message();

  // Parameters.
  EXPECT_EQ(ckpt->shardCount(), c.mp);
  EXPECT_EQ(ckpt->directory(), dir);
  const LlamaParams &p = ckpt->params();
  EXPECT_EQ(p.dim, 64);
  EXPECT_EQ(p.nLayers, 2);
  EXPECT_EQ(p.nHeads, 8);
  EXPECT_EQ(p.nKvHeads, c.gqa ? 4 : 8);
  EXPECT_EQ(p.vocabSize, 96);
  EXPECT_EQ(ckpt->args().vocabSize, c.vocabFromEmbedding ? -1 : 96);
  EXPECT_EQ(p.hiddenDim, c.gqa ? 224 : 192);
  EXPECT_EQ(p.ropeTheta, c.gqa ? 500000.0 : 10000.0);
  EXPECT_EQ(p.normEps, 1e-5);
  EXPECT_EQ(p.maxSeqLen, 2048);
  EXPECT_EQ(p.sharedClassifier, c.sharedOutput);
  EXPECT_TRUE(p.validate().ok());

  // The logical weights are llamaWeightShapes(params), in its order.
  auto shapes = llamaWeightShapes(p);
  ASSERT_EQ(ckpt->weights().size(), shapes.size());
  const DType stored = *parseDType(c.dtype);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const MetaWeight &w = ckpt->weights()[i];
    EXPECT_EQ(w.name, shapes[i].first);
    EXPECT_EQ(w.shape, shapes[i].second) << w.name;
    EXPECT_EQ(w.dtype, stored) << w.name;
    EXPECT_EQ(w.splitDim, metaSplitDim(w.name));
    EXPECT_EQ(ckpt->find(w.name), &w);
  }
  EXPECT_EQ(ckpt->find("rope.freqs"), nullptr);

  std::mt19937 rng(c.mp * 7 + c.gqa);
  for (const MetaWeight &w : ckpt->weights()) {
    SCOPED_TRACE(w.name);
    HostTensor expected = fullWeight(fullDir, w.name);
    ASSERT_EQ(expected.shape(), w.shape);
    Result<HostTensor> whole = ckpt->read(w.name);
    ASSERT_TRUE(whole.ok()) << whole.message();
    EXPECT_TRUE(whole->identical(expected));
    // In the stored dtype: the f32 values round-trip exactly.
    Result<HostTensor> raw = ckpt->read(w.name, stored);
    ASSERT_TRUE(raw.ok()) << raw.message();
    EXPECT_TRUE(raw->identical(convert(expected, stored)));

    for (const auto &[offsets, sizes] :
         tilesFor(w.shape, w.splitDim, c.mp, rng)) {
      SCOPED_TRACE("tile at " + formatShape(offsets) + " of " +
                   formatShape(sizes));
      HostTensor want = naiveTile(expected, offsets, sizes);
      Result<HostTensor> tile = ckpt->readTile(w.name, offsets, sizes);
      ASSERT_TRUE(tile.ok()) << tile.message();
      EXPECT_TRUE(tile->identical(want));
      Result<HostTensor> storedTile =
          ckpt->readTile(w.name, offsets, sizes, stored);
      ASSERT_TRUE(storedTile.ok()) << storedTile.message();
      EXPECT_TRUE(storedTile->identical(convert(want, stored)));
      Result<HostTensor> bf16Tile =
          ckpt->readTile(w.name, offsets, sizes, DType::BF16);
      ASSERT_TRUE(bf16Tile.ok()) << bf16Tile.message();
      EXPECT_TRUE(bf16Tile->identical(convert(want, DType::BF16)));
    }
  }

  Result<LlamaCheckpoint> all = ckpt->loadAll();
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ(all->params.dim, p.dim);
  EXPECT_EQ(all->params.vocabSize, p.vocabSize);
  ASSERT_EQ(all->weights.size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(all->weights[i].first, shapes[i].first);
    EXPECT_EQ(all->weights[i].second.dtype(), DType::F32);
    EXPECT_TRUE(
        all->weights[i].second.identical(fullWeight(fullDir, shapes[i].first)))
        << shapes[i].first;
  }
}

INSTANTIATE_TEST_SUITE_P(Meta, MetaCheckpointMatrixTest,
                         ::testing::ValuesIn(kConfigs),
                         [](const ::testing::TestParamInfo<Config> &info) {
                           return std::string(info.param.name);
                         });

class MetaCheckpointErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(MetaCheckpointErrorTest, NamesFileAndTensor) {
  REQUIRE_CHECKPOINTS(root);
  const ErrorCase &e = GetParam();
  const std::string dir = root + "/error-" + e.name;
  Result<MetaCheckpoint> ckpt = MetaCheckpoint::open(dir);
  ASSERT_FALSE(ckpt.ok()) << dir << " opened";
  std::string file = *e.file ? dir + "/" + e.file : dir;
  EXPECT_EQ(ckpt.message().rfind(file + ": ", 0), 0u) << ckpt.message();
  for (const std::string &part : e.parts)
    EXPECT_NE(ckpt.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << ckpt.message();
}

INSTANTIATE_TEST_SUITE_P(Meta, MetaCheckpointErrorTest,
                         ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(MetaCheckpointTest, BadPathsAndTiles) {
  REQUIRE_CHECKPOINTS(root);
  Result<MetaCheckpoint> missing = MetaCheckpoint::open(root + "/nowhere");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().rfind(root + "/nowhere: ", 0), 0u);
  std::string file = root + "/mp2_f16/params.json";
  Result<MetaCheckpoint> notDir = MetaCheckpoint::open(file);
  ASSERT_FALSE(notDir.ok());
  EXPECT_NE(notDir.message().find(file + ": not a directory"),
            std::string::npos)
      << notDir.message();

  const std::string dir = root + "/mp2_f16";
  Result<MetaCheckpoint> ckpt = MetaCheckpoint::open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.message();
  Result<HostTensor> unknown = ckpt->readTile("rope.freqs", {0}, {1});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.message(), dir + ": no weight named 'rope.freqs'");
  Result<HostTensor> outside =
      ckpt->readTile("output.weight", {90, 0}, {7, 64});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.message().rfind(dir + ": weight 'output.weight': tile", 0),
            0u)
      << outside.message();
  // Empty tiles are fine.
  Result<HostTensor> empty = ckpt->readTile("output.weight", {48, 3}, {0, 5});
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ(empty->numElements(), 0);
}

TEST(MetaCheckpointTest, ParamsJson) {
  Result<MetaModelArgs> llama3 = parseMetaParams(
      R"({"dim": 4096, "n_layers": 32, "n_heads": 32, "n_kv_heads": 8,
          "vocab_size": 128256, "multiple_of": 1024,
          "ffn_dim_multiplier": 1.3, "norm_eps": 1e-05,
          "rope_theta": 500000.0})",
      "params.json");
  ASSERT_TRUE(llama3.ok()) << llama3.message();
  EXPECT_EQ(llama3->hiddenDim(), 14336);
  EXPECT_EQ(llama3->nKvHeads, 8);
  EXPECT_EQ(llama3->ropeTheta, 500000.0);
  LlamaParams p = llama3->toLlamaParams(llama3->vocabSize, false);
  EXPECT_TRUE(p.validate().ok());
  EXPECT_EQ(p.kvDim(), 1024);

  Result<MetaModelArgs> llama2 = parseMetaParams(
      R"({"dim": 4096, "multiple_of": 256, "n_heads": 32, "n_layers": 32,
          "norm_eps": 1e-05, "vocab_size": -1, "n_kv_heads": null})",
      "params.json");
  ASSERT_TRUE(llama2.ok()) << llama2.message();
  EXPECT_EQ(llama2->hiddenDim(), 11008);
  EXPECT_EQ(llama2->nKvHeads, 32);
  EXPECT_EQ(llama2->vocabSize, -1);
  EXPECT_EQ(llama2->ropeTheta, 10000.0);
  EXPECT_FALSE(llama2->ffnDimMultiplier.has_value());

  Result<MetaModelArgs> bad =
      parseMetaParams(R"({"dim": 64.5, "n_layers": 1})", "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "p.json: 'dim' must be an integer >= 1, got 64.5");
  Result<MetaModelArgs> eps = parseMetaParams(
      R"({"dim": 64, "n_layers": 1, "n_heads": 8, "vocab_size": 3,
          "norm_eps": 0})",
      "p.json");
  ASSERT_FALSE(eps.ok());
  EXPECT_EQ(eps.message(),
            "p.json: 'norm_eps' must be a positive number, got 0");
  EXPECT_FALSE(parseMetaParams("[1]", "p.json").ok());
  EXPECT_FALSE(parseMetaParams("{", "p.json").ok());

  // Sizes beyond 2^31 are refused: the FFN hidden size computed from them
  // overflowed int64_t (found by fuzz-json).
  Result<MetaModelArgs> huge = parseMetaParams(
      R"({"dim": 4011111111111111196, "n_layers": 32, "n_heads": 31,
          "vocab_size": -1})",
      "p.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.message(),
            "p.json: 'dim' is 4011111111111111196, more than 2^31");
  Result<MetaModelArgs> vocab = parseMetaParams(
      R"({"dim": 64, "n_layers": 1, "n_heads": 8,
          "vocab_size": 9223372036854775807})",
      "p.json");
  ASSERT_FALSE(vocab.ok());
  EXPECT_NE(vocab.message().find("more than 2^31"), std::string::npos);
  Result<MetaModelArgs> multiplier = parseMetaParams(
      R"({"dim": 64, "n_layers": 1, "n_heads": 8, "vocab_size": 3,
          "ffn_dim_multiplier": 1e300})",
      "p.json");
  ASSERT_FALSE(multiplier.ok());
  EXPECT_EQ(multiplier.message(),
            "p.json: 'ffn_dim_multiplier' is 1e+300, more than 1024");
  // The largest accepted values give a hidden size that fits.
  Result<MetaModelArgs> largest = parseMetaParams(
      R"({"dim": 2147483648, "n_layers": 1, "n_heads": 8, "vocab_size": 3,
          "multiple_of": 2147483648, "ffn_dim_multiplier": 1024})",
      "p.json");
  ASSERT_TRUE(largest.ok()) << largest.message();
  EXPECT_GT(largest->hiddenDim(), 0);
}

TEST(MetaCheckpointTest, SplitRule) {
  EXPECT_EQ(metaSplitDim("layers.0.attention.wq.weight"), 0);
  EXPECT_EQ(metaSplitDim("layers.12.attention.wk.weight"), 0);
  EXPECT_EQ(metaSplitDim("layers.3.attention.wv.weight"), 0);
  EXPECT_EQ(metaSplitDim("layers.3.feed_forward.w1.weight"), 0);
  EXPECT_EQ(metaSplitDim("layers.3.feed_forward.w3.weight"), 0);
  EXPECT_EQ(metaSplitDim("output.weight"), 0);
  EXPECT_EQ(metaSplitDim("layers.3.attention.wo.weight"), 1);
  EXPECT_EQ(metaSplitDim("layers.3.feed_forward.w2.weight"), 1);
  EXPECT_EQ(metaSplitDim("tok_embeddings.weight"), 1);
  EXPECT_EQ(metaSplitDim("layers.3.attention_norm.weight"), -1);
  EXPECT_EQ(metaSplitDim("layers.3.ffn_norm.weight"), -1);
  EXPECT_EQ(metaSplitDim("norm.weight"), -1);
  EXPECT_EQ(metaSplitDim("rope.freqs"), -1);
  EXPECT_EQ(metaShardName(0), "consolidated.00.pth");
  EXPECT_EQ(metaShardName(7), "consolidated.07.pth");
  EXPECT_EQ(metaShardName(123), "consolidated.123.pth");
}

} // namespace
