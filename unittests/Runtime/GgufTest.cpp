//===- GgufTest.cpp - GGUF files and their LLaMA view ---------------------===//
//
// GGUF files written here byte by byte (a small writer below) must read back
// exactly: every tensor type tra reads (F32, F16, BF16, Q8_0 dequantised),
// any region of a tensor, metadata of every value type, versions 2 and 3,
// any alignment. Every damaged or unsupported input must give one error
// naming the file and the key or tensor, without reading past the end of
// the file or allocating what a hostile header asks for. The LLaMA view
// (Meta names, parameters, vocabulary) must refuse what tra cannot run.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Gguf.h"
#include "tra/Runtime/ByteOrder.h"
#include "tra/Runtime/GgufLlama.h"
#include "tra/Runtime/GgufTokenizer.h"
#include "tra/Runtime/TensorSource.h"
#include "tra/Runtime/Tokenizer.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

enum : uint32_t {
  kU8 = 0,
  kI8,
  kU16,
  kI16,
  kU32,
  kI32,
  kF32,
  kBool,
  kString,
  kArray,
  kU64,
  kI64,
  kF64
};
enum : uint32_t { kTF32 = 0, kTF16 = 1, kTQ8_0 = 8, kTQ4_K = 12, kTBF16 = 30 };

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += char(v >> (8 * i));
}
void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += char(v >> (8 * i));
}
void putString(std::string &out, std::string_view s) {
  putU64(out, s.size());
  out += s;
}
std::string f32Bytes(const std::vector<float> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * 4);
}

/// Writes GGUF files: metadata and tensors in the order added, each
/// tensor's data padded to the alignment.
struct GgufWriter {
  uint32_t version = 3;
  uint64_t alignment = 32;
  uint64_t keys = 0, tensorCount = 0;
  std::string metadata, infos, data;

  /// A key with a value of `type` encoded as `value`.
  GgufWriter &raw(std::string_view key, uint32_t type, std::string value) {
    putString(metadata, key);
    putU32(metadata, type);
    metadata += value;
    ++keys;
    return *this;
  }
  GgufWriter &str(std::string_view key, std::string_view value) {
    std::string v;
    putString(v, value);
    return raw(key, kString, v);
  }
  GgufWriter &u32(std::string_view key, uint32_t value) {
    std::string v;
    putU32(v, value);
    return raw(key, kU32, v);
  }
  GgufWriter &f32(std::string_view key, float value) {
    return raw(key, kF32, f32Bytes({value}));
  }
  GgufWriter &strings(std::string_view key,
                      const std::vector<std::string> &values) {
    std::string v;
    putU32(v, kString);
    putU64(v, values.size());
    for (const std::string &s : values)
      putString(v, s);
    return raw(key, kArray, v);
  }
  GgufWriter &floats(std::string_view key, const std::vector<float> &values) {
    std::string v;
    putU32(v, kF32);
    putU64(v, values.size());
    return raw(key, kArray, v + f32Bytes(values));
  }
  GgufWriter &ints(std::string_view key, const std::vector<int32_t> &values) {
    std::string v;
    putU32(v, kI32);
    putU64(v, values.size());
    for (int32_t x : values)
      putU32(v, uint32_t(x));
    return raw(key, kArray, v);
  }
  /// A tensor of ggml `type` with dimensions `ne` (fastest first) and the
  /// given bytes, at the next aligned offset (or at `offset`).
  GgufWriter &tensor(std::string_view name, uint32_t type,
                     const std::vector<uint64_t> &ne, const std::string &bytes,
                     std::optional<uint64_t> offset = std::nullopt) {
    putString(infos, name);
    putU32(infos, uint32_t(ne.size()));
    for (uint64_t n : ne)
      putU64(infos, n);
    putU32(infos, type);
    putU64(infos, offset.value_or(data.size()));
    data += bytes;
    data.append((alignment - data.size() % alignment) % alignment, '\0');
    ++tensorCount;
    return *this;
  }
  std::string bytes() const {
    std::string out = "GGUF";
    putU32(out, version);
    putU64(out, tensorCount);
    putU64(out, keys);
    out += metadata + infos;
    out.append((alignment - out.size() % alignment) % alignment, '\0');
    return out + data;
  }
  std::string write(const TempDir &dir, const std::string &name) const {
    std::string path = dir.file(name);
    writeBytes(path, bytes());
    return path;
  }
};

/// Returns Q8_0 blocks for `values` (multiples of 32): per block the f16
/// scale `scales[b]` and int8 values `q[i]`; `expected` gets d * q.
std::string q8Blocks(const std::vector<float> &scales,
                     const std::vector<int8_t> &q,
                     std::vector<float> &expected) {
  std::string out;
  for (size_t b = 0; b < scales.size(); ++b) {
    uint16_t d = floatToHalf(scales[b]);
    out += char(d & 0xff);
    out += char(d >> 8);
    for (int i = 0; i < 32; ++i) {
      int8_t v = q[b * 32 + i];
      out += char(v);
      expected.push_back(halfToFloat(d) * float(v));
    }
  }
  return out;
}

std::vector<float> iota(size_t n, float scale = 0.25f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i) * scale - 3.0f;
  return v;
}

//===----------------------------------------------------------------------===//
// Reading back
//===----------------------------------------------------------------------===//

TEST(GgufTest, ReadsEveryTypeBack) {
  TempDir dir;
  std::vector<float> f32 = iota(15);
  std::vector<float> half = iota(8, 0.5f);
  std::string f16Bytes, bf16Bytes;
  for (float v : half) {
    uint16_t h = floatToHalf(v), b = floatToBFloat16(v);
    f16Bytes += std::string{char(h & 0xff), char(h >> 8)};
    bf16Bytes += std::string{char(b & 0xff), char(b >> 8)};
  }
  std::vector<int8_t> q(128);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(int(i * 37 % 255) - 127);
  std::vector<float> q8Expected;
  std::string q8 = q8Blocks({0.5f, -2.0f, 0.001f, 3.25f}, q, q8Expected);
  GgufWriter w;
  w.str("general.name", "t")
      .tensor("f32", kTF32, {5, 3}, f32Bytes(f32))
      .tensor("f16", kTF16, {4, 2}, f16Bytes)
      .tensor("bf16", kTBF16, {8}, bf16Bytes)
      .tensor("q8", kTQ8_0, {64, 2}, q8);
  std::string path = w.write(dir, "all.gguf");

  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->dataOffset() % 32, 0u);
  ASSERT_EQ(file->tensors().size(), 4u);
  struct Case {
    const char *name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<double> values;
  };
  std::vector<double> h16, b16;
  for (float v : half) {
    h16.push_back(halfToFloat(floatToHalf(v)));
    b16.push_back(bfloat16ToFloat(floatToBFloat16(v)));
  }
  std::vector<Case> cases = {
      {"f32", DType::F32, {3, 5}, {f32.begin(), f32.end()}},
      {"f16", DType::F16, {2, 4}, h16},
      {"bf16", DType::BF16, {8}, b16},
      {"q8", DType::F32, {2, 64}, {q8Expected.begin(), q8Expected.end()}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const GgufTensor *t = file->findTensor(c.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->shape, c.shape); // ne reversed
    EXPECT_EQ(t->dtype(), c.dtype);
    EXPECT_EQ(t->offset % 32, 0u);
    Result<HostTensor> whole = file->read(*t);
    ASSERT_TRUE(whole) << whole.message();
    EXPECT_EQ(whole->dtype(), c.dtype);
    EXPECT_EQ(whole->shape(), c.shape);
    EXPECT_EQ(whole->isView(), t->type != GgmlType::Q8_0);
    for (size_t i = 0; i < c.values.size(); ++i)
      ASSERT_EQ(whole->loadAsDouble(int64_t(i)), c.values[i])
          << "element " << i;
    // Every region matches the same region of the whole tensor.
    for (int64_t a = 0; a < c.shape[0]; ++a)
      for (int64_t n = 1; a + n <= c.shape[0]; ++n) {
        std::vector<int64_t> offsets = {a}, sizes = {n};
        if (c.shape.size() == 2)
          for (auto [o, s] : {std::pair<int64_t, int64_t>{0, c.shape[1]},
                              {1, c.shape[1] - 2},
                              {c.shape[1] / 2 - 1, 3},
                              {c.shape[1] - 1, 1}}) {
            offsets = {a, o};
            sizes = {n, s};
            Result<HostTensor> tile = file->readTile(*t, offsets, sizes);
            ASSERT_TRUE(tile) << tile.message();
            EXPECT_TRUE(tile->identical(naiveTile(*whole, offsets, sizes)))
                << "offsets " << formatShape(offsets) << " sizes "
                << formatShape(sizes);
          }
        else {
          Result<HostTensor> tile = file->readTile(*t, offsets, sizes);
          ASSERT_TRUE(tile) << tile.message();
          EXPECT_TRUE(tile->identical(naiveTile(*whole, offsets, sizes)));
        }
      }
  }
  EXPECT_ERROR(file->readTile(*file->findTensor("q8"), {1, 60}, {1, 5}),
               path + ": tensor 'q8': ");
}

TEST(GgufTest, VersionTwoAndAlignment) {
  TempDir dir;
  for (uint32_t version : {2u, 3u})
    for (uint64_t alignment : {1u, 8u, 32u, 256u}) {
      SCOPED_TRACE("version " + std::to_string(version) + " alignment " +
                   std::to_string(alignment));
      GgufWriter w;
      w.version = version;
      w.alignment = alignment;
      if (alignment != 32)
        w.u32("general.alignment", uint32_t(alignment));
      w.tensor("a", kTF32, {3}, f32Bytes({1, 2, 3}))
          .tensor("b", kTF32, {2}, f32Bytes({4, 5}));
      std::string path = w.write(dir, "v.gguf");
      Result<GgufFile> file = GgufFile::open(path);
      ASSERT_TRUE(file) << file.message();
      EXPECT_EQ(file->version(), version);
      EXPECT_EQ(file->alignment(), alignment);
      EXPECT_EQ(file->dataOffset() % alignment, 0u);
      Result<HostTensor> b = file->read(*file->findTensor("b"));
      ASSERT_TRUE(b) << b.message();
      EXPECT_EQ(b->load<float>(1), 5.0f);
    }
}

TEST(GgufTest, MetadataOfEveryType) {
  TempDir dir;
  GgufWriter w;
  std::string v;
  w.raw("u8", kU8, std::string(1, char(200)));
  w.raw("i8", kI8, std::string(1, char(-5)));
  w.raw("u16", kU16, std::string{char(0x34), char(0x12)});
  w.raw("i16", kI16, std::string{char(0xff), char(0xff)});
  w.u32("u32", 4000000000u);
  v.clear();
  putU32(v, uint32_t(-7));
  w.raw("i32", kI32, v);
  v.clear();
  putU64(v, uint64_t(1) << 40);
  w.raw("u64", kU64, v);
  w.raw("i64", kI64, v);
  w.f32("f32", 0.5f);
  double d = 1e-300;
  w.raw("f64", kF64, std::string(reinterpret_cast<const char *>(&d), 8));
  w.raw("bool", kBool, std::string(1, '\1'));
  w.str("string", "h\xC3\xA9llo");
  w.strings("strings", {"a", "", "ccc"});
  w.floats("floats", {1.5f, -2.0f});
  w.ints("ints", {3, -4});
  // An array of two arrays of u8.
  v.clear();
  putU32(v, kArray);
  putU64(v, 2);
  for (int i = 0; i < 2; ++i) {
    putU32(v, kU8);
    putU64(v, 3);
    v += "xyz";
  }
  w.raw("nested", kArray, v);
  std::string path = w.write(dir, "meta.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ(file->entries().size(), 16u);
  EXPECT_EQ(*file->getUnsigned("u8"), 200u);
  EXPECT_EQ(*file->getUnsigned("u16"), 0x1234u);
  EXPECT_EQ(*file->getUnsigned("u32"), 4000000000u);
  EXPECT_EQ(*file->getUnsigned("u64"), uint64_t(1) << 40);
  EXPECT_EQ(*file->getUnsigned("i64"), uint64_t(1) << 40);
  EXPECT_ERROR(file->getUnsigned("i8"), path + ": metadata key 'i8' is -5");
  EXPECT_ERROR(file->getUnsigned("i16"), "'i16' is -1, negative");
  EXPECT_ERROR(file->getUnsigned("i32"), "'i32' is -7");
  EXPECT_EQ(*file->getFloat("f32"), 0.5);
  EXPECT_EQ(*file->getFloat("f64"), 1e-300);
  EXPECT_EQ(*file->getString("string"), "h\xC3\xA9llo");
  EXPECT_EQ(*file->getStringArray("strings"),
            (std::vector<std::string_view>{"a", "", "ccc"}));
  EXPECT_EQ(*file->getF32Array("floats"), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(*file->getIntArray("ints"), (std::vector<int64_t>{3, -4}));
  const GgufEntry *nested = file->find("nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->type, GgufValueType::Array);
  EXPECT_EQ(nested->elementType, GgufValueType::Array);
  EXPECT_EQ(nested->count, 2u);
  EXPECT_EQ(file->find("bool")->data[0], 1);
  // Wrong types and missing keys name the key, its type and the expected.
  EXPECT_ERROR(file->getString("u32"),
               path + ": metadata key 'u32' has type u32, expected string");
  EXPECT_ERROR(file->getUnsigned("f32"), "'f32' has type f32, expected an "
                                         "integer");
  EXPECT_ERROR(file->getFloat("string"), "has type string, expected f32 or "
                                         "f64");
  EXPECT_ERROR(file->getStringArray("floats"),
               "'floats' has type array of f32, expected array of string");
  EXPECT_ERROR(file->getF32Array("ints"), "array of i32, expected array of "
                                          "f32");
  EXPECT_ERROR(file->getIntArray("strings"), "expected array of integers");
  EXPECT_ERROR(file->getString("absent"),
               path + ": metadata key 'absent' is missing");
}

//===----------------------------------------------------------------------===//
// Damaged and unsupported files
//===----------------------------------------------------------------------===//

/// Expects `result` to be a failure whose message starts with `path` and
/// holds each of `parts`.
template <class T>
void expectFailure(const Result<T> &result, const std::string &path,
                   std::initializer_list<std::string> parts) {
  ASSERT_FALSE(result) << "succeeded";
  EXPECT_EQ(result.message().rfind(path + ": ", 0), 0u) << result.message();
  for (const std::string &part : parts)
    EXPECT_NE(result.message().find(part), std::string::npos)
        << "message: " << result.message() << "\nlacks: " << part;
}

/// Writes `bytes` and expects opening them to fail with `parts`.
void expectOpenError(const TempDir &dir, const std::string &bytes,
                     std::initializer_list<std::string> parts) {
  std::string path = dir.file("bad.gguf");
  writeBytes(path, bytes);
  expectFailure(GgufFile::open(path), path, parts);
}

/// A valid file with metadata and two tensors.
GgufWriter validFile() {
  GgufWriter w;
  w.str("general.architecture", "llama")
      .strings("tokens", {"a", "b"})
      .tensor("x", kTF32, {4, 2}, f32Bytes(iota(8)))
      .tensor("y", kTF16, {16}, std::string(32, '\1'));
  return w;
}

TEST(GgufTest, WrongMagic) {
  TempDir dir;
  std::string bytes = validFile().bytes();
  bytes[0] = 'g';
  expectOpenError(dir, bytes, {"not a GGUF file", "magic \"GGUF\""});
  expectOpenError(dir, "", {"not a GGUF file"});
}

TEST(GgufTest, UnsupportedVersion) {
  TempDir dir;
  for (uint32_t version : {1u, 4u}) {
    GgufWriter w = validFile();
    w.version = version;
    expectOpenError(dir, w.bytes(),
                    {"GGUF version " + std::to_string(version) +
                     " is not supported (versions 2 and 3 are)"});
  }
  GgufWriter w = validFile();
  w.version = 0x03000000; // version 3 written big-endian
  expectOpenError(dir, w.bytes(), {"big-endian"});
}

TEST(GgufTest, TruncatedHeader) {
  TempDir dir;
  expectOpenError(dir, "GGUF\3\0", {"truncated: the header's version"});
  expectOpenError(dir, validFile().bytes().substr(0, 20),
                  {"truncated: the header's tensor and key counts"});
}

TEST(GgufTest, TruncatedMetadataAndTensorInfos) {
  TempDir dir;
  GgufWriter w = validFile();
  std::string bytes = w.bytes();
  const size_t metadataEnd = 24 + w.metadata.size();
  // Cut inside the first key's value, inside the string array, inside the
  // tensor infos.
  expectOpenError(dir, bytes.substr(0, 24 + 8 + 20 + 4 + 3),
                  {"truncated: the string value of metadata key "
                   "'general.architecture'"});
  expectOpenError(dir, bytes.substr(0, metadataEnd - 2),
                  {"metadata key 'tokens'", "truncated"});
  expectOpenError(dir, bytes.substr(0, metadataEnd + 5),
                  {"truncated: the name of tensor 0"});
  expectOpenError(dir, bytes.substr(0, metadataEnd + 10),
                  {"truncated: the dimension count of tensor 'x'"});
  expectOpenError(dir, bytes.substr(0, metadataEnd + 8 + 1 + 4 + 8),
                  {"truncated: the dimensions of tensor 'x'"});
}

TEST(GgufTest, EveryTruncationFails) {
  // Whatever prefix of a valid file is read, opening fails cleanly (never
  // reading past the end: the sanitizer build checks).
  TempDir dir;
  std::string bytes = validFile().bytes();
  std::string path = dir.file("cut.gguf");
  for (size_t n = 0; n < bytes.size(); ++n) {
    writeBytes(path, bytes.substr(0, n));
    Result<GgufFile> file = GgufFile::open(path);
    ASSERT_FALSE(file) << "a prefix of " << n << " bytes opened";
    EXPECT_EQ(file.message().rfind(path + ": ", 0), 0u) << file.message();
  }
  writeBytes(path, bytes);
  EXPECT_TRUE(GgufFile::open(path));
}

TEST(GgufTest, LengthsBeyondTheFile) {
  TempDir dir;
  // A string whose length exceeds the file (and would overflow with it).
  for (uint64_t length : {uint64_t(1000), ~uint64_t(0)}) {
    std::string v;
    putU64(v, length);
    GgufWriter w;
    w.raw("s", kString, v + "abc");
    expectOpenError(dir, w.bytes(),
                    {"truncated: the string value of metadata key 's'"});
  }
  // An array claiming 2^62 u32 (or strings, or arrays): refused before
  // anything is allocated or walked.
  for (uint32_t element : {kU32, kString, kArray}) {
    std::string v;
    putU32(v, element);
    putU64(v, uint64_t(1) << 62);
    GgufWriter w;
    w.raw("a", kArray, v + std::string(64, '\0'));
    expectOpenError(dir, w.bytes(),
                    {"truncated: the 4611686018427387904 ",
                     " elements of metadata key 'a'"});
  }
  // A key name longer than the file.
  GgufWriter w;
  w.raw("k", kU8, "x");
  std::string bytes = w.bytes();
  bytes[24] = char(0xff);
  expectOpenError(dir, bytes, {"truncated: the name of metadata key 0"});
}

TEST(GgufTest, CountsBeyondTheLimits) {
  TempDir dir;
  std::string bytes = validFile().bytes();
  std::string tooMany = bytes;
  for (int i = 0; i < 8; ++i)
    tooMany[8 + i] = char(0x7f); // tensor count ~2^63
  expectOpenError(dir, tooMany,
                  {"tensor count", "exceeds the limit of 1048576"});
  tooMany = bytes;
  tooMany[16 + 5] = 1; // key count 2^40 + 2
  expectOpenError(dir, tooMany, {"metadata key count", "exceeds the limit"});
  // Within the limits but more than the file holds: truncated, and nothing
  // reserved beyond what the file could hold.
  std::string many = bytes;
  many[16 + 2] = 1; // key count 65538
  expectOpenError(dir, many, {});
}

TEST(GgufTest, BadValueTypesAndNesting) {
  TempDir dir;
  GgufWriter w;
  w.raw("k", 13, "");
  expectOpenError(dir, w.bytes(),
                  {"metadata key 'k' has unknown value type 13"});
  std::string v;
  putU32(v, 99);
  putU64(v, 1);
  GgufWriter a;
  a.raw("arr", kArray, v);
  expectOpenError(dir, a.bytes(),
                  {"metadata key 'arr': array of unknown value type 99"});
  // Arrays nested five deep.
  std::string nested;
  for (int i = 0; i < 5; ++i) {
    putU32(nested, kArray);
    putU64(nested, 1);
  }
  putU32(nested, kU8);
  putU64(nested, 0);
  GgufWriter deep;
  deep.raw("deep", kArray, nested);
  expectOpenError(dir, deep.bytes(), {"'deep': arrays nested deeper than 4"});
  GgufWriter empty;
  empty.u32("", 1);
  expectOpenError(dir, empty.bytes(), {"metadata key 0 has an empty name"});
}

TEST(GgufTest, DuplicateKeysAndTensors) {
  TempDir dir;
  GgufWriter w;
  w.u32("k", 1).u32("k", 2);
  expectOpenError(dir, w.bytes(), {"duplicate metadata key 'k'"});
  GgufWriter t;
  t.tensor("x", kTF32, {1}, f32Bytes({1}))
      .tensor("x", kTF32, {1}, f32Bytes({2}));
  expectOpenError(dir, t.bytes(), {"duplicate tensor 'x'"});
}

TEST(GgufTest, TooManyDimensions) {
  TempDir dir;
  GgufWriter w;
  w.tensor("x", kTF32, {1, 1, 1, 1, 1}, f32Bytes({1}));
  expectOpenError(dir, w.bytes(),
                  {"tensor 'x' has 5 dimensions, at most 4 are allowed"});
  GgufWriter big;
  big.tensor("x", kTF32, {uint64_t(1) << 40, uint64_t(1) << 40}, "");
  expectOpenError(dir, big.bytes(),
                  {"tensor 'x' of shape", "too many "
                                          "elements"});
  GgufWriter huge;
  huge.tensor("x", kTF32, {~uint64_t(0)}, "");
  expectOpenError(dir, huge.bytes(),
                  {"tensor 'x': dimension ne[0]", "is too large"});
  GgufWriter bytes;
  bytes.tensor("x", kTF32, {uint64_t(1) << 62}, "");
  expectOpenError(dir, bytes.bytes(), {"tensor 'x'", "byte size overflows"});
}

TEST(GgufTest, BadAlignment) {
  TempDir dir;
  GgufWriter notPowerOfTwo, zero, string;
  notPowerOfTwo.u32("general.alignment", 24);
  zero.u32("general.alignment", 0);
  string.str("general.alignment", "32");
  for (auto &[w, part] : std::vector<std::pair<GgufWriter, std::string>>{
           {notPowerOfTwo, "'general.alignment' is 24, not a power of two"},
           {zero, "'general.alignment' is 0, not a power of two"},
           {string, "'general.alignment' is a string, expected a u32"}})
    expectOpenError(dir, w.bytes(), {part});
}

TEST(GgufTest, MisalignedOffset) {
  TempDir dir;
  GgufWriter w;
  w.tensor("x", kTF32, {2}, f32Bytes({1, 2}), 4);
  expectOpenError(dir, w.bytes(),
                  {"tensor 'x': offset 4 is not a multiple of the alignment "
                   "32"});
}

TEST(GgufTest, TensorDataOutOfRange) {
  TempDir dir;
  GgufWriter w;
  w.tensor("x", kTF32, {2}, f32Bytes({1, 2}), 64);
  expectOpenError(dir, w.bytes(),
                  {"tensor 'x': its 8 bytes at offset 64 run past the end of "
                   "the data section (32 bytes; a truncated file?)"});
  GgufWriter far;
  far.tensor("x", kTF32, {2}, f32Bytes({1, 2}), ~uint64_t(0) - 31);
  expectOpenError(dir, far.bytes(), {"tensor 'x': its 8 bytes", "run past"});
  // Truncated tensor data.
  std::string bytes = validFile().bytes();
  expectOpenError(dir, bytes.substr(0, bytes.size() - 1),
                  {"tensor 'y': its 32 bytes", "run past the end"});
}

TEST(GgufTest, OverlappingTensors) {
  TempDir dir;
  GgufWriter w;
  w.tensor("a", kTF32, {16}, f32Bytes(iota(16)), 0)
      .tensor("b", kTF32, {4}, f32Bytes(iota(4)), 32);
  expectOpenError(dir, w.bytes(),
                  {"tensors 'a' and 'b' overlap in the data section"});
}

TEST(GgufTest, UnsupportedTensorTypes) {
  TempDir dir;
  GgufWriter w;
  w.tensor("blk.0.attn_q.weight", kTQ4_K, {256}, std::string(144, '\0'));
  expectOpenError(dir, w.bytes(),
                  {"tensor 'blk.0.attn_q.weight' has type Q4_K, which tra "
                   "does not read (it reads F32, F16, BF16 and Q8_0)"});
  GgufWriter unknown;
  unknown.tensor("x", 99, {1}, std::string(4, '\0'));
  expectOpenError(dir, unknown.bytes(),
                  {"tensor 'x' has unknown ggml type 99"});
  GgufWriter rows;
  rows.tensor("q", kTQ8_0, {48, 2}, std::string(102, '\0'));
  expectOpenError(dir, rows.bytes(),
                  {"tensor 'q' of shape [2, 48]: type Q8_0 needs rows (ne[0]) "
                   "of a multiple of 32 values, it has 48"});
  EXPECT_EQ(ggmlTypeName(8), "Q8_0");
  EXPECT_EQ(ggmlTypeName(14), "Q6_K");
  EXPECT_EQ(ggmlTypeName(4), "");
  EXPECT_EQ(ggmlTypeName(99), "");
}

TEST(GgufTest, DetectsTheMagic) {
  TempDir dir;
  std::string path = validFile().write(dir, "model.bin");
  EXPECT_TRUE(isGgufFile(path));
  EXPECT_FALSE(isGgufFile(dir.path()));
  EXPECT_FALSE(isGgufFile(dir.file("absent")));
  writeBytes(dir.file("short"), "GGU");
  EXPECT_FALSE(isGgufFile(dir.file("short")));
}

//===----------------------------------------------------------------------===//
// The LLaMA view
//===----------------------------------------------------------------------===//

/// A tiny LLaMA (dim 32, hidden 64, 2 layers, 4 heads, 2 KV heads, vocab
/// 16) with weights element i of tensor t = 0.01 * i + t; `skip` leaves a
/// tensor out, `q8` stores the matrices Q8_0 (scale 1/64, q = i % 64 - 32).
struct TinyLlama {
  std::vector<std::pair<std::string, std::string>> replace;
  std::string skip;
  bool classifier = false;
  bool q8 = false;
  std::vector<std::pair<std::string, uint32_t>> extraKeys;
  std::vector<std::string> extraTensors;

  GgufWriter writer() const {
    GgufWriter w;
    std::vector<std::pair<std::string, std::string>> keys = {
        {"general.architecture", "llama"}};
    for (auto &[k, v] : replace)
      if (k == "general.architecture")
        keys[0].second = v;
    w.str(keys[0].first, keys[0].second);
    std::vector<std::pair<std::string, uint32_t>> ints = {
        {"llama.embedding_length", 32},
        {"llama.feed_forward_length", 64},
        {"llama.block_count", 2},
        {"llama.attention.head_count", 4},
        {"llama.attention.head_count_kv", 2},
        {"llama.context_length", 128},
        {"llama.vocab_size", 16}};
    for (auto &[k, v] : ints) {
      bool replaced = false;
      for (auto &[rk, rv] : replace)
        if (rk == k) {
          replaced = true;
          if (rv != "-")
            w.u32(k, uint32_t(std::stoul(rv)));
        }
      if (!replaced)
        w.u32(k, v);
    }
    w.f32("llama.attention.layer_norm_rms_epsilon", 1e-6f);
    w.f32("llama.rope.freq_base", 500000.0f);
    for (auto &[k, v] : extraKeys)
      w.u32(k, v);
    std::vector<std::pair<std::string, std::vector<uint64_t>>> shapes = {
        {"token_embd.weight", {32, 16}}, {"output_norm.weight", {32}}};
    if (classifier)
      shapes.push_back({"output.weight", {32, 16}});
    for (int l = 0; l < 2; ++l) {
      std::string b = "blk." + std::to_string(l) + ".";
      for (auto &[n, s] :
           std::vector<std::pair<std::string, std::vector<uint64_t>>>{
               {"attn_norm.weight", {32}},
               {"attn_q.weight", {32, 32}},
               {"attn_k.weight", {32, 16}},
               {"attn_v.weight", {32, 16}},
               {"attn_output.weight", {32, 32}},
               {"ffn_norm.weight", {32}},
               {"ffn_gate.weight", {32, 64}},
               {"ffn_down.weight", {64, 32}},
               {"ffn_up.weight", {32, 64}}})
        shapes.push_back({b + n, s});
    }
    for (const std::string &name : extraTensors)
      shapes.push_back({name, {4}});
    float t = 0;
    for (auto &[name, ne] : shapes) {
      t += 1;
      if (name == skip)
        continue;
      uint64_t n = 1;
      for (uint64_t d : ne)
        n *= d;
      if (q8 && ne.size() == 2) {
        std::vector<int8_t> q(n);
        for (uint64_t i = 0; i < n; ++i)
          q[i] = int8_t(int(i % 64) - 32);
        std::vector<float> unused;
        w.tensor(name, kTQ8_0, ne,
                 q8Blocks(std::vector<float>(n / 32, 1.0f / 64), q, unused));
        continue;
      }
      std::vector<float> v(n);
      for (uint64_t i = 0; i < n; ++i)
        v[i] = 0.01f * float(i) + t;
      w.tensor(name, kTF32, ne, f32Bytes(v));
    }
    return w;
  }
};

TEST(GgufLlamaTest, ReadsAsMetaCheckpoint) {
  TempDir dir;
  for (bool classifier : {false, true}) {
    TinyLlama model;
    model.classifier = classifier;
    // No .gguf extension: recognised by the magic.
    std::string path = model.writer().write(dir, "tiny.bin");
    Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
    ASSERT_TRUE(source) << source.message();
    EXPECT_STREQ((*source)->format(), "gguf");
    const LlamaParams &p = *(*source)->llamaParams();
    EXPECT_EQ(p.dim, 32);
    EXPECT_EQ(p.hiddenDim, 64);
    EXPECT_EQ(p.nLayers, 2);
    EXPECT_EQ(p.nHeads, 4);
    EXPECT_EQ(p.nKvHeads, 2);
    EXPECT_EQ(p.vocabSize, 16);
    EXPECT_EQ(p.maxSeqLen, 128);
    EXPECT_EQ(p.normEps, double(1e-6f));
    EXPECT_EQ(p.ropeTheta, 500000.0);
    EXPECT_EQ(p.sharedClassifier, !classifier);
    auto shapes = llamaWeightShapes(p);
    ASSERT_EQ((*source)->tensors().size(), shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      EXPECT_EQ((*source)->tensors()[i].name, shapes[i].first);
      EXPECT_EQ((*source)->tensors()[i].shape, shapes[i].second);
    }
    // wq of layer 1 (the 13th tensor written, +1 with a classifier) is
    // stored unpermuted: Meta's row r is GGUF's row r.
    Result<HostTensor> wq =
        (*source)->readTile("layers.1.attention.wq.weight", {5, 3}, {2, 4});
    ASSERT_TRUE(wq) << wq.message();
    const float t = classifier ? 14 : 13;
    EXPECT_EQ(wq->load<float>(0), 0.01f * float(5 * 32 + 3) + t);
    EXPECT_EQ(wq->load<float>(7), 0.01f * float(6 * 32 + 6) + t);
    Result<HostTensor> w2 = (*source)->read("layers.0.feed_forward.w2.weight");
    ASSERT_TRUE(w2) << w2.message();
    EXPECT_EQ(w2->shape(), (std::vector<int64_t>{32, 64}));
    // Whole and in its stored type: a view into the mapped file, no copy.
    EXPECT_TRUE(w2->isView());
    EXPECT_FALSE(wq->isView());
    Result<HostTensor> f16 =
        (*source)->read("norm.weight", DType::F16); // converted on request
    ASSERT_TRUE(f16) << f16.message();
    EXPECT_EQ(f16->dtype(), DType::F16);
    EXPECT_FALSE(f16->isView());
  }
}

TEST(GgufLlamaTest, Q8_0IsDequantisedToF32) {
  TempDir dir;
  TinyLlama model;
  model.q8 = true;
  std::string path = model.writer().write(dir, "q8.gguf");
  Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
  ASSERT_TRUE(source) << source.message();
  const TensorInfo *info = (*source)->find("layers.0.feed_forward.w2.weight");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->dtype, DType::F32);
  EXPECT_EQ(info->shape, (std::vector<int64_t>{32, 64})); // two blocks a row
  Result<HostTensor> tile = (*source)->readTile(
      "layers.0.feed_forward.w2.weight", {3, 30}, {2, 4}); // across blocks
  ASSERT_TRUE(tile) << tile.message();
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      int64_t i = (3 + r) * 64 + 30 + c;
      EXPECT_EQ(tile->load<float>(r * 4 + c), float(i % 64 - 32) / 64);
    }
}

TEST(GgufLlamaTest, Q8_0ReadAsStored) {
  TempDir dir;
  TinyLlama model;
  model.q8 = true;
  std::string path = model.writer().write(dir, "q8.gguf");
  Result<std::unique_ptr<TensorSource>> source = openTensorSource(path);
  ASSERT_TRUE(source) << source.message();
  const std::string name = "layers.0.feed_forward.w2.weight";
  ASSERT_TRUE((*source)->find(name)->q8_0);
  EXPECT_FALSE((*source)->find("norm.weight")->q8_0);
  Result<Q8Tensor> stored = (*source)->readQ8_0(name);
  ASSERT_TRUE(stored) << stored.message();
  EXPECT_EQ(stored->values.dtype(), DType::I8);
  EXPECT_EQ(stored->values.shape(), (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(stored->scales.dtype(), DType::F16);
  EXPECT_EQ(stored->scales.shape(), (std::vector<int64_t>{32, 2}));
  // The values times their block's scale are what readTile dequantises.
  Result<HostTensor> wide = (*source)->read(name);
  ASSERT_TRUE(wide) << wide.message();
  for (int64_t i = 0; i < 32 * 64; ++i) {
    ASSERT_EQ(stored->values.loadAsDouble(i), double(i % 64 - 32));
    ASSERT_EQ(stored->values.loadAsDouble(i) *
                  stored->scales.loadAsDouble(i / 32),
              wide->loadAsDouble(i))
        << "element " << i;
  }
  EXPECT_ERROR((*source)->readQ8_0("norm.weight"),
               path + ": tensor 'norm.weight' is stored as f32, not Q8_0");
  EXPECT_ERROR((*source)->readQ8_0("nope"), path + ": no tensor named 'nope'");
  // Another format has none.
  TinyLlama f32;
  Result<std::unique_ptr<TensorSource>> plain =
      openTensorSource(f32.writer().write(dir, "f32.gguf"));
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_FALSE((*plain)->find(name)->q8_0);
  EXPECT_ERROR((*plain)->readQ8_0(name), "is stored as f32, not Q8_0");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.message();
  EXPECT_ERROR(file->readQ8_0(*file->findTensor("output_norm.weight")),
               "tensor 'output_norm.weight' is F32, not Q8_0");
}

TEST(GgufLlamaTest, TensorNames) {
  EXPECT_EQ(ggufLlamaTensorName("tok_embeddings.weight"), "token_embd.weight");
  EXPECT_EQ(ggufLlamaTensorName("norm.weight"), "output_norm.weight");
  EXPECT_EQ(ggufLlamaTensorName("output.weight"), "output.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.12.attention.wo.weight"),
            "blk.12.attn_output.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.0.feed_forward.w1.weight"),
            "blk.0.ffn_gate.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.0.feed_forward.w2.weight"),
            "blk.0.ffn_down.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.0.feed_forward.w3.weight"),
            "blk.0.ffn_up.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.0.attention_norm.weight"),
            "blk.0.attn_norm.weight");
  EXPECT_EQ(ggufLlamaTensorName("layers.0.bogus"), "");
  EXPECT_EQ(ggufLlamaTensorName("layers..ffn_norm.weight"), "");
}

/// Expects opening `model` as a checkpoint to fail with `parts`.
void expectModelError(const TinyLlama &model,
                      std::initializer_list<std::string> parts) {
  TempDir dir;
  std::string path = model.writer().write(dir, "m.gguf");
  expectFailure(openTensorSource(path), path, parts);
}

TEST(GgufLlamaTest, RefusesOtherArchitectures) {
  TinyLlama m;
  m.replace = {{"general.architecture", "qwen2"}};
  expectModelError(m, {"general.architecture 'qwen2' is not supported"});
}

TEST(GgufLlamaTest, MissingMetadata) {
  TinyLlama m;
  m.replace = {{"llama.block_count", "-"}};
  expectModelError(m, {"metadata key 'llama.block_count' is missing"});
  TinyLlama zero;
  zero.replace = {{"llama.attention.head_count", "0"}};
  expectModelError(zero, {"invalid model parameters: n_heads must be "
                          "positive"});
  TinyLlama huge;
  huge.replace = {{"llama.context_length", "4294967295"}};
  expectModelError(huge, {"'llama.context_length' is 4294967295, too large"});
  // More layers than tensors is refused at once (fuzz-gguf timed out on a
  // block count of 4194305, listing every layer's weights first).
  TinyLlama layers;
  layers.replace = {{"llama.block_count", "4194305"}};
  expectModelError(layers, {"llama.block_count 4194305 is more layers than "
                            "the file has tensors (20)"});
}

TEST(GgufLlamaTest, MissingTensors) {
  TinyLlama m;
  m.skip = "blk.1.ffn_up.weight";
  expectModelError(m, {"tensor 'blk.1.ffn_up.weight' "
                       "(layers.1.feed_forward.w3.weight) is missing"});
  TinyLlama e;
  e.skip = "token_embd.weight";
  expectModelError(e, {"tensor 'token_embd.weight' (tok_embeddings.weight) is "
                       "missing"});
}

TEST(GgufLlamaTest, ShapesDisagreeingWithMetadata) {
  TinyLlama vocab;
  vocab.replace = {{"llama.vocab_size", "20"}};
  expectModelError(vocab, {"tensor 'token_embd.weight' has 16 rows, but the "
                           "vocabulary size (llama.vocab_size) is 20"});
  TinyLlama kv;
  kv.replace = {{"llama.attention.head_count_kv", "4"}};
  expectModelError(kv, {"tensor 'blk.0.attn_k.weight' "
                        "(layers.0.attention.wk.weight) has shape [16, 32], "
                        "the metadata implies [32, 32]"});
}

TEST(GgufLlamaTest, RefusesWhatTheModelDoesNotCompute) {
  TinyLlama rot;
  rot.extraKeys = {{"llama.rope.dimension_count", 4}};
  expectModelError(rot, {"llama.rope.dimension_count 4 differs from the head "
                         "size 8"});
  TinyLlama experts;
  experts.extraKeys = {{"llama.expert_count", 8}};
  expectModelError(experts, {"llama.expert_count 8: mixture-of-experts"});
  TinyLlama freqs;
  freqs.extraTensors = {"rope_freqs.weight"};
  expectModelError(freqs, {"tensor 'rope_freqs.weight'", "not supported"});
  TinyLlama fine;
  fine.extraKeys = {{"llama.rope.dimension_count", 8},
                    {"llama.expert_count", 0}};
  TempDir dir;
  EXPECT_TRUE(openTensorSource(fine.writer().write(dir, "ok.gguf")));
}

//===----------------------------------------------------------------------===//
// The vocabulary
//===----------------------------------------------------------------------===//

/// The first 259 pieces of LLaMA's vocabulary: <unk>, <s>, </s>, the 256
/// byte pieces <0x00>..<0xFF>.
std::vector<std::string> llamaFirstPieces() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
  }
  return tokens;
}

/// LLaMA's layout (llamaFirstPieces), then `pieces` (with U+2581 for
/// spaces) scored by position.
GgufWriter vocabFile(const std::vector<std::string> &pieces,
                     std::vector<std::string> *plain = nullptr,
                     uint32_t bos = 1) {
  std::vector<std::string> tokens = llamaFirstPieces();
  std::vector<int32_t> types = {2, 3, 3};
  types.resize(tokens.size(), 6);
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t i = 0; i < pieces.size(); ++i) {
    tokens.push_back(pieces[i]);
    types.push_back(1);
    scores.push_back(-float(i));
  }
  if (plain) {
    *plain = tokens;
    for (std::string &t : *plain)
      for (size_t at; (at = t.find("\xE2\x96\x81")) != std::string::npos;)
        t.replace(at, 3, " ");
  }
  GgufWriter w;
  w.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tokens)
      .floats("tokenizer.ggml.scores", scores)
      .ints("tokenizer.ggml.token_type", types)
      .u32("tokenizer.ggml.bos_token_id", bos)
      .u32("tokenizer.ggml.eos_token_id", 2);
  return w;
}

TEST(GgufTokenizerTest, EncodesLikeTheSameLlama2cVocabulary) {
  TempDir dir;
  const std::string sp = "\xE2\x96\x81";
  std::vector<std::string> plain;
  std::string path =
      vocabFile({sp, "l", "o", "h", "e", "ll", sp + "h", "el", sp + "he", "llo",
                 sp + "hello", "<", "s", ">", "<s"},
                &plain)
          .write(dir, "vocab.gguf");
  // The same pieces and scores in llama2.c's format.
  std::string bin;
  putU32(bin, 16);
  for (size_t i = 0; i < plain.size(); ++i) {
    float score = i < 259 ? 0.0f : -float(i - 259);
    bin += std::string(reinterpret_cast<const char *>(&score), 4);
    putU32(bin, uint32_t(plain[i].size()));
    bin += plain[i];
  }
  writeBytes(dir.file("vocab.bin"), bin);
  EXPECT_TRUE(hasGgufVocabulary(path));
  EXPECT_FALSE(hasGgufVocabulary(dir.file("vocab.bin")));
  Result<Tokenizer> gguf = Tokenizer::open(path);
  ASSERT_TRUE(gguf) << gguf.message();
  Result<Tokenizer> llama2c = Tokenizer::open(dir.file("vocab.bin"));
  ASSERT_TRUE(llama2c) << llama2c.message();
  EXPECT_EQ(gguf->size(), 274);
  EXPECT_EQ(gguf->piece(259), " ");
  for (const char *text : {"hello", "hello hello", "he\xC3\xA9 lo"}) {
    SCOPED_TRACE(text);
    std::vector<int64_t> ids = gguf->encode(text);
    EXPECT_EQ(ids, llama2c->encode(text));
    std::string decoded;
    for (size_t i = 1; i < ids.size(); ++i)
      decoded += gguf->decode(ids[i - 1], ids[i]);
    EXPECT_EQ(decoded, text);
  }
  EXPECT_EQ(gguf->encode("hello"), (std::vector<int64_t>{1, 269}));
  // Control pieces are never produced from text ("<s" + ">" is not BOS) and
  // decode to nothing; a llama2.c vocabulary spelling BOS "<s>" would merge.
  EXPECT_EQ(gguf->encode("<s>"), (std::vector<int64_t>{1, 259, 273, 272}));
  EXPECT_EQ(llama2c->encode("<s>"), (std::vector<int64_t>{1, 259, 1}));
  EXPECT_EQ(gguf->decode(5, 0), "");
}

/// Expects reading the vocabulary of `w` to fail with `parts`.
void expectVocabError(const GgufWriter &w,
                      std::initializer_list<std::string> parts) {
  TempDir dir;
  std::string path = w.write(dir, "v.gguf");
  expectFailure(Tokenizer::open(path), path, parts);
}

TEST(GgufTokenizerTest, RefusesWhatTheEncoderCannotUse) {
  GgufWriter none;
  none.str("general.architecture", "llama");
  expectVocabError(none, {"holds no vocabulary (no metadata key "
                          "'tokenizer.ggml.model')"});
  GgufWriter gpt2;
  gpt2.str("tokenizer.ggml.model", "gpt2");
  expectVocabError(gpt2, {"tokenizer.ggml.model 'gpt2' is not supported"});
  expectVocabError(vocabFile({"a"}, nullptr, 0),
                   {"tokenizer.ggml.bos_token_id is 0; tra's SentencePiece "
                    "encoder needs BOS 1 and EOS 2 (LLaMA's layout)"});

  std::vector<std::string> tokens = llamaFirstPieces();
  std::vector<std::string> badBytes = tokens;
  badBytes[13] = "x";
  GgufWriter bytes;
  bytes.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", badBytes)
      .floats("tokenizer.ggml.scores", std::vector<float>(tokens.size()));
  expectVocabError(bytes, {"token 13 is 'x', not the byte piece <0x0A>"});
  GgufWriter scores;
  scores.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tokens)
      .floats("tokenizer.ggml.scores", {1.0f});
  expectVocabError(scores, {"259 pieces but 1 scores"});
  GgufWriter eos;
  eos.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tokens)
      .floats("tokenizer.ggml.scores", std::vector<float>(tokens.size()))
      .u32("tokenizer.ggml.eos_token_id", 128001);
  expectVocabError(eos, {"tokenizer.ggml.eos_token_id is 128001; tra's "
                         "SentencePiece encoder needs BOS 1 and EOS 2"});
  GgufWriter few;
  few.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
      .floats("tokenizer.ggml.scores", {0, 0, 0});
  expectVocabError(few, {"vocabulary of 3 pieces lacks the 256 byte pieces"});
  GgufWriter types;
  types.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tokens)
      .floats("tokenizer.ggml.scores", std::vector<float>(tokens.size()))
      .ints("tokenizer.ggml.token_type", {1, 2});
  expectVocabError(types, {"259 pieces but 2 piece types"});
}

} // namespace
