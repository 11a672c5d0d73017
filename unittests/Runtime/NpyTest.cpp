//===- NpyTest.cpp - Reading and writing .npy files -----------------------===//

#include "tra/Runtime/Npy.h"
#include "tra/Runtime/File.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <sys/stat.h>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {3, 1, 4, 2}};

/// Returns the bytes of an .npy file with the given version and header dict
/// (padded as NumPy does unless `pad` is false), followed by `data`.
std::string npyBytes(int major, const std::string &dict,
                     const std::string &data, bool pad = true) {
  size_t lengthBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  if (pad) {
    size_t prefix = 8 + lengthBytes;
    size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
    header.append(total - prefix - header.size() - 1, ' ');
    header += '\n';
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), sizeof(v));
  return out;
}

/// Expects reading `path` to fail with a message starting with the path and
/// containing `fragment`.
void expectReadError(const std::string &path, const std::string &fragment) {
  Result<HostTensor> tensor = readNpy(path);
  ASSERT_FALSE(tensor) << "read succeeded for " << path;
  const std::string &message = tensor.message();
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(fragment), std::string::npos)
      << "expected \"" << fragment << "\" in: " << message;
  // The header-only and memory-mapped paths report the same.
  Result<HostTensor> mapped = readNpy(path, {/*memoryMap=*/true});
  ASSERT_FALSE(mapped);
  EXPECT_EQ(mapped.message(), message);
}

TEST(NpyTest, RoundTripsEveryDTypeAndShape) {
  TempDir dir;
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::BF16)
      continue; // Written as f32; see WritesBFloat16AsFloat32.
    for (const std::vector<int64_t> &shape : kShapes) {
      std::string path = dir.file(std::string(dtypeName(dtype)) + "_" +
                                  std::to_string(seed) + ".npy");
      HostTensor tensor = patternTensor(dtype, shape, seed++);
      ASSERT_TRUE(writeNpy(path, tensor).ok());

      Result<HostTensor> copy = readNpy(path);
      ASSERT_TRUE(copy) << copy.message();
      EXPECT_FALSE(copy->isView());
      EXPECT_TRUE(copy->identical(tensor))
          << dtypeName(dtype) << " " << formatShape(shape);

      Result<HostTensor> mapped = readNpy(path, {/*memoryMap=*/true});
      ASSERT_TRUE(mapped) << mapped.message();
      EXPECT_EQ(mapped->isView(), tensor.byteSize() > 0);
      EXPECT_TRUE(mapped->identical(tensor));

      Result<NpyHeader> header = readNpyHeader(path);
      ASSERT_TRUE(header) << header.message();
      EXPECT_EQ(header->majorVersion, 1);
      EXPECT_EQ(header->descr, *npyDescr(dtype));
      EXPECT_EQ(header->shape, shape);
      EXPECT_EQ(header->dataOffset % 64, 0u);
    }
  }
  // Only the written files are left: no temporary files.
  for (const std::string &name : dir.list())
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
}

TEST(NpyTest, WritesTheHeaderNumPyWrites) {
  HostTensor tensor = HostTensor::zeros(DType::F32, {2, 3});
  std::string bytes = encodeNpy(tensor);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes[8], 118); // Header length 118, little-endian.
  EXPECT_EQ(bytes[9], 0);
  EXPECT_EQ(bytes.substr(10, 59),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes[126], ' ');
  EXPECT_NE(encodeNpy(HostTensor::zeros(DType::U8, {7}))
                .find("'descr': '|u1', 'fortran_order': False, "
                      "'shape': (7,), }"),
            std::string::npos);
  EXPECT_NE(encodeNpy(HostTensor::zeros(DType::Bool, {})).find("'shape': ()"),
            std::string::npos);
}

TEST(NpyTest, UsesVersion2ForHugeHeaders) {
  TempDir dir;
  // 30000 dimensions of size 1 need a header longer than 65535 bytes.
  std::vector<int64_t> shape(30000, 1);
  HostTensor tensor = HostTensor::fromDoubles(DType::I16, shape, {42});
  std::string path = dir.file("v2.npy");
  ASSERT_TRUE(writeNpy(path, tensor).ok());
  Result<NpyHeader> header = readNpyHeader(path);
  ASSERT_TRUE(header) << header.message();
  EXPECT_EQ(header->majorVersion, 2);
  EXPECT_EQ(header->dataOffset % 64, 0u);
  Result<HostTensor> back = readNpy(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->identical(tensor));
}

TEST(NpyTest, WritesBFloat16AsFloat32) {
  TempDir dir;
  HostTensor bf16 =
      HostTensor::fromDoubles(DType::BF16, {3}, {1.0, -2.5, 3.0e38});
  std::string path = dir.file("bf16.npy");
  ASSERT_TRUE(writeNpy(path, bf16).ok());
  Result<HostTensor> back = readNpy(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->dtype(), DType::F32);
  EXPECT_TRUE(convert(*back, DType::BF16).identical(bf16));
}

TEST(NpyTest, ReadsOtherHeaderSpellings) {
  TempDir dir;
  std::string data = floats({1, 2, 3, 4, 5, 6});
  struct Case {
    int major;
    std::string dict;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {
      {2,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
       {2, 3}},
      {3,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
       {2, 3}},
      // Key order, quotes, spacing and trailing commas may vary.
      {1, "{\"shape\":(6,),\"fortran_order\":False,\"descr\":\"<f4\"}", {6}},
      {1, "{'descr':'=f4','fortran_order':False,'shape':(2,3,)}", {2, 3}},
      // Python 2 long integers, as very old NumPy wrote them.
      {1,
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
       {2, 3}},
      // Fortran order is harmless when at most one dimension exceeds 1.
      {1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6), }", {1, 6}},
  };
  int index = 0;
  for (const Case &c : cases) {
    std::string path = dir.file("case" + std::to_string(index++) + ".npy");
    writeBytes(path, npyBytes(c.major, c.dict, data));
    Result<HostTensor> tensor = readNpy(path);
    ASSERT_TRUE(tensor) << tensor.message();
    EXPECT_EQ(tensor->shape(), c.shape);
    EXPECT_EQ(tensor->load<float>(5), 6.0f);
  }
  // Trailing bytes after the data are ignored, as NumPy ignores them.
  std::string path = dir.file("trailing.npy");
  writeBytes(path, npyBytes(1,
                            "{'descr': '|u1', 'fortran_order': False, "
                            "'shape': (2,), }",
                            "ab") +
                       "extra");
  Result<HostTensor> tensor = readNpy(path);
  ASSERT_TRUE(tensor) << tensor.message();
  EXPECT_EQ(tensor->load<uint8_t>(1), 'b');
}

TEST(NpyTest, MissingFile) {
  TempDir dir;
  expectReadError(dir.file("missing.npy"),
                  "cannot open file: No such file or directory");
  EXPECT_NE(readNpyHeader(dir.file("missing.npy"))
                .message()
                .find("missing.npy: cannot open file"),
            std::string::npos);
  expectReadError(dir.path(), "is a directory");
}

TEST(NpyTest, BadMagic) {
  TempDir dir;
  std::string path = dir.file("bad.npy");
  writeBytes(path, "PK\x03\x04 this is a zip file, not an npy file");
  expectReadError(path, "not a .npy file (bad magic bytes)");
  writeBytes(path, "");
  expectReadError(path, "not a .npy file (the file is empty)");
  writeBytes(path, "\x93NUMPX\x01\x00");
  expectReadError(path, "bad magic");
}

TEST(NpyTest, TruncatedHeader) {
  TempDir dir;
  std::string path = dir.file("short.npy");
  std::string full =
      npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
               floats({1, 2}));
  writeBytes(path, full.substr(0, 4));
  expectReadError(path, "truncated header: the file is only 4 bytes");
  writeBytes(path, full.substr(0, 9));
  expectReadError(path, "truncated header: the file is only 9 bytes");
  writeBytes(path, full.substr(0, 40));
  expectReadError(path, "truncated header: the header length is 118 bytes "
                        "but only 30 follow");
  // Version 2 has a 4-byte length.
  writeBytes(path, npyBytes(2, "{}", "").substr(0, 10));
  expectReadError(path, "truncated header: the file is only 10 bytes");
}

TEST(NpyTest, TruncatedData) {
  TempDir dir;
  std::string path = dir.file("truncated.npy");
  writeBytes(path, npyBytes(1,
                            "{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2, 3), }",
                            floats({1, 2, 3, 4, 5})));
  expectReadError(path, "truncated data: shape [2, 3] of '<f4' needs 24 bytes "
                        "after the header, but the file has 20");
  EXPECT_FALSE(readNpyHeader(path));
}

TEST(NpyTest, UnsupportedDTypes) {
  TempDir dir;
  std::string path = dir.file("dtype.npy");
  for (const char *descr :
       {"<c8", "<u4", "<u2", "<U5", "|O", "<M8[ns]", "|V4", "<f16", "f4"}) {
    writeBytes(path, npyBytes(1,
                              std::string("{'descr': '") + descr +
                                  "', 'fortran_order': False, 'shape': (1,), "
                                  "}",
                              std::string(16, '\0')));
    expectReadError(path, std::string("unsupported dtype '") + descr + "'");
  }
  writeBytes(path, npyBytes(1,
                            "{'descr': [('a', '<f4'), ('b', '<i4')], "
                            "'fortran_order': False, 'shape': (1,), }",
                            std::string(8, '\0')));
  expectReadError(path, "structured arrays are not supported");
}

TEST(NpyTest, BigEndian) {
  TempDir dir;
  std::string path = dir.file("big.npy");
  writeBytes(path, npyBytes(1,
                            "{'descr': '>f4', 'fortran_order': False, "
                            "'shape': (2,), }",
                            floats({1, 2})));
  expectReadError(path, "big-endian dtype '>f4' is not supported");
  // Byte order does not matter for single bytes.
  writeBytes(path, npyBytes(1,
                            "{'descr': '>i1', 'fortran_order': False, "
                            "'shape': (2,), }",
                            "\x01\xff"));
  Result<HostTensor> tensor = readNpy(path);
  ASSERT_TRUE(tensor) << tensor.message();
  EXPECT_EQ(tensor->load<int8_t>(1), -1);
}

TEST(NpyTest, FortranOrder) {
  TempDir dir;
  std::string path = dir.file("fortran.npy");
  writeBytes(path, npyBytes(1,
                            "{'descr': '<f4', 'fortran_order': True, "
                            "'shape': (2, 3), }",
                            floats({1, 2, 3, 4, 5, 6})));
  expectReadError(path, "Fortran-order (column-major) arrays are not "
                        "supported");
}

TEST(NpyTest, MalformedHeaderDict) {
  TempDir dir;
  std::string path = dir.file("malformed.npy");
  struct Case {
    std::string dict;
    std::string fragment;
  };
  std::vector<Case> cases = {
      {"", "expected '{'"},
      {"['descr', '<f4']", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'shape': (2,)}", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (2,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (2,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 2}",
       "invalid value for key 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
       "'shape' must be a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
       "expected a non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}",
       "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3)}",
       "expected a non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "too large"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",
       "invalid value for key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}",
       "'fortran_order' must be True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2,)}",
       "invalid value for key 'descr'"},
      {"{'descr': (4,), 'fortran_order': False, 'shape': (2,)}",
       "'descr' must be a string"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk",
       "unexpected text after the header dict"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}",
       "unexpected key 'descr: '"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}",
       "expected ':' after key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
       "expected ',' or '}'"},
      {"{descr: '<f4'}", "expected a quoted key"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}",
       "unsupported character"},
      {"{'descr': '<f4, 'fortran_order': False}", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,"
       " 4)}",
       "too large"},
  };
  for (const Case &c : cases) {
    writeBytes(path, npyBytes(1, c.dict, std::string(8, '\0')));
    SCOPED_TRACE(c.dict);
    expectReadError(path, c.fragment);
    if (c.fragment != "too large")
      expectReadError(path, "malformed .npy header");
  }
  writeBytes(path, npyBytes(4, "{}", ""));
  expectReadError(path, "unsupported .npy format version 4.0");
  std::string v1 = npyBytes(1, "{}", "");
  v1[7] = 1;
  writeBytes(path, v1);
  expectReadError(path, "unsupported .npy format version 1.1");
}

TEST(NpyTest, AtomicWriteReplacesAndNeverLeavesTemporaries) {
  TempDir dir;
  std::string path = dir.file("out.npy");
  HostTensor first = patternTensor(DType::F32, {4}, 1);
  HostTensor second = patternTensor(DType::I64, {2, 2}, 2);
  ASSERT_TRUE(writeNpy(path, first).ok());
  ASSERT_TRUE(writeNpy(path, second).ok());
  Result<HostTensor> back = readNpy(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->identical(second));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.npy"});

  // A mapped view of the old file stays valid after the file is replaced.
  Result<HostTensor> view = readNpy(path, {/*memoryMap=*/true});
  ASSERT_TRUE(view);
  ASSERT_TRUE(writeNpy(path, first).ok());
  EXPECT_TRUE(view->identical(second));

  // Renaming over a directory fails: the temporary file must be removed.
  std::string blocked = dir.file("blocked.npy");
  ASSERT_EQ(::mkdir(blocked.c_str(), 0755), 0);
  Status status = writeNpy(blocked, first);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind(blocked + ": cannot rename", 0), 0u)
      << status.message();
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"blocked.npy", "out.npy"}));

  // A missing directory fails before anything is written.
  std::string nowhere = dir.file("no/such/dir/x.npy");
  status = writeNpy(nowhere, first);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(
      status.message().rfind(nowhere + ": cannot create temporary file", 0), 0u)
      << status.message();
}

TEST(NpyTest, AtomicFileWriterDiscardsUncommittedFiles) {
  TempDir dir;
  std::string path = dir.file("partial.bin");
  writeBytes(path, "old contents");
  {
    Result<AtomicFileWriter> writer = AtomicFileWriter::create(path);
    ASSERT_TRUE(writer) << writer.message();
    EXPECT_EQ(writer->temporaryPath().rfind(path + ".tmp.", 0), 0u);
    ASSERT_TRUE(writer->write("new", 3).ok());
    EXPECT_EQ(dir.list().size(), 2u); // The destination and the temporary.
    // Destroyed without commit, as when an error aborts a write.
  }
  EXPECT_EQ(dir.list(), std::vector<std::string>{"partial.bin"});
  EXPECT_EQ(readBytes(path), "old contents");

  // Two writers for the same destination get distinct temporaries.
  Result<AtomicFileWriter> a = AtomicFileWriter::create(path);
  Result<AtomicFileWriter> b = AtomicFileWriter::create(path);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->temporaryPath(), b->temporaryPath());
  ASSERT_TRUE(a->write("A", 1).ok());
  ASSERT_TRUE(b->write("B", 1).ok());
  ASSERT_TRUE(a->commit().ok());
  EXPECT_EQ(readBytes(path), "A");
  b->discard();
  EXPECT_FALSE(b->write("x", 1).ok());
  EXPECT_EQ(dir.list(), std::vector<std::string>{"partial.bin"});
}

TEST(NpyTest, PreparedOutputsReplaceNothingUntilAllAreCommitted) {
  TempDir dir;
  HostTensor t = HostTensor::fromDoubles(DType::F32, {2}, {1.0, 2.0});
  std::vector<AtomicFileWriter> files;
  for (const char *name : {"a.npy", "b.npy"}) {
    Result<AtomicFileWriter> file = prepareNpy(dir.file(name), t);
    ASSERT_TRUE(file) << file.message();
    files.push_back(std::move(*file));
  }
  // Only the temporaries exist until the commit.
  for (const std::string &entry : dir.list())
    EXPECT_NE(entry.find(".tmp."), std::string::npos) << entry;
  ASSERT_TRUE(commitAll(files).ok());
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a.npy", "b.npy"}));
  Result<HostTensor> back = readNpy(dir.file("b.npy"));
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->identical(t));
}

TEST(NpyTest, SamePathSeesThroughDotsAndLinks) {
  TempDir dir;
  EXPECT_TRUE(samePath(dir.file("x.npy"), dir.path() + "/./x.npy"));
  EXPECT_TRUE(samePath(dir.file("x.npy"), dir.path() + "/sub/../x.npy"));
  EXPECT_FALSE(samePath(dir.file("x.npy"), dir.file("y.npy")));
}

} // namespace
