//===- ToolTest.cpp - The tra-tensor command-line tool --------------------===//

#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

using namespace tra::rt;
using namespace tra::rt::test;

#ifndef TRA_TENSOR_PATH
#error "TRA_TENSOR_PATH must name the tra-tensor executable"
#endif

namespace {

CommandResult tool(const std::string &arguments) {
  return runCommand(shellQuote(TRA_TENSOR_PATH) + " " + arguments);
}

bool contains(const std::string &text, const std::string &fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(ToolTest, InfoListsTensors) {
  TempDir dir;
  std::string npy = dir.file("weights.npy");
  ASSERT_TRUE(writeNpy(npy, HostTensor::zeros(DType::I16, {2, 3})).ok());
  CommandResult result = tool("info " + shellQuote(npy));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, npy + ": .npy format 1.0, descr '<i2'\n"
                                 "name     dtype  shape\n"
                                 "weights  i16    [2, 3]\n");

  std::string st = dir.file("model.safetensors");
  ASSERT_TRUE(writeSafetensors(
                  st,
                  {{"embed.weight", HostTensor::zeros(DType::BF16, {8, 4})},
                   {"scale", HostTensor::zeros(DType::F32, {})}},
                  {{"format", "pt"}})
                  .ok());
  result = tool("info " + shellQuote(st));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, st + ": safetensors, 2 tensors in 1 file\n"
                                "name          dtype  shape\n"
                                "embed.weight  bf16   [8, 4]\n"
                                "scale         f32    []\n"
                                "metadata:\n"
                                "  format = pt\n");

  std::string index = dir.file("model.safetensors.index.json");
  writeBytes(index, R"({"weight_map": {"scale": "model.safetensors"}})");
  result = tool("info " + shellQuote(index));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "1 tensor in 1 file")) << result.output;
  EXPECT_TRUE(contains(result.output, "scale  f32    []     model.safetensors"))
      << result.output;
}

TEST(ToolTest, ConvertsBetweenFormats) {
  TempDir dir;
  std::string npy = dir.file("x.npy");
  HostTensor x = HostTensor::fromDoubles(DType::F32, {2, 2}, {1, -2, 3.5, 4});
  ASSERT_TRUE(writeNpy(npy, x).ok());

  // .npy -> .safetensors, converting to f16 and naming the tensor.
  std::string st = dir.file("x.safetensors");
  CommandResult result = tool("convert " + shellQuote(npy) + " " +
                              shellQuote(st) + " --dtype f16 --name w");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, "");
  Result<SafetensorsFile> file = SafetensorsFile::open(st);
  ASSERT_TRUE(file) << file.message();
  Result<HostTensor> w = file->get("w");
  ASSERT_TRUE(w) << w.message();
  EXPECT_TRUE(w->identical(convert(x, DType::F16)));

  // Without --name the tensor is named after the file.
  result = tool("convert " + shellQuote(npy) + " " + shellQuote(st));
  ASSERT_EQ(result.exitCode, 0) << result.output;
  file = SafetensorsFile::open(st);
  ASSERT_TRUE(file && file->find("x"));

  // .safetensors -> .npy with a single tensor; bf16 becomes f32.
  result = tool("convert " + shellQuote(st) + " " + shellQuote(npy) +
                " --dtype=bf16");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  Result<HostTensor> back = readNpy(npy);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->identical(x));

  // .safetensors -> .safetensors keeps every tensor and the metadata.
  std::string two = dir.file("two.safetensors");
  ASSERT_TRUE(writeSafetensors(two, {{"a", x}, {"b", convert(x, DType::I64)}},
                               {{"k", "v"}})
                  .ok());
  std::string copy = dir.file("copy.safetensors");
  result = tool("convert " + shellQuote(two) + " " + shellQuote(copy) +
                " --dtype f64");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  file = SafetensorsFile::open(copy);
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ(file->metadata(), (SafetensorsMetadata{{"k", "v"}}));
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_TRUE(
      file->get("b")->identical(convert(convert(x, DType::I64), DType::F64)));

  // Picking one tensor of several for .npy.
  result =
      tool("convert " + shellQuote(two) + " " + shellQuote(npy) + " --name b");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  back = readNpy(npy);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->identical(convert(x, DType::I64)));
  for (const std::string &name : dir.list())
    EXPECT_FALSE(contains(name, ".tmp.")) << name;
}

TEST(ToolTest, ReportsErrors) {
  TempDir dir;
  std::string missing = dir.file("missing.npy");
  CommandResult result = tool("info " + shellQuote(missing));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output, "tra-tensor: error: " + missing +
                               ": cannot open file: No such file or "
                               "directory\n");

  std::string bad = dir.file("bad.safetensors");
  writeBytes(bad, "not a safetensors file at all");
  result = tool("info " + shellQuote(bad));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(
      contains(result.output, "tra-tensor: error: " + bad + ": header length"))
      << result.output;

  result = tool("info " + shellQuote(dir.file("data.bin")));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "data.bin: unknown file type"))
      << result.output;

  std::string two = dir.file("two.safetensors");
  HostTensor t = HostTensor::zeros(DType::F32, {1});
  ASSERT_TRUE(writeSafetensors(two, {{"a", t}, {"b", t}}).ok());
  std::string out = dir.file("out.npy");
  result = tool("convert " + shellQuote(two) + " " + shellQuote(out));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output, "tra-tensor: error: " + two +
                               ": holds 2 tensors; choose the one to write "
                               "to .npy with --name\n");
  result =
      tool("convert " + shellQuote(two) + " " + shellQuote(out) + " --name c");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output,
            "tra-tensor: error: " + two + ": no tensor named 'c'\n");
  result = tool("convert " + shellQuote(two) + " " +
                shellQuote(dir.file("no/dir/out.safetensors")));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_TRUE(contains(result.output, "out.safetensors: cannot create"))
      << result.output;
  EXPECT_EQ(dir.list(),
            (std::vector<std::string>{"bad.safetensors", "two.safetensors"}));

  // Usage errors.
  for (const char *arguments :
       {"", "frobnicate x.npy", "info", "info a.npy b.npy", "convert a.npy",
        "convert a.npy b.npy --dtype f128", "convert a.npy b.npy --bogus",
        "convert a.npy b.npy --name"}) {
    result = tool(arguments);
    EXPECT_EQ(result.exitCode, 2) << arguments;
    EXPECT_TRUE(contains(result.output, "tra-tensor: error: ")) << arguments;
    EXPECT_TRUE(contains(result.output, "usage: tra-tensor")) << arguments;
  }
  result = tool("--help");
  EXPECT_EQ(result.exitCode, 0);
  EXPECT_TRUE(contains(result.output, "usage: tra-tensor"));
}

} // namespace
