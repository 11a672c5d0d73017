//===- PthTest.cpp - Reading torch.save files -----------------------------===//
//
// PyTorch (/usr/bin/python3 with torch) writes files with torch.save, plus the
// bytes every tensor should read as; the runtime reads them without Python.
// Other files are built by hand (zip64 archives, hand-made pickles) or
// damaged on purpose. Fails when /usr/bin/python3 cannot import torch (a
// declared dependency).
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Pth.h"
#include "tra/Runtime/Json.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <random>
#include <unistd.h>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

#define REQUIRE_TORCH() TRA_REQUIRE_PYTHON("torch, numpy")

/// Runs `script` with the directory as `d` (and argv[1]).
CommandResult runPython(const TempDir &dir, const std::string &script) {
  std::string path = dir.file("script.py");
  writeBytes(path, "import sys, os, json, struct, zipfile, io\n"
                   "d = sys.argv[1]\n" +
                       script);
  return runCommand(std::string(kPython) + " " + shellQuote(path) + " " +
                    shellQuote(dir.path()));
}

/// Python helpers: `dump(path, tensors)` saves a dict of tensors with
/// torch.save and records, in path + '.json', each tensor's dtype, shape,
/// stride and storage offset, writing its contiguous bytes to
/// path + '.NAME.bin'.
const char *const kDumpHelper = R"(
import torch, numpy as np
DTYPES = {torch.float32: 'f32', torch.float16: 'f16', torch.bfloat16: 'bf16',
          torch.float64: 'f64', torch.int64: 'i64', torch.int32: 'i32',
          torch.int16: 'i16', torch.int8: 'i8', torch.uint8: 'u8',
          torch.bool: 'bool'}
def raw(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()
def dump(path, tensors, **kwargs):
    torch.save(tensors, path, **kwargs)
    manifest = []
    for name, t in tensors.items():
        manifest.append({'name': name, 'dtype': DTYPES[t.dtype],
                         'shape': list(t.shape), 'stride': list(t.stride()),
                         'offset': t.storage_offset(),
                         'contiguous': t.is_contiguous()})
        with open(path + '.' + name + '.bin', 'wb') as f:
            f.write(raw(t))
    with open(path + '.json', 'w') as f:
        json.dump(manifest, f)
)";

/// Checks every tensor of the torch.save file `path` against the manifest and
/// bytes `dump` wrote (for `reference`, the file the manifest was written
/// for): metadata, `get`, whole and random tile reads.
void checkAgainstManifest(const std::string &path,
                          const std::string &reference = "") {
  const std::string ref = reference.empty() ? path : reference;
  Result<std::string> manifestText = readFile(ref + ".json");
  ASSERT_TRUE(manifestText.ok()) << manifestText.message();
  Result<JsonValue> manifest = parseJson(*manifestText, ref + ".json");
  ASSERT_TRUE(manifest.ok()) << manifest.message();
  Result<PthFile> file = PthFile::open(path);
  ASSERT_TRUE(file.ok()) << file.message();
  ASSERT_EQ(file->tensors().size(), manifest->getArray().size()) << path;

  std::mt19937 rng(7);
  size_t index = 0;
  for (const JsonValue &item : manifest->getArray()) {
    const std::string name = item.find("name")->getString();
    SCOPED_TRACE(path + ": " + name);
    const PthTensor *entry = file->find(name);
    ASSERT_NE(entry, nullptr);
    // The file lists the tensors in dict order.
    EXPECT_EQ(file->tensors()[index++].name, name);
    std::optional<DType> dtype = parseDType(item.find("dtype")->getString());
    ASSERT_TRUE(dtype.has_value());
    EXPECT_EQ(entry->dtype, *dtype);
    std::vector<int64_t> shape, stride;
    for (const JsonValue &v : item.find("shape")->getArray())
      shape.push_back(v.getInteger());
    for (const JsonValue &v : item.find("stride")->getArray())
      stride.push_back(v.getInteger());
    EXPECT_EQ(entry->shape, shape);
    EXPECT_EQ(entry->stride, stride);
    EXPECT_EQ(entry->storageOffset, item.find("offset")->getInteger());
    EXPECT_EQ(entry->isContiguous(), item.find("contiguous")->getBool());

    std::string bytes = readBytes(ref + "." + name + ".bin");
    HostTensor expected = HostTensor::copyOf(*dtype, shape, bytes.data());
    ASSERT_EQ(bytes.size(), expected.byteSize());

    Result<HostTensor> got = file->get(name);
    ASSERT_TRUE(got.ok()) << got.message();
    EXPECT_TRUE(got->identical(expected));
    // Contiguous tensors are zero-copy views (empty ones hold no bytes).
    EXPECT_EQ(got->isView(), entry->isContiguous() && expected.byteSize() > 0);

    Result<HostTensor> whole =
        file->readTile(name, std::vector<int64_t>(shape.size(), 0), shape);
    ASSERT_TRUE(whole.ok()) << whole.message();
    EXPECT_TRUE(whole->identical(expected));
    EXPECT_FALSE(whole->isView());

    for (int trial = 0; trial < 8; ++trial) {
      std::vector<int64_t> offsets, sizes;
      for (int64_t dim : shape) {
        int64_t offset = std::uniform_int_distribution<int64_t>(0, dim)(rng);
        int64_t size =
            std::uniform_int_distribution<int64_t>(0, dim - offset)(rng);
        offsets.push_back(offset);
        sizes.push_back(size);
      }
      Result<HostTensor> tile = file->readTile(name, offsets, sizes);
      ASSERT_TRUE(tile.ok()) << tile.message();
      EXPECT_TRUE(tile->identical(naiveTile(expected, offsets, sizes)))
          << "tile at " << formatShape(offsets) << " of " << formatShape(sizes);
    }
  }
}

TEST(PthTest, DTypesShapesAndViews) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, std::string(kDumpHelper) + R"(
torch.manual_seed(0)
base = torch.randn(6, 10)
t = {
  'f32': torch.randn(3, 4), 'f16': torch.randn(5, 7).half(),
  'bf16': torch.randn(2, 3, 5).bfloat16(), 'f64': torch.randn(4).double(),
  'i64': torch.arange(-5, 7).reshape(3, 4), 'i32': torch.arange(9).int(),
  'i16': torch.arange(-4, 4).short().reshape(2, 2, 2),
  'i8': torch.arange(-6, 6).to(torch.int8), 'u8': torch.arange(200, 256).to(torch.uint8),
  'bool': torch.tensor([[True, False, True], [False, False, True]]),
  'scalar': torch.tensor(3.5), 'empty': torch.zeros(0, 3), 'empty_half': torch.zeros(4, 0).half(),
  'base': base, 'row': base[2], 'transposed': base.t(), 'slice': base[1:4, 2:7],
  'expanded': torch.arange(3.).expand(4, 3), 'strided': base[::2, 1::3],
  'bf16_t': torch.randn(8, 5).bfloat16().t(), 'big': torch.randn(300, 257).half(),
  'unit_dims': torch.randn(1, 5, 1, 3)[:, :, :, ::2],
}
dump(os.path.join(d, 'p2.pth'), t)
dump(os.path.join(d, 'p4.pth'), t, pickle_protocol=4)
dump(os.path.join(d, 'p5.pth'), t, pickle_protocol=5)
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  for (const char *name : {"p2.pth", "p4.pth", "p5.pth"})
    checkAgainstManifest(dir.file(name));

  Result<PthFile> file = PthFile::open(dir.file("p2.pth"));
  ASSERT_TRUE(file.ok()) << file.message();
  EXPECT_EQ(file->archivePrefix(), "p2");
  // Views share their base's storage.
  EXPECT_EQ(file->find("row")->storageKey, file->find("base")->storageKey);
  EXPECT_EQ(file->find("row")->storageOffset, 20);
  EXPECT_EQ(file->find("f16")->storageType, "HalfStorage");
  EXPECT_EQ(file->find("bf16")->storageType, "BFloat16Storage");
  EXPECT_FALSE(file->entry("nope").ok());
  EXPECT_NE(file->entry("nope").message().find("no tensor named 'nope'"),
            std::string::npos);
  Result<HostTensor> bad = file->readTile("f32", {0, 0}, {4, 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message().rfind(dir.file("p2.pth") + ": tensor 'f32': ", 0), 0u)
      << bad.message();
}

/// Flips one bit of the byte at `offset` of the file at `path`.
void damageByte(const std::string &path, size_t offset) {
  std::string bytes = readBytes(path);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] ^= 0x10;
  writeBytes(path, bytes);
}

TEST(PthTest, DamagedBytesFailTheCrcCheck) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, R"(
import torch
torch.manual_seed(4)
base = torch.randn(6, 8)
torch.save({'w': torch.randn(16, 8).half(), 'v': torch.randn(5),
            'base': base, 'row': base[2]}, os.path.join(d, 'ck.pth'))
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const std::string path = dir.file("ck.pth");
  Result<PthFile> good = PthFile::open(path);
  ASSERT_TRUE(good.ok()) << good.message();
  const uint64_t wBegin = good->find("w")->storageBegin;
  const uint64_t baseBegin = good->find("base")->storageBegin;
  for (const char *name : {"w", "v", "base"}) {
    Result<HostTensor> whole = good->get(name);
    EXPECT_TRUE(whole.ok()) << whole.message();
  }

  // A damaged element of 'w': opening reads none of its bytes, and tiles
  // smaller than the tensor read only their elements; a read of all of it
  // (get, or a whole tile) verifies the CRC-32 and fails naming the file,
  // the tensor and the zip entry.
  damageByte(path, wBegin + 2 * 8 * 2 + 3); // w[2][1]
  Result<PthFile> file = PthFile::open(path);
  ASSERT_TRUE(file.ok()) << file.message();
  Result<HostTensor> tile = file->readTile("w", {4, 0}, {12, 8});
  EXPECT_TRUE(tile.ok()) << tile.message();
  const std::string expected = path + ": tensor 'w': zip entry 'ck/data/0' "
                                      "is damaged: its 256 bytes have CRC-32 ";
  for (int attempt = 0; attempt < 2; ++attempt) { // the outcome is kept
    Result<HostTensor> got = file->get("w");
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.message().rfind(expected, 0), 0u) << got.message();
    EXPECT_NE(got.message().find(", the archive records 0x"), std::string::npos)
        << got.message();
    Result<HostTensor> whole = file->readTile("w", {0, 0}, {16, 8});
    ASSERT_FALSE(whole.ok());
    EXPECT_EQ(whole.message().rfind(expected, 0), 0u) << whole.message();
  }
  // Copies of the file share what was verified.
  PthFile copy = *file;
  EXPECT_FALSE(copy.get("w").ok());
  Result<HostTensor> v = file->get("v");
  EXPECT_TRUE(v.ok()) << v.message();

  // A tensor viewing part of a storage is not verified by reading it; the
  // tensor that spans the storage is.
  damageByte(path, baseBegin + 4 * 8 * 4);
  file = PthFile::open(path);
  ASSERT_TRUE(file.ok()) << file.message();
  EXPECT_TRUE(file->get("row").ok());
  Result<HostTensor> base = file->get("base");
  ASSERT_FALSE(base.ok());
  EXPECT_NE(base.message().find("tensor 'base': zip entry 'ck/data/2' is "
                                "damaged"),
            std::string::npos)
      << base.message();
}

TEST(PthTest, DamagedPickleFailsAtOpen) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, R"(
import torch
path = os.path.join(d, 'ck.pth')
torch.save({'weight': torch.randn(3)}, path)
with zipfile.ZipFile(path) as z:
    info = z.getinfo('ck/data.pkl')
    data = open(path, 'rb').read()
    # The local header's name and extra field lengths give the data's offset.
    n, m = struct.unpack('<HH', data[info.header_offset + 26:info.header_offset + 30])
    begin = info.header_offset + 30 + n + m
    print(begin + data[begin:begin + info.file_size].index(b'weight'))
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  // 'weight' becomes 'geight': a valid pickle, but not the one saved.
  damageByte(dir.file("ck.pth"), std::stoul(result.output));
  Result<PthFile> file = PthFile::open(dir.file("ck.pth"));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.message().rfind(dir.file("ck.pth") +
                                     ": zip entry 'ck/data.pkl' is damaged: ",
                                 0),
            0u)
      << file.message();
}

TEST(PthTest, StateDictsParametersAndBuffers) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, std::string(kDumpHelper) + R"(
torch.manual_seed(1)
m = torch.nn.Sequential(torch.nn.Linear(3, 70000, bias=False), torch.nn.LayerNorm(3))
dump(os.path.join(d, 'sd.pth'), m.state_dict())
# keep_vars: nn.Parameter objects (rebuilt with _rebuild_parameter).
sd = m.state_dict(keep_vars=True)
torch.save(sd, os.path.join(d, 'params.pth'))
dump(os.path.join(d, 'params_ref.pth'), m.state_dict())
buf = io.BytesIO()
torch.save({'x': torch.arange(5.)}, buf)
open(os.path.join(d, 'buffer.pth'), 'wb').write(buf.getvalue())
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  checkAgainstManifest(dir.file("sd.pth"));
  checkAgainstManifest(dir.file("params.pth"), dir.file("params_ref.pth"));
  Result<PthFile> file = PthFile::open(dir.file("buffer.pth"));
  ASSERT_TRUE(file.ok()) << file.message();
  EXPECT_EQ(file->archivePrefix(), "archive");
  Result<HostTensor> x = file->get("x");
  ASSERT_TRUE(x.ok()) << x.message();
  EXPECT_EQ(x->loadAsDouble(4), 4.0);
}

/// Python: `rezip(src, dst, zip64=False, align=64, skip=(), shorten={},
/// method=0)` rewrites the zip archive src as dst by hand: stored entries
/// (or deflated with method=8), each entry's data aligned with padding in
/// the local extra field (as torch does); with zip64, every size and offset
/// is saturated in the headers and given in zip64 extra fields, and a zip64
/// end record and locator precede the end record. `skip` leaves entries out;
/// `shorten` maps an entry name to a number of bytes to cut off its end.
const char *const kRezip = R"(
import zlib
def rezip(src, dst, zip64=False, align=64, skip=(), shorten={}, method=0):
    entries = []
    with zipfile.ZipFile(src) as z:
        for info in z.infolist():
            if info.filename in skip:
                continue
            data = z.read(info.filename)
            if info.filename in shorten:
                data = data[:len(data) - shorten[info.filename]]
            entries.append((info.filename.encode(), data))
    out = bytearray()
    central = bytearray()
    for name, data in entries:
        crc = zlib.crc32(data)
        stored = data
        if method == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            stored = c.compress(data) + c.flush()
        offset = len(out)
        extra = b''
        if zip64:
            extra = struct.pack('<HHQQ', 1, 16, len(data), len(stored))
        pad = (-(offset + 30 + len(name) + len(extra) + 4)) % align
        extra += struct.pack('<HH', 0x4246, pad) + b'Z' * pad
        size32 = 0xffffffff if zip64 else len(data)
        csize32 = 0xffffffff if zip64 else len(stored)
        out += struct.pack('<IHHHHHIIIHH', 0x04034b50, 45 if zip64 else 20, 0,
                           method, 0, 0, crc, csize32, size32, len(name),
                           len(extra))
        out += name + extra + stored
        cextra = b''
        if zip64:
            cextra = struct.pack('<HHQQQ', 1, 24, len(data), len(stored), offset)
        central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 45, 45, 0,
                               method, 0, 0, crc, csize32, size32, len(name),
                               len(cextra), 0, 0, 0, 0,
                               0xffffffff if zip64 else offset)
        central += name + cextra
    cd_offset = len(out)
    out += central
    n = len(entries)
    if zip64:
        z64 = len(out)
        out += struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, n, n,
                           len(central), cd_offset)
        out += struct.pack('<IIQI', 0x07064b50, 0, z64, 1)
        out += struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xffff, 0xffff,
                           0xffffffff, 0xffffffff, 0)
    else:
        out += struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, n, n, len(central),
                           cd_offset, 0)
    open(dst, 'wb').write(bytes(out))
)";

TEST(PthTest, Zip64AndRepackedArchives) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, std::string(kDumpHelper) + kRezip + R"(
torch.manual_seed(2)
t = {'a': torch.randn(7, 9).half(), 'b': torch.randn(33).bfloat16(),
     'c': torch.randn(4, 6).t()}
src = os.path.join(d, 'src.pth')
dump(src, t)
rezip(src, os.path.join(d, 'zip64.pth'), zip64=True)
rezip(src, os.path.join(d, 'unaligned.pth'), align=1)
# Python's zipfile reads our zip64 archive.
with zipfile.ZipFile(os.path.join(d, 'zip64.pth')) as z:
    assert z.testzip() is None
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  checkAgainstManifest(dir.file("zip64.pth"), dir.file("src.pth"));
  checkAgainstManifest(dir.file("unaligned.pth"), dir.file("src.pth"));
}

/// Opens `path` and expects a failure whose message starts with the path and
/// contains every one of `parts`.
void expectOpenError(const std::string &path,
                     std::initializer_list<std::string> parts) {
  Result<PthFile> file = PthFile::open(path);
  ASSERT_FALSE(file.ok()) << path << " opened";
  EXPECT_EQ(file.message().rfind(path + ": ", 0), 0u) << file.message();
  for (const std::string &part : parts)
    EXPECT_NE(file.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << file.message();
}

TEST(PthTest, DamagedAndUnsupportedFiles) {
  REQUIRE_TORCH();
  TempDir dir;
  CommandResult result = runPython(dir, std::string(kDumpHelper) + kRezip + R"(
torch.manual_seed(3)
good = os.path.join(d, 'good.pth')
torch.save({'w': torch.randn(16, 8).half(), 'v': torch.randn(5)}, good)
data = open(good, 'rb').read()
open(os.path.join(d, 'truncated.pth'), 'wb').write(data[:len(data) * 6 // 10])
open(os.path.join(d, 'cut_end.pth'), 'wb').write(data[:-30])
rezip(good, os.path.join(d, 'short_storage.pth'), shorten={'good/data/0': 2})
rezip(good, os.path.join(d, 'missing_storage.pth'), skip=('good/data/1',))
rezip(good, os.path.join(d, 'no_pickle.pth'), skip=('good/data.pkl',))
rezip(good, os.path.join(d, 'deflated.pth'), method=8)
torch.save({'w': torch.randn(3)}, os.path.join(d, 'legacy.pth'),
           _use_new_zipfile_serialization=False)
torch.save({'c': torch.randn(3, dtype=torch.complex64)}, os.path.join(d, 'complex.pth'))
torch.save({'w': torch.randn(3), 'epoch': 3}, os.path.join(d, 'not_tensor.pth'))
torch.save([torch.randn(3)], os.path.join(d, 'list.pth'))
class Foo:
    pass
torch.save({'foo': Foo()}, os.path.join(d, 'custom.pth'))
open(os.path.join(d, 'garbage.pth'), 'wb').write(b'hello world, not a zip')
open(os.path.join(d, 'empty.pth'), 'wb').write(b'')
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;
  expectOpenError(dir.file("truncated.pth"),
                  {"end-of-central-directory", "truncated"});
  expectOpenError(dir.file("cut_end.pth"), {"end-of-central-directory"});
  expectOpenError(dir.file("short_storage.pth"),
                  {"tensor 'w'", "storage 'good/data/0'", "holds 254 bytes",
                   "need 256", "truncated"});
  expectOpenError(dir.file("missing_storage.pth"),
                  {"tensor 'v'", "'good/data/1' is missing"});
  expectOpenError(dir.file("no_pickle.pth"), {"no PREFIX/data.pkl"});
  expectOpenError(dir.file("deflated.pth"), {"compressed"});
  expectOpenError(dir.file("legacy.pth"), {"legacy"});
  expectOpenError(
      dir.file("complex.pth"),
      {"tensor 'c'", "unsupported storage type", "ComplexFloatStorage"});
  expectOpenError(dir.file("not_tensor.pth"),
                  {"entry 'epoch' is a int, not a tensor"});
  expectOpenError(dir.file("list.pth"), {"holds a list"});
  expectOpenError(dir.file("custom.pth"),
                  {"unsupported global '__main__.Foo'"});
  expectOpenError(dir.file("garbage.pth"), {"not a torch.save zip archive"});
  expectOpenError(dir.file("empty.pth"), {"not a torch.save zip archive"});
  expectOpenError(dir.file("absent.pth"), {"cannot open"});
}

/// Python (without torch): `fake_torch_file(path, tensors, storages)` writes
/// a torch.save-style archive whose pickle is made by Python's pickle module
/// from stand-ins for torch's classes, so records torch 1.13 never writes
/// (`_rebuild_tensor_v3`, UntypedStorage, out-of-range views) can be tested.
/// tensors: {name: (fn, storage_type, key, numel, offset, size, stride,
/// dtype or None)}; storages: {key: bytes}.
const char *const kFakeTorch = R"(
import pickle, types, collections
torch = types.ModuleType('torch'); utils = types.ModuleType('torch._utils')
sys.modules['torch'] = torch; sys.modules['torch._utils'] = utils
def _global(module, name, obj):
    obj.__module__ = module.__name__; obj.__qualname__ = name; obj.__name__ = name
    setattr(module, name, obj)
    return obj
for n in ('_rebuild_tensor_v2', '_rebuild_tensor_v3'):
    _global(utils, n, lambda *a: None)
for n in ('HalfStorage', 'FloatStorage', 'UntypedStorage', 'float16',
          'uint16', 'float32'):
    _global(torch, n, type(n, (), {}))
class Storage:
    def __init__(self, type_, key, numel):
        self.type_, self.key, self.numel = type_, key, numel
class Tensor:
    def __init__(self, fn, storage, offset, size, stride, dtype):
        self.args = (storage, offset, tuple(size), tuple(stride), False,
                     collections.OrderedDict())
        if dtype is not None:
            self.args += (getattr(torch, dtype),)
        self.fn = getattr(utils, fn)
    def __reduce__(self):
        return (self.fn, self.args)
class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ('storage', getattr(torch, obj.type_), obj.key, 'cpu', obj.numel)
        return None
def fake_torch_file(path, tensors, storages, protocol=2, byteorder='little'):
    state = {}
    for name, (fn, type_, key, numel, offset, size, stride, dtype) in tensors.items():
        state[name] = Tensor(fn, Storage(type_, key, numel), offset, size, stride, dtype)
    buf = io.BytesIO()
    Pickler(buf, protocol=protocol).dump(state)
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr('archive/data.pkl', buf.getvalue())
        for key, data in storages.items():
            z.writestr('archive/data/' + key, data)
        z.writestr('archive/version', '3\n')
        z.writestr('archive/byteorder', byteorder)
)";

TEST(PthTest, HandMadePickles) {
  TRA_REQUIRE_PYTHON("");
  TempDir dir;
  CommandResult result = runPython(dir, std::string(kFakeTorch) + R"(
halves = struct.pack('<6e', 1, 2, 3, 4, 5, 6)
for protocol in (2, 4):
    fake_torch_file(os.path.join(d, 'v3_%d.pth' % protocol), {
        'u': ('_rebuild_tensor_v3', 'UntypedStorage', '0', 12, 1, (2, 2), (2, 1), 'float16'),
        't': ('_rebuild_tensor_v3', 'HalfStorage', '1', 6, 0, (3,), (2,), 'float16'),
    }, {'0': halves, '1': halves}, protocol=protocol)
fake_torch_file(os.path.join(d, 'v3_bad_dtype.pth'), {
    'u': ('_rebuild_tensor_v3', 'UntypedStorage', '0', 12, 0, (6,), (1,), 'uint16')},
    {'0': halves})
fake_torch_file(os.path.join(d, 'v3_mismatch.pth'), {
    'u': ('_rebuild_tensor_v3', 'HalfStorage', '0', 6, 0, (6,), (1,), 'float32')},
    {'0': halves})
fake_torch_file(os.path.join(d, 'v2_untyped.pth'), {
    'u': ('_rebuild_tensor_v2', 'UntypedStorage', '0', 12, 0, (6,), (1,), None)},
    {'0': halves})
fake_torch_file(os.path.join(d, 'out_of_range.pth'), {
    'w': ('_rebuild_tensor_v2', 'HalfStorage', '0', 6, 1, (2, 3), (3, 1), None)},
    {'0': halves})
fake_torch_file(os.path.join(d, 'stride_range.pth'), {
    'w': ('_rebuild_tensor_v2', 'HalfStorage', '0', 6, 0, (3, 2), (1, 4), None)},
    {'0': halves})
fake_torch_file(os.path.join(d, 'inconsistent.pth'), {
    'a': ('_rebuild_tensor_v2', 'HalfStorage', '0', 6, 0, (6,), (1,), None),
    'b': ('_rebuild_tensor_v2', 'FloatStorage', '0', 3, 0, (3,), (1,), None)},
    {'0': halves})
fake_torch_file(os.path.join(d, 'big_endian.pth'), {}, {}, byteorder='big')
fake_torch_file(os.path.join(d, 'empty_dict.pth'), {}, {})
# Raw pickles: an unknown opcode, a truncated stream.
def raw_file(path, pickle_bytes):
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr('archive/data.pkl', pickle_bytes)
raw_file(os.path.join(d, 'bad_opcode.pth'), b'\x80\x02}q\x00(X\x01\x00\x00\x00aI1\nu.')
raw_file(os.path.join(d, 'no_stop.pth'), b'\x80\x02}q\x00')
raw_file(os.path.join(d, 'bad_memo.pth'), b'\x80\x02h\x05.')
raw_file(os.path.join(d, 'protocol9.pth'), b'\x80\x09}.')
# Hostile pickles: 300000 nested lists (built through the memo), a cycle.
deep = bytearray(b'\x80\x02]r\x00\x00\x00\x00')
for i in range(300000):
    deep += b'j' + struct.pack('<I', i) + b']r' + struct.pack('<I', i + 1) + b'a0'
deep += b'.'
raw_file(os.path.join(d, 'deep.pth'), bytes(deep))
raw_file(os.path.join(d, 'cycle.pth'), b'\x80\x02]q\x00h\x00a.')
)");
  ASSERT_EQ(result.exitCode, 0) << result.output;

  for (const char *name : {"v3_2.pth", "v3_4.pth"}) {
    Result<PthFile> file = PthFile::open(dir.file(name));
    ASSERT_TRUE(file.ok()) << file.message();
    const PthTensor *u = file->find("u");
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->dtype, DType::F16);
    EXPECT_EQ(u->storageType, "UntypedStorage");
    Result<HostTensor> got = file->get("u");
    ASSERT_TRUE(got.ok()) << got.message();
    EXPECT_EQ(got->shape(), (std::vector<int64_t>{2, 2}));
    std::vector<double> values;
    for (int64_t i = 0; i < 4; ++i)
      values.push_back(got->loadAsDouble(i));
    EXPECT_EQ(values, (std::vector<double>{2, 3, 4, 5}));
    Result<HostTensor> t = file->get("t");
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_FALSE(t->isView());
    EXPECT_EQ(t->loadAsDouble(0), 1.0);
    EXPECT_EQ(t->loadAsDouble(1), 3.0);
    EXPECT_EQ(t->loadAsDouble(2), 5.0);
  }
  expectOpenError(dir.file("v3_bad_dtype.pth"),
                  {"tensor 'u'", "unsupported dtype 'torch.uint16'"});
  expectOpenError(dir.file("v3_mismatch.pth"),
                  {"tensor 'u'", "does not match its storage type"});
  expectOpenError(dir.file("v2_untyped.pth"),
                  {"tensor 'u'", "untyped storage needs the dtype"});
  expectOpenError(dir.file("out_of_range.pth"),
                  {"tensor 'w'", "reaches beyond its storage"});
  expectOpenError(dir.file("stride_range.pth"),
                  {"tensor 'w'", "reaches beyond its storage"});
  expectOpenError(dir.file("inconsistent.pth"),
                  {"tensor 'b'", "described inconsistently"});
  expectOpenError(dir.file("big_endian.pth"), {"byte order 'big'"});
  Result<PthFile> empty = PthFile::open(dir.file("empty_dict.pth"));
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_TRUE(empty->tensors().empty());
  expectOpenError(dir.file("bad_opcode.pth"),
                  {"pickle 'archive/data.pkl'", "byte 12",
                   "unsupported pickle opcode 0x49 'I'"});
  expectOpenError(dir.file("no_stop.pth"), {"without STOP"});
  expectOpenError(dir.file("bad_memo.pth"), {"memo index 5 not set"});
  expectOpenError(dir.file("protocol9.pth"), {"unsupported pickle protocol 9"});
  expectOpenError(dir.file("deep.pth"), {"holds a list"});
  expectOpenError(dir.file("cycle.pth"), {"holds a list"});
}

} // namespace
