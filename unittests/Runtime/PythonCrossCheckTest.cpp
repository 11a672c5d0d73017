//===- PythonCrossCheckTest.cpp - Interoperability with NumPy -------------===//
//
// NumPy writes .npy files that the runtime reads, and reads the ones it
// writes; Python writes safetensors files by hand (struct + json, from the
// format description) that the runtime reads, and parses the ones it writes.
// Fails when /usr/bin/python3 cannot import NumPy (a declared dependency).
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <unistd.h>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

/// Runs `script` (after the `expected` helper) with the directory as argv[1].
CommandResult runPython(const TempDir &dir, const std::string &script) {
  std::string path = dir.file("script.py");
  writeBytes(path, std::string(kPythonExpected) +
                       "import sys, os, json, struct\n"
                       "d = sys.argv[1]\n" +
                       script);
  return runCommand(std::string(kPython) + " " + shellQuote(path) + " " +
                    shellQuote(dir.path()));
}

#define REQUIRE_PYTHON() TRA_REQUIRE_PYTHON("numpy")

/// Checks that `tensor` holds `expectedValue(dtype, i)` in every element.
void expectValues(const HostTensor &tensor, DType dtype,
                  const std::string &what) {
  ASSERT_EQ(tensor.dtype(), dtype) << what;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    ASSERT_EQ(tensor.loadAsDouble(i), expectedValue(dtype, i))
        << what << " element " << i;
}

TEST(PythonCrossCheckTest, NumPyWritesRuntimeReads) {
  REQUIRE_PYTHON();
  TempDir dir;
  CommandResult result = runPython(dir, R"(
specs = [('<f4', (2, 3)), ('<f2', (7,)), ('<f8', ()), ('<i8', (0, 4)),
         ('<i4', (3, 2, 2)), ('<i2', (5,)), ('|i1', (4, 4)), ('|u1', (9,)),
         ('|b1', (2, 5))]
for descr, shape in specs:
    dtype = np.dtype(descr)
    n = int(np.prod(shape, dtype=np.int64))
    arr = expected(dtype.kind, n).astype(dtype).reshape(shape)
    name = descr[1:]
    np.save(os.path.join(d, name + '.npy'), arr)
    for version in ((2, 0), (3, 0)):
        path = os.path.join(d, '%s_v%d.npy' % (name, version[0]))
        with open(path, 'wb') as f:
            np.lib.format.write_array(f, arr, version=version)
np.save(os.path.join(d, 'fortran.npy'),
        np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)))
np.save(os.path.join(d, 'transposed.npy'),
        np.arange(6, dtype='<i2').reshape(2, 3).T)
np.save(os.path.join(d, 'big.npy'), np.arange(4, dtype='>i4'))
np.save(os.path.join(d, 'complex.npy'), np.zeros(3, dtype=np.complex64))
np.save(os.path.join(d, 'unicode.npy'), np.array(['a', 'bc']))
print('written')
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;

  struct Spec {
    const char *name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Spec> specs = {
      {"f4", DType::F32, {2, 3}},    {"f2", DType::F16, {7}},
      {"f8", DType::F64, {}},        {"i8", DType::I64, {0, 4}},
      {"i4", DType::I32, {3, 2, 2}}, {"i2", DType::I16, {5}},
      {"i1", DType::I8, {4, 4}},     {"u1", DType::U8, {9}},
      {"b1", DType::Bool, {2, 5}},
  };
  for (const Spec &spec : specs) {
    for (const char *suffix : {"", "_v2", "_v3"}) {
      std::string path = dir.file(std::string(spec.name) + suffix + ".npy");
      for (bool memoryMap : {false, true}) {
        Result<HostTensor> tensor = readNpy(path, {memoryMap});
        ASSERT_TRUE(tensor) << tensor.message();
        EXPECT_EQ(tensor->shape(), spec.shape) << path;
        expectValues(*tensor, spec.dtype, path);
      }
      Result<NpyHeader> header = readNpyHeader(path);
      ASSERT_TRUE(header);
      EXPECT_EQ(header->majorVersion, suffix[0] ? suffix[2] - '0' : 1);
    }
  }

  struct Failure {
    const char *file;
    const char *fragment;
  };
  for (const Failure &failure :
       {Failure{"fortran.npy", "Fortran-order"},
        Failure{"transposed.npy", "Fortran-order"},
        Failure{"big.npy", "big-endian dtype '>i4'"},
        Failure{"complex.npy", "unsupported dtype '<c8'"},
        Failure{"unicode.npy", "unsupported dtype '<U2'"}}) {
    std::string path = dir.file(failure.file);
    Result<HostTensor> tensor = readNpy(path);
    ASSERT_FALSE(tensor) << path;
    EXPECT_EQ(tensor.message().rfind(path + ": ", 0), 0u) << tensor.message();
    EXPECT_NE(tensor.message().find(failure.fragment), std::string::npos)
        << tensor.message();
  }
}

TEST(PythonCrossCheckTest, RuntimeWritesNumPyReads) {
  REQUIRE_PYTHON();
  TempDir dir;
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {}, {0, 2}, {5}};
  std::string specs = "specs = [\n";
  int index = 0;
  for (DType dtype : kAllDTypes) {
    for (const std::vector<int64_t> &shape : shapes) {
      std::string name =
          std::string(dtypeName(dtype)) + "_" + std::to_string(index++);
      ASSERT_TRUE(
          writeNpy(dir.file(name + ".npy"), expectedTensor(dtype, shape)).ok());
      // BF16 is written as f32.
      std::string descr = npyDescr(dtype).value_or("<f4");
      std::string tuple = "(";
      for (int64_t dim : shape)
        tuple += std::to_string(dim) + ",";
      specs += "  ('" + name + "', '" + descr + "', " + tuple + ")),\n";
    }
  }
  specs += "]\n";
  CommandResult result = runPython(dir, specs + R"(
for name, descr, shape in specs:
    path = os.path.join(d, name + '.npy')
    arr = np.load(path, allow_pickle=False)
    assert arr.dtype.str == descr, (name, arr.dtype.str, descr)
    assert arr.shape == shape, (name, arr.shape, shape)
    assert arr.flags.c_contiguous
    n = int(np.prod(shape, dtype=np.int64))
    exp = expected(arr.dtype.kind, n).astype(arr.dtype).reshape(shape)
    assert np.array_equal(arr, exp), (name, arr, exp)
    with open(path, 'rb') as f:
        version = np.lib.format.read_magic(f)
        assert version == (1, 0), version
        np.lib.format.read_array_header_1_0(f)
        assert f.tell() % 64 == 0, f.tell()
    mapped = np.load(path, mmap_mode='r')
    assert np.array_equal(mapped, exp), name
print('checked', len(specs))
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("checked 40"), std::string::npos)
      << result.output;
}

/// Python that writes `py.safetensors` and a two-shard checkpoint holding
/// one tensor per spec, named "t<k>_<DTYPE>".
const char *const kPythonSafetensorsWriter = R"(
specs = [('F32', '<f4', (2, 3)), ('F16', '<f2', (5,)), ('BF16', None, (3, 2)),
         ('F64', '<f8', ()), ('I64', '<i8', (4,)), ('I32', '<i4', (2, 2)),
         ('I16', '<i2', (3,)), ('I8', '|i1', (6,)), ('U8', '|u1', (7,)),
         ('BOOL', '|b1', (2, 4)), ('F32', '<f4', (0, 3))]
def tensor_bytes(st, descr, shape):
    n = int(np.prod(shape, dtype=np.int64))
    if st == 'BF16':
        f = expected('f', n).astype('<f4')
        return (f.view('<u4') >> 16).astype('<u2').tobytes()
    return expected(np.dtype(descr).kind, n).astype(descr).tobytes()
def write(path, items, metadata):
    header = {}
    if metadata:
        header['__metadata__'] = metadata
    data = b''
    for name, st, shape, raw in items:
        header[name] = {'dtype': st, 'shape': list(shape),
                        'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + data)
items = [('t%d_%s' % (k, st), st, shape, tensor_bytes(st, descr, shape))
         for k, (st, descr, shape) in enumerate(specs)]
write(os.path.join(d, 'py.safetensors'), items,
      {'format': 'pt', 'source': 'python'})
half = len(items) // 2
shards = ['shard-1.safetensors', 'shard-2.safetensors']
write(os.path.join(d, shards[0]), items[:half], None)
write(os.path.join(d, shards[1]), items[half:], {'part': '2'})
index = {'metadata': {'total_size': sum(len(i[3]) for i in items)},
         'weight_map': {i[0]: shards[0] if k < half else shards[1]
                        for k, i in enumerate(items)}}
with open(os.path.join(d, 'py.safetensors.index.json'), 'w') as f:
    json.dump(index, f, indent=2)
print('written')
)";

TEST(PythonCrossCheckTest, PythonWritesSafetensorsRuntimeReads) {
  REQUIRE_PYTHON();
  TempDir dir;
  CommandResult result = runPython(dir, kPythonSafetensorsWriter);
  ASSERT_EQ(result.exitCode, 0) << result.output;

  Result<SafetensorsFile> file =
      SafetensorsFile::open(dir.file("py.safetensors"));
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ(file->metadata(),
            (SafetensorsMetadata{{"format", "pt"}, {"source", "python"}}));
  ASSERT_EQ(file->tensors().size(), 11u);
  for (const SafetensorsEntry &entry : file->tensors()) {
    std::string st = entry.name.substr(entry.name.find('_') + 1);
    ASSERT_EQ(parseSafetensorsDType(st), entry.dtype) << entry.name;
    Result<HostTensor> tensor = file->get(entry.name);
    ASSERT_TRUE(tensor) << tensor.message();
    expectValues(*tensor, entry.dtype, entry.name);
  }
  EXPECT_EQ(file->find("t0_F32")->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file->find("t3_F64")->shape, std::vector<int64_t>{});
  EXPECT_EQ(file->find("t10_F32")->shape, (std::vector<int64_t>{0, 3}));

  Result<HostTensor> tile = file->readTile("t2_BF16", {1, 1}, {2, 1});
  ASSERT_TRUE(tile) << tile.message();
  EXPECT_EQ(tile->loadAsDouble(0), expectedValue(DType::BF16, 3));
  EXPECT_EQ(tile->loadAsDouble(1), expectedValue(DType::BF16, 5));

  Result<SafetensorsCheckpoint> checkpoint =
      SafetensorsCheckpoint::open(dir.file("py.safetensors.index.json"));
  ASSERT_TRUE(checkpoint) << checkpoint.message();
  EXPECT_EQ(checkpoint->shards().size(), 2u);
  ASSERT_EQ(checkpoint->tensorNames().size(), 11u);
  for (const std::string &name : checkpoint->tensorNames()) {
    Result<HostTensor> tensor = checkpoint->get(name);
    ASSERT_TRUE(tensor) << tensor.message();
    Result<HostTensor> single = file->get(name);
    ASSERT_TRUE(single);
    EXPECT_TRUE(tensor->identical(*single)) << name;
  }
  EXPECT_TRUE(checkpoint->indexMetadata().find("total_size")->isInteger());
}

TEST(PythonCrossCheckTest, RuntimeWritesSafetensorsPythonReads) {
  REQUIRE_PYTHON();
  TempDir dir;
  std::vector<NamedTensor> tensors;
  const std::vector<std::vector<int64_t>> shapes = {{3, 2}, {}, {0}};
  for (DType dtype : kAllDTypes)
    for (const std::vector<int64_t> &shape : shapes)
      tensors.push_back({std::string("layer.") +
                             std::to_string(tensors.size()) + "." +
                             dtypeName(dtype),
                         expectedTensor(dtype, shape)});
  ASSERT_TRUE(writeSafetensors(dir.file("rt.safetensors"), tensors,
                               {{"format", "pt"}, {"uni", "\xc3\xa9\"\\"}})
                  .ok());
  std::string names = "names = [";
  for (const NamedTensor &t : tensors)
    names += "'" + t.name + "', ";
  names += "]\n";
  CommandResult result = runPython(dir, names + R"(
with open(os.path.join(d, 'rt.safetensors'), 'rb') as f:
    raw = f.read()
n = struct.unpack('<Q', raw[:8])[0]
assert n % 8 == 0, n
text = raw[8:8 + n]
assert text[:1] == b'{'
assert text.rstrip(b' ') == text.rstrip(), 'padding is not spaces'
header = json.loads(text.decode('utf-8'))
meta = header.pop('__metadata__')
assert meta == {'format': 'pt', 'uni': '\u00e9"\\'}, meta
assert list(header.keys()) == names, list(header.keys())
data = raw[8 + n:]
ranges = sorted(tuple(v['data_offsets']) for v in header.values())
pos = 0
for b, e in ranges:
    assert b == pos, (b, pos)
    pos = e
assert pos == len(data), (pos, len(data))
descrs = {'F32': '<f4', 'F16': '<f2', 'F64': '<f8', 'I64': '<i8',
          'I32': '<i4', 'I16': '<i2', 'I8': '|i1', 'U8': '|u1', 'BOOL': '|b1'}
for name, info in header.items():
    b, e = info['data_offsets']
    shape = tuple(info['shape'])
    if info['dtype'] == 'BF16':
        u = np.frombuffer(data[b:e], dtype='<u2').astype('<u4') << 16
        arr = u.view('<f4')
        size = 2
    else:
        arr = np.frombuffer(data[b:e], dtype=descrs[info['dtype']])
        size = arr.dtype.itemsize
    arr = arr.reshape(shape)
    assert (8 + n + b) % size == 0, (name, b)
    exp = expected(arr.dtype.kind, arr.size).reshape(shape)
    assert np.array_equal(arr.astype(np.float64), exp.astype(np.float64)), \
        (name, arr, exp)
print('checked', len(header))
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("checked 30"), std::string::npos)
      << result.output;
}

} // namespace
