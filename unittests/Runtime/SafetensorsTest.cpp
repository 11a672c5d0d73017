//===- SafetensorsTest.cpp - safetensors files and sharded checkpoints ----===//

#include "tra/Runtime/Safetensors.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <fcntl.h>
#include <unistd.h>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {3, 1, 4, 2}};

/// Returns a safetensors file: the 8-byte length of `header` (or `length`),
/// the header, then `data`.
std::string stBytes(const std::string &header, const std::string &data,
                    std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::string out;
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

/// Expects opening `path` to fail with a message starting with the path and
/// containing each of `fragments`.
void expectOpenError(const std::string &path,
                     std::initializer_list<std::string> fragments) {
  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_FALSE(file) << "opened " << path;
  const std::string &message = file.message();
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  for (const std::string &fragment : fragments)
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "expected \"" << fragment << "\" in: " << message;
}

/// Writes a file with one header `entry` for tensor "w" and `data`, then
/// expects opening it to fail naming the tensor and `fragment`.
void expectEntryError(const TempDir &dir, const std::string &entry,
                      const std::string &data, const std::string &fragment) {
  std::string path = dir.file("entry.safetensors");
  writeBytes(path, stBytes("{\"w\":" + entry + "}", data));
  SCOPED_TRACE(entry);
  expectOpenError(path, {"tensor 'w': ", fragment});
}

TEST(SafetensorsTest, RoundTripsEveryDTypeAndShape) {
  TempDir dir;
  std::vector<NamedTensor> tensors;
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes)
    for (const std::vector<int64_t> &shape : kShapes)
      tensors.push_back(
          {std::string(dtypeName(dtype)) + "." + std::to_string(tensors.size()),
           patternTensor(dtype, shape, seed++)});
  SafetensorsMetadata metadata = {{"format", "pt"}, {"note", "a \"quoted\"\n"}};
  std::string path = dir.file("all.safetensors");
  Status status = writeSafetensors(path, tensors, metadata);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dir.list(), std::vector<std::string>{"all.safetensors"});

  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(file->metadata(), metadata);
  EXPECT_EQ(file->dataOffset() % 8, 0u);
  ASSERT_EQ(file->tensors().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsEntry &entry = file->tensors()[i];
    const HostTensor &expected = tensors[i].tensor;
    EXPECT_EQ(entry.name, tensors[i].name); // Header order is kept.
    EXPECT_EQ(entry.dtype, expected.dtype());
    EXPECT_EQ(entry.shape, expected.shape());
    // Data is aligned to the element size.
    EXPECT_EQ((file->dataOffset() + entry.begin) % dtypeSize(entry.dtype), 0u)
        << entry.name;
    Result<HostTensor> tensor = file->get(entry.name);
    ASSERT_TRUE(tensor) << tensor.message();
    EXPECT_EQ(tensor->isView(), expected.byteSize() > 0);
    EXPECT_TRUE(tensor->identical(expected)) << entry.name;
  }

  // A view outlives the SafetensorsFile it came from.
  Result<HostTensor> view = file->get(tensors[4].name);
  ASSERT_TRUE(view);
  file = Error{"closed"};
  EXPECT_TRUE(view->identical(tensors[4].tensor));
}

TEST(SafetensorsTest, RoundTripsSmallFiles) {
  TempDir dir;
  std::string path = dir.file("small.safetensors");
  // No tensors at all.
  ASSERT_TRUE(writeSafetensors(path, {}).ok());
  EXPECT_EQ(readBytes(path), stBytes("{}      ", ""));
  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.message();
  EXPECT_TRUE(file->tensors().empty());
  // One 0-d tensor per dtype.
  for (DType dtype : kAllDTypes) {
    HostTensor scalar = patternTensor(dtype, {}, 3);
    ASSERT_TRUE(writeSafetensors(path, {{"s", scalar}}).ok());
    file = SafetensorsFile::open(path);
    ASSERT_TRUE(file) << file.message();
    Result<HostTensor> back = file->get("s");
    ASSERT_TRUE(back) << back.message();
    EXPECT_TRUE(back->identical(scalar)) << dtypeName(dtype);
  }
}

TEST(SafetensorsTest, WritesTheSpecifiedLayout) {
  TempDir dir;
  std::string path = dir.file("layout.safetensors");
  HostTensor small = HostTensor::fromDoubles(DType::U8, {3}, {1, 2, 3});
  HostTensor wide = HostTensor::fromDoubles(DType::F64, {1}, {0.5});
  ASSERT_TRUE(
      writeSafetensors(path, {{"small", small}, {"wide", wide}}, {{"k", "v"}})
          .ok());
  std::string header =
      R"({"__metadata__":{"k":"v"},"small":{"dtype":"U8","shape":[3],)"
      R"("data_offsets":[8,11]},"wide":{"dtype":"F64","shape":[1],)"
      R"("data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string data = std::string("\0\0\0\0\0\0\xe0\x3f", 8) + "\x01\x02\x03";
  EXPECT_EQ(readBytes(path), stBytes(header, data));
}

TEST(SafetensorsTest, ReadsTilesLikeAFullRead) {
  TempDir dir;
  std::string path = dir.file("tiles.safetensors");
  HostTensor cube = patternTensor(DType::F32, {3, 4, 5}, 11);
  HostTensor matrix = patternTensor(DType::BF16, {6, 7}, 12);
  HostTensor bytes = patternTensor(DType::U8, {9}, 13);
  ASSERT_TRUE(writeSafetensors(
                  path, {{"matrix", matrix}, {"cube", cube}, {"bytes", bytes}})
                  .ok());
  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.message();

  // Every tile of the cube.
  const std::vector<int64_t> &shape = cube.shape();
  int checked = 0;
  for (int64_t o0 = 0; o0 <= shape[0]; ++o0)
    for (int64_t s0 = 0; o0 + s0 <= shape[0]; ++s0)
      for (int64_t o1 = 0; o1 <= shape[1]; ++o1)
        for (int64_t s1 = 0; o1 + s1 <= shape[1]; ++s1)
          for (int64_t o2 = 0; o2 <= shape[2]; ++o2)
            for (int64_t s2 = 0; o2 + s2 <= shape[2]; ++s2) {
              std::vector<int64_t> offsets = {o0, o1, o2}, sizes = {s0, s1, s2};
              Result<HostTensor> tile = file->readTile("cube", offsets, sizes);
              ASSERT_TRUE(tile) << tile.message();
              ASSERT_FALSE(tile->isView());
              ASSERT_TRUE(tile->identical(naiveTile(cube, offsets, sizes)))
                  << formatShape(offsets) << " " << formatShape(sizes);
              ++checked;
            }
  EXPECT_EQ(checked, 10 * 15 * 21);

  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 7; ++c) {
      Result<HostTensor> tile = file->readTile("matrix", {r, c}, {6 - r, 1});
      ASSERT_TRUE(tile) << tile.message();
      ASSERT_TRUE(tile->identical(naiveTile(matrix, {r, c}, {6 - r, 1})));
    }
  Result<HostTensor> whole = file->readTile("bytes", {0}, {9});
  ASSERT_TRUE(whole);
  EXPECT_TRUE(whole->identical(bytes));
}

TEST(SafetensorsTest, ReadTileAndGetErrors) {
  TempDir dir;
  std::string path = dir.file("t.safetensors");
  ASSERT_TRUE(
      writeSafetensors(path, {{"w", patternTensor(DType::F32, {4, 6})}}).ok());
  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.message();
  Result<HostTensor> tile = file->readTile("w", {0}, {1});
  ASSERT_FALSE(tile);
  EXPECT_EQ(tile.message().rfind(path + ": tensor 'w': tile offsets [0]", 0),
            0u)
      << tile.message();
  tile = file->readTile("w", {2, 5}, {2, 2});
  ASSERT_FALSE(tile);
  EXPECT_NE(tile.message().find("exceed shape [4, 6] in dimension 1"),
            std::string::npos)
      << tile.message();
  tile = file->readTile("v", {0, 0}, {1, 1});
  ASSERT_FALSE(tile);
  EXPECT_EQ(tile.message(), path + ": no tensor named 'v'");
  EXPECT_EQ(file->get("v").message(), path + ": no tensor named 'v'");
  EXPECT_EQ(file->find("v"), nullptr);
  EXPECT_NE(file->find("w"), nullptr);
}

TEST(SafetensorsTest, FileErrors) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  expectOpenError(path, {"cannot open file: No such file or directory"});
  expectOpenError(dir.path(), {"is a directory"});

  writeBytes(path, "");
  expectOpenError(path, {"only 0 bytes, too short for the 8-byte header "
                         "length"});
  writeBytes(path, std::string("\x02\0\0\0", 4));
  expectOpenError(path, {"only 4 bytes"});

  writeBytes(path, stBytes("{}", "", 100));
  expectOpenError(path, {"header length 100 exceeds the file size 10"});
  writeBytes(path, stBytes("{}", "", uint64_t(1) << 63));
  expectOpenError(path, {"header length 9223372036854775808 exceeds the file "
                         "size 10"});

  writeBytes(path, stBytes("  {}", ""));
  expectOpenError(path, {"header does not start with '{'"});
  writeBytes(path, stBytes("", ""));
  expectOpenError(path, {"header does not start with '{'"});
  writeBytes(path, stBytes("[]", ""));
  expectOpenError(path, {"header does not start with '{'"});
}

TEST(SafetensorsTest, HeaderLengthLimit) {
  TempDir dir;
  std::string path = dir.file("huge.safetensors");
  writeBytes(path, stBytes("", "", 100'000'001));
  // Make the file long enough (sparse) for the length to fit.
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8 + 100'000'001), 0);
  ::close(fd);
  expectOpenError(path, {"header length 100000001 exceeds the limit of "
                         "100000000 bytes"});
}

TEST(SafetensorsTest, BadJson) {
  TempDir dir;
  std::string path = dir.file("json.safetensors");
  writeBytes(path, stBytes("{\"w\": {\"dtype\": \"F32\",}", ""));
  expectOpenError(path, {"invalid JSON at line 1, column 23",
                         "(in the safetensors header)"});
  writeBytes(path, stBytes("{\"w\": {\"dtype\": \"F32\"", ""));
  expectOpenError(path, {"invalid JSON", "unexpected end of input"});
  writeBytes(path, stBytes(std::string("{} \0\0", 5), ""));
  expectOpenError(path, {"invalid JSON", "unexpected text after the JSON "
                                         "value"});
}

TEST(SafetensorsTest, DuplicateNames) {
  TempDir dir;
  std::string path = dir.file("dup.safetensors");
  std::string entry = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  writeBytes(path, stBytes("{\"w\":" + entry + ",\"w\":" + entry + "}", "a"));
  expectOpenError(path, {"duplicate key \"w\""});
}

TEST(SafetensorsTest, MetadataErrors) {
  TempDir dir;
  std::string path = dir.file("meta.safetensors");
  writeBytes(path, stBytes(R"({"__metadata__":["a"]})", ""));
  expectOpenError(path, {"'__metadata__' must be an object"});
  writeBytes(path, stBytes(R"({"__metadata__":{"a":"b","n":3}})", ""));
  expectOpenError(path, {"'__metadata__' value of 'n' is not a string"});
}

TEST(SafetensorsTest, EntryErrors) {
  TempDir dir;
  std::string four(4, 'x');
  expectEntryError(dir, "5", four, "header entry is a number");
  expectEntryError(dir, R"({"shape":[1],"data_offsets":[0,4]})", four,
                   "missing or non-string 'dtype'");
  expectEntryError(dir, R"({"dtype":7,"shape":[1],"data_offsets":[0,4]})", four,
                   "missing or non-string 'dtype'");
  expectEntryError(dir, R"({"dtype":"F128","shape":[1],"data_offsets":[0,4]})",
                   four, "unknown dtype 'F128'");
  expectEntryError(dir, R"({"dtype":"f32","shape":[1],"data_offsets":[0,4]})",
                   four, "unknown dtype 'f32'");
  expectEntryError(dir, R"({"dtype":"U32","shape":[1],"data_offsets":[0,4]})",
                   four, "unsupported dtype 'U32'");
  expectEntryError(dir,
                   R"({"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]})",
                   four, "unsupported dtype 'F8_E4M3'");
  expectEntryError(dir, R"({"dtype":"F32","data_offsets":[0,4]})", four,
                   "missing or non-array 'shape'");
  expectEntryError(dir, R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})",
                   four, "'shape' must be an array of non-negative integers");
  expectEntryError(dir, R"({"dtype":"F32","shape":[1.0],"data_offsets":[0,4]})",
                   four, "'shape' must be an array of non-negative integers");
  expectEntryError(dir,
                   R"({"dtype":"F32","shape":[4294967296,4294967296],)"
                   R"("data_offsets":[0,4]})",
                   four, "shape [4294967296, 4294967296] is too large");
  expectEntryError(dir, R"({"dtype":"F32","shape":[1]})", four,
                   "'data_offsets' must be an array of two non-negative "
                   "integers");
  expectEntryError(dir, R"({"dtype":"F32","shape":[1],"data_offsets":[4]})",
                   four, "'data_offsets' must be an array");
  expectEntryError(dir, R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})",
                   four, "'data_offsets' must be an array");
  expectEntryError(dir, R"({"dtype":"F32","shape":[1],"data_offsets":[4,0]})",
                   four, "'data_offsets' [4, 0] end before they begin");
  expectEntryError(dir, R"({"dtype":"F32","shape":[2,3],"data_offsets":[0,4]})",
                   four,
                   "'data_offsets' [0, 4] span 4 bytes, but shape [2, 3] of "
                   "F32 needs 24");
  expectEntryError(dir, R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})",
                   four,
                   "'data_offsets' [0, 8] out of range: the data section "
                   "has 4 bytes");
}

TEST(SafetensorsTest, OverlapsHolesAndTrailingBytes) {
  TempDir dir;
  std::string path = dir.file("ranges.safetensors");
  auto entry = [](const char *name, int begin, int end) {
    return "\"" + std::string(name) + "\":{\"dtype\":\"U8\",\"shape\":[" +
           std::to_string(end - begin) + "],\"data_offsets\":[" +
           std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  writeBytes(
      path,
      stBytes("{" + entry("a", 0, 4) + "," + entry("b", 2, 6) + "}", "abcdef"));
  expectOpenError(path, {"tensors 'a' and 'b' overlap"});
  writeBytes(
      path,
      stBytes("{" + entry("b", 3, 6) + "," + entry("a", 0, 4) + "}", "abcdef"));
  expectOpenError(path, {"tensors 'a' and 'b' overlap"});
  writeBytes(
      path,
      stBytes("{" + entry("a", 0, 2) + "," + entry("b", 3, 6) + "}", "abcdef"));
  expectOpenError(path, {"bytes [2, 3) of the data section, before tensor "
                         "'b', belong to no tensor"});
  writeBytes(
      path,
      stBytes("{" + entry("a", 0, 2) + "," + entry("b", 2, 5) + "}", "abcdef"));
  expectOpenError(path, {"bytes [5, 6) at the end of the data section belong "
                         "to no tensor"});
  writeBytes(
      path,
      stBytes("{" + entry("a", 0, 6) + "," + entry("e", 3, 3) + "}", "abcdef"));
  expectOpenError(path, {"tensors 'a' and 'e' overlap"});
  // Valid: header order differs from data order, and empty tensors at the
  // boundaries.
  writeBytes(path,
             stBytes("{" + entry("b", 2, 6) + "," + entry("e", 2, 2) + "," +
                         entry("a", 0, 2) + "," + entry("z", 6, 6) + "}",
                     "abcdef"));
  Result<SafetensorsFile> file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.message();
  ASSERT_EQ(file->tensors().size(), 4u);
  EXPECT_EQ(file->tensors()[0].name, "b");
  Result<HostTensor> b = file->get("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(b->data()), 4), "cdef");
}

TEST(SafetensorsTest, WriterErrors) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  HostTensor t = patternTensor(DType::F32, {2});
  Status status = writeSafetensors(path, {{"a", t}, {"b", t}, {"a", t}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), path + ": duplicate tensor name 'a'");
  status = writeSafetensors(path, {{"__metadata__", t}});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("reserved"), std::string::npos);
  status = writeSafetensors(path, {{"a", t}}, {{"k", "1"}, {"k", "2"}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), path + ": duplicate metadata key 'k'");
  EXPECT_TRUE(dir.list().empty());
  std::string nowhere = dir.file("missing/w.safetensors");
  status = writeSafetensors(nowhere, {{"a", t}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind(nowhere + ": cannot create temporary", 0),
            0u);
  EXPECT_TRUE(dir.list().empty());
}

//===----------------------------------------------------------------------===//
// Sharded checkpoints
//===----------------------------------------------------------------------===//

class ShardedTest : public ::testing::Test {
protected:
  void SetUp() override {
    a = patternTensor(DType::BF16, {4, 3}, 1);
    b = patternTensor(DType::I32, {5}, 2);
    c = patternTensor(DType::F32, {2, 3, 4}, 3);
    ASSERT_TRUE(writeSafetensors(dir.file("model-00001-of-00002.safetensors"),
                                 {{"a", a}, {"b", b}})
                    .ok());
    ASSERT_TRUE(writeSafetensors(dir.file("model-00002-of-00002.safetensors"),
                                 {{"c", c}}, {{"format", "pt"}})
                    .ok());
    index = dir.file("model.safetensors.index.json");
  }

  void writeIndex(const std::string &json) { writeBytes(index, json); }

  void expectError(std::initializer_list<std::string> fragments) {
    Result<SafetensorsCheckpoint> checkpoint =
        SafetensorsCheckpoint::open(index);
    ASSERT_FALSE(checkpoint);
    const std::string &message = checkpoint.message();
    EXPECT_EQ(message.rfind(index + ": ", 0), 0u) << message;
    for (const std::string &fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "expected \"" << fragment << "\" in: " << message;
  }

  TempDir dir;
  std::string index;
  HostTensor a, b, c;
};

TEST_F(ShardedTest, OpensTensorsAcrossShards) {
  writeIndex(R"({
    "metadata": {"total_size": 152},
    "weight_map": {
      "c": "model-00002-of-00002.safetensors",
      "a": "model-00001-of-00002.safetensors",
      "b": "model-00001-of-00002.safetensors"
    }
  })");
  Result<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::open(index);
  ASSERT_TRUE(checkpoint) << checkpoint.message();
  EXPECT_TRUE(checkpoint->isSharded());
  EXPECT_EQ(checkpoint->tensorNames(),
            (std::vector<std::string>{"c", "a", "b"}));
  ASSERT_EQ(checkpoint->shards().size(), 2u);
  EXPECT_EQ(checkpoint->shards()[0].path(),
            dir.file("model-00002-of-00002.safetensors"));
  EXPECT_EQ(checkpoint->indexMetadata().find("total_size")->getInteger(), 152);
  std::vector<std::pair<const char *, HostTensor *>> expectations = {
      {"a", &a}, {"b", &b}, {"c", &c}};
  for (auto [name, expected] : expectations) {
    Result<HostTensor> tensor = checkpoint->get(name);
    ASSERT_TRUE(tensor) << tensor.message();
    EXPECT_TRUE(tensor->identical(*expected)) << name;
    Result<const SafetensorsEntry *> entry = checkpoint->entry(name);
    ASSERT_TRUE(entry);
    EXPECT_EQ((*entry)->shape, expected->shape());
  }
  Result<HostTensor> tile = checkpoint->readTile("c", {1, 1, 0}, {1, 2, 4});
  ASSERT_TRUE(tile) << tile.message();
  EXPECT_TRUE(tile->identical(naiveTile(c, {1, 1, 0}, {1, 2, 4})));
  EXPECT_EQ(checkpoint->get("zz").message(), index + ": no tensor named 'zz'");
  EXPECT_EQ(checkpoint->readTile("zz", {}, {}).message(),
            index + ": no tensor named 'zz'");
  EXPECT_EQ((*checkpoint->shardOf("a"))->path(),
            dir.file("model-00001-of-00002.safetensors"));
}

TEST_F(ShardedTest, OpensASingleFileAsACheckpoint) {
  std::string path = dir.file("model-00001-of-00002.safetensors");
  Result<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::open(path);
  ASSERT_TRUE(checkpoint) << checkpoint.message();
  EXPECT_FALSE(checkpoint->isSharded());
  EXPECT_EQ(checkpoint->tensorNames(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(checkpoint->indexMetadata().isNull());
  Result<HostTensor> tensor = checkpoint->get("b");
  ASSERT_TRUE(tensor);
  EXPECT_TRUE(tensor->identical(b));
}

TEST_F(ShardedTest, MissingShardFile) {
  writeIndex(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                "x": "model-00003-of-00003.safetensors"}})");
  expectError({"cannot open shard 'model-00003-of-00003.safetensors' of "
               "tensor 'x'",
               dir.file("model-00003-of-00003.safetensors") +
                   ": cannot open file: No such file or directory"});
}

TEST_F(ShardedTest, TensorMissingFromItsShard) {
  writeIndex(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                "c": "model-00001-of-00002.safetensors"}})");
  expectError({"tensor 'c' is mapped to shard "
               "'model-00001-of-00002.safetensors', but " +
               dir.file("model-00001-of-00002.safetensors") +
               " has no tensor of that name"});
}

TEST_F(ShardedTest, InvalidShard) {
  writeBytes(dir.file("broken.safetensors"), stBytes("{}", "", 50));
  writeIndex(R"({"weight_map": {"a": "broken.safetensors"}})");
  expectError({"cannot open shard 'broken.safetensors' of tensor 'a'",
               dir.file("broken.safetensors") + ": header length 50"});
}

TEST_F(ShardedTest, MalformedIndex) {
  writeIndex(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",}})");
  expectError({"invalid JSON at line 1"});
  writeIndex(R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                "a": "model-00001-of-00002.safetensors"}})");
  expectError({"duplicate key \"a\""});
  writeIndex(R"({"metadata": {}})");
  expectError({"missing 'weight_map'"});
  writeIndex(R"({"weight_map": []})");
  expectError({"'weight_map' is not an object"});
  writeIndex(R"({"weight_map": {"a": 1}})");
  expectError({"'weight_map' entry of tensor 'a' is not a file name"});
  writeIndex(R"({"weight_map": {}, "metadata": 3})");
  expectError({"'metadata' is not an object"});
  writeIndex(R"(["weight_map"])");
  expectError({"index is not a JSON object"});
  ::unlink(index.c_str());
  expectError({"cannot open file: No such file or directory"});
}

} // namespace
