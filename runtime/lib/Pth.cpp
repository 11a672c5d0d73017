//===- Pth.cpp - PyTorch torch.save files (zip archives) ------------------===//
//
// The archive is read by Zip.h and its pickle run by Pickle.h; this file
// checks the tensors the pickle describes against their storages.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Pth.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/Pickle.h"
#include "tra/Runtime/Zip.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

using namespace tra::rt;

//===----------------------------------------------------------------------===//
// PthTensor
//===----------------------------------------------------------------------===//

bool PthTensor::isContiguous() const {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0)
      return true;
    if (shape[d] != 1 && stride[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

int64_t PthTensor::numElements() const {
  return shapeElementCount(shape).value_or(0);
}

namespace {

/// Maps a torch storage type (e.g. "torch.HalfStorage") to its dtype;
/// `untyped` is set for "torch.UntypedStorage" (bytes).
std::optional<DType> storageDType(const std::string &type, bool &untyped) {
  untyped = false;
  static const std::pair<const char *, DType> types[] = {
      {"torch.FloatStorage", DType::F32},
      {"torch.HalfStorage", DType::F16},
      {"torch.BFloat16Storage", DType::BF16},
      {"torch.DoubleStorage", DType::F64},
      {"torch.LongStorage", DType::I64},
      {"torch.IntStorage", DType::I32},
      {"torch.ShortStorage", DType::I16},
      {"torch.CharStorage", DType::I8},
      {"torch.ByteStorage", DType::U8},
      {"torch.BoolStorage", DType::Bool}};
  for (const auto &[name, dtype] : types)
    if (type == name)
      return dtype;
  if (type == "torch.UntypedStorage") {
    untyped = true;
    return DType::U8;
  }
  return std::nullopt;
}

/// Maps a torch dtype name ("float16") to a DType.
std::optional<DType> torchDType(const std::string &name) {
  static const std::pair<const char *, DType> types[] = {
      {"float32", DType::F32},   {"float16", DType::F16},
      {"bfloat16", DType::BF16}, {"float64", DType::F64},
      {"int64", DType::I64},     {"int32", DType::I32},
      {"int16", DType::I16},     {"int8", DType::I8},
      {"uint8", DType::U8},      {"bool", DType::Bool}};
  for (const auto &[n, dtype] : types)
    if (name == n)
      return dtype;
  return std::nullopt;
}

} // namespace

//===----------------------------------------------------------------------===//
// PthFile
//===----------------------------------------------------------------------===//

Result<PthFile> PthFile::open(const std::string &path) {
  Result<std::shared_ptr<const MappedFile>> mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.error();
  PthFile result;
  result.file = std::move(*mapped);
  const uint8_t *bytes = result.file->data();
  const uint64_t size = result.file->size();

  // The legacy (PyTorch < 1.6) format is a bare pickle stream starting with
  // a pickled magic number.
  static const uint8_t legacyMagic[] = {0x80, 0x02, 0x8a, 0x0a};
  if (size >= 4 && std::memcmp(bytes, legacyMagic, 4) == 0)
    return fileError(path, "legacy (pre-1.6, non-zip) torch.save format is "
                           "not supported; re-save it with a newer PyTorch");
  if (!hasZipLocalHeader(bytes, size))
    return fileError(path, "not a torch.save zip archive (no zip local header "
                           "at the start)");

  Result<std::vector<ZipEntry>> directory = readZipDirectory(bytes, size);
  if (!directory)
    return fileError(path, directory.message());
  const std::vector<ZipEntry> &zip = *directory;
  std::unordered_map<std::string, size_t> zipIndex;
  const ZipEntry *pickle = nullptr;
  for (size_t i = 0; i < zip.size(); ++i) {
    if (!zipIndex.emplace(zip[i].name, i).second)
      return fileError(path, "duplicate zip entry " + quoteName(zip[i].name));
    size_t slash = zip[i].name.find('/');
    if (slash != std::string::npos &&
        zip[i].name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      if (pickle)
        return fileError(path, "more than one data.pkl in the archive (" +
                                   quoteName(pickle->name) + " and " +
                                   quoteName(zip[i].name) + ")");
      pickle = &zip[i];
      result.prefix = zip[i].name.substr(0, slash);
    }
  }
  if (!pickle)
    return fileError(path, "no PREFIX/data.pkl in the zip archive (not a "
                           "torch.save file?)");
  if (Status problem = checkZipEntryStored(*pickle); !problem.ok())
    return fileError(path, problem.message());
  // The pickle and the byte order are read in full here: verify them.
  if (Status problem = checkZipEntryCrc(*pickle, bytes); !problem.ok())
    return fileError(path, problem.message());
  auto byteOrder = zipIndex.find(result.prefix + "/byteorder");
  if (byteOrder != zipIndex.end()) {
    const ZipEntry &e = zip[byteOrder->second];
    bool stored = checkZipEntryStored(e).ok();
    if (stored)
      if (Status problem = checkZipEntryCrc(e, bytes); !problem.ok())
        return fileError(path, problem.message());
    std::string_view order(reinterpret_cast<const char *>(bytes + e.dataOffset),
                           stored ? e.size : 0);
    if (order != "little")
      return fileError(path, "byte order " + quoteName(order) +
                                 " is not supported (only 'little')");
  }

  // Run the pickle.
  const std::string pickleName = quoteName(pickle->name);
  Result<Unpickled> unpickled =
      unpickle(bytes + pickle->dataOffset, pickle->size);
  if (!unpickled)
    return fileError(path, "pickle " + pickleName + ", " + unpickled.message());
  const PyObject *root = &unpickled->root();
  if (root->kind != PyKind::Dict)
    return fileError(path, "pickle " + pickleName + " holds a " +
                               pyKindName(root->kind) +
                               ", expected a dict of tensors");

  struct StorageInfo {
    std::string type;
    int64_t numel;
  };
  std::unordered_map<std::string, StorageInfo> storages;
  for (const auto &[key, value] : root->dictItems) {
    if (key->kind != PyKind::Str)
      return fileError(path,
                       "pickle " + pickleName + ": a dict key is not a string");
    const std::string &name = key->text;
    auto tensorError = [&](const std::string &what) {
      return fileError(path, "tensor " + quoteName(name) + ": " + what);
    };
    if (value->kind != PyKind::Tensor)
      return fileError(path, "entry " + quoteName(name) + " is a " +
                                 pyKindName(value->kind) +
                                 ", not a tensor (only dicts of tensors are "
                                 "supported)");
    const PyObject &storage = *value->storage;
    PthTensor tensor;
    tensor.name = name;
    tensor.shape = value->shape;
    tensor.stride = value->stride;
    tensor.storageKey = storage.storageKey;
    tensor.storageType = storage.storageType;
    tensor.storageOffset = value->storageOffset;
    if (tensor.storageType.rfind("torch.", 0) == 0)
      tensor.storageType.erase(0, 6);

    bool untyped = false;
    std::optional<DType> storageType =
        storageDType(storage.storageType, untyped);
    if (!storageType)
      return tensorError("unsupported storage type " +
                         quoteName(storage.storageType) +
                         " (supported: Float, Half, BFloat16, Double, Long, "
                         "Int, Short, Char, Byte, Bool and UntypedStorage)");
    if (!value->dtypeName.empty()) {
      std::optional<DType> dtype = torchDType(value->dtypeName);
      if (!dtype)
        return tensorError("unsupported dtype " +
                           quoteName("torch." + value->dtypeName));
      if (!untyped && *dtype != *storageType)
        return tensorError("dtype torch." + value->dtypeName +
                           " does not match its storage type " +
                           storage.storageType);
      tensor.dtype = *dtype;
    } else {
      if (untyped)
        return tensorError("an untyped storage needs the dtype of "
                           "torch._utils._rebuild_tensor_v3");
      tensor.dtype = *storageType;
    }

    // The storage: consistent across uses, present, of the size its numel
    // implies.
    auto [it, inserted] =
        storages.emplace(storage.storageKey, StorageInfo{storage.storageType,
                                                         storage.storageNumel});
    if (!inserted && (it->second.type != storage.storageType ||
                      it->second.numel != storage.storageNumel))
      return tensorError("storage " + quoteName(storage.storageKey) +
                         " is described inconsistently (" + it->second.type +
                         " of " + std::to_string(it->second.numel) +
                         " elements, then " + storage.storageType + " of " +
                         std::to_string(storage.storageNumel) + ")");
    std::string entryName = result.prefix + "/data/" + storage.storageKey;
    auto found = zipIndex.find(entryName);
    if (found == zipIndex.end())
      return tensorError("its storage " + quoteName(entryName) +
                         " is missing from the archive");
    const ZipEntry &entry = zip[found->second];
    if (Status problem = checkZipEntryStored(entry); !problem.ok())
      return tensorError(problem.message());
    const int64_t storageElementSize =
        static_cast<int64_t>(dtypeSize(*storageType));
    std::optional<int64_t> storageBytes =
        checkedMul(storage.storageNumel, storageElementSize);
    if (!storageBytes || uint64_t(*storageBytes) != entry.size)
      return tensorError(
          "storage " + quoteName(entryName) + " holds " +
          std::to_string(entry.size) + " bytes, but its " +
          std::to_string(storage.storageNumel) + " elements of " +
          std::to_string(storageElementSize) + " bytes need " +
          (storageBytes ? std::to_string(*storageBytes) : "more") +
          (storageBytes && entry.size < uint64_t(*storageBytes) ? " (truncated)"
                                                                : ""));
    tensor.storageBegin = entry.dataOffset;
    tensor.storageBytes = entry.size;
    tensor.storageCrc32 = entry.crc32;

    // Every element must lie inside the storage.
    std::optional<int64_t> count = shapeElementCount(tensor.shape);
    std::optional<int64_t> bytesNeeded =
        count ? shapeByteSize(tensor.dtype, tensor.shape) : std::nullopt;
    if (!count || !bytesNeeded)
      return tensorError("shape " + formatShape(tensor.shape) +
                         " is too large");
    if (*count > 0) {
      std::optional<int64_t> last = tensor.storageOffset;
      for (size_t d = 0; d < tensor.shape.size() && last; ++d) {
        std::optional<int64_t> step =
            checkedMul(tensor.shape[d] - 1, tensor.stride[d]);
        last = step ? checkedAdd(*last, *step) : std::nullopt;
      }
      int64_t available =
          static_cast<int64_t>(entry.size / dtypeSize(tensor.dtype));
      if (!last || *last >= available)
        return tensorError(
            "shape " + formatShape(tensor.shape) + " with stride " +
            formatShape(tensor.stride) + " at storage offset " +
            std::to_string(tensor.storageOffset) +
            " reaches beyond its storage " + quoteName(entryName) + " of " +
            std::to_string(available) + " " + dtypeName(tensor.dtype) +
            " elements");
    }
    result.byName.emplace(name, result.entries.size());
    result.entries.push_back(std::move(tensor));
  }
  result.checks = std::make_shared<StorageChecks>(result.entries);
  return result;
}

/// Whether the CRC-32 of each storage was verified: one state per storage
/// (by the offset of its bytes), 0 unchecked, 1 good, 2 damaged. Two threads
/// may both compute a CRC the first time; they store the same outcome.
struct PthFile::StorageChecks {
  explicit StorageChecks(const std::vector<PthTensor> &tensors) {
    for (const PthTensor &t : tensors)
      slots.emplace(t.storageBegin, slots.size());
    states.reset(new std::atomic<uint8_t>[slots.size()]());
  }
  std::unordered_map<uint64_t, size_t> slots;
  std::unique_ptr<std::atomic<uint8_t>[]> states;
};

Status PthFile::checkStorage(const PthTensor &tensor) const {
  std::atomic<uint8_t> &state =
      checks->states[checks->slots.at(tensor.storageBegin)];
  uint8_t known = state.load(std::memory_order_acquire);
  if (known == 1)
    return Status::success();
  ZipEntry entry;
  entry.name = prefix + "/data/" + tensor.storageKey;
  entry.size = entry.compressedSize = tensor.storageBytes;
  entry.dataOffset = tensor.storageBegin;
  entry.crc32 = tensor.storageCrc32;
  Status problem = checkZipEntryCrc(entry, file->data());
  state.store(problem.ok() ? 1 : 2, std::memory_order_release);
  if (problem.ok())
    return problem;
  return fileError(path(), "tensor " + quoteName(tensor.name) + ": " +
                               problem.message());
}

/// Returns true if reading the tile of `t` of extent `sizes` at `offsets`
/// reads every byte of its storage: the whole tensor, spanning the whole
/// storage.
static bool readsWholeStorage(const PthTensor &t,
                              const std::vector<int64_t> &offsets,
                              const std::vector<int64_t> &sizes) {
  if (t.storageOffset != 0 || sizes != t.shape)
    return false;
  for (int64_t offset : offsets)
    if (offset != 0)
      return false;
  // Elements in the tensor's span, and in the tensor (an expanded tensor
  // reads fewer bytes than it has elements).
  uint64_t span = 0;
  if (t.numElements() > 0) {
    int64_t last = 0;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.stride[d] == 0 && t.shape[d] > 1)
        return false;
      last += (t.shape[d] - 1) * t.stride[d];
    }
    span = uint64_t(last + 1);
  }
  return span == uint64_t(t.numElements()) &&
         span * dtypeSize(t.dtype) == t.storageBytes;
}

const PthTensor *PthFile::find(std::string_view name) const {
  auto it = byName.find(std::string(name));
  return it == byName.end() ? nullptr : &entries[it->second];
}

Result<const PthTensor *> PthFile::entry(std::string_view name) const {
  if (const PthTensor *found = find(name))
    return found;
  return fileError(path(), "no tensor named " + quoteName(name));
}

Result<HostTensor> PthFile::get(std::string_view name) const {
  Result<const PthTensor *> found = entry(name);
  if (!found)
    return found.error();
  const PthTensor &t = **found;
  if (t.isContiguous()) {
    if (readsWholeStorage(t, std::vector<int64_t>(t.shape.size(), 0), t.shape))
      if (Status problem = checkStorage(t); !problem.ok())
        return problem.error();
    return HostTensor::view(t.dtype, t.shape,
                            file->data() + t.storageBegin +
                                t.storageOffset * dtypeSize(t.dtype),
                            file);
  }
  return readTile(name, std::vector<int64_t>(t.shape.size(), 0), t.shape);
}

/// Returns the tensor `name` of `file` if the tile of extent `sizes` at
/// `offsets` lies inside it, else an error naming the file and tensor.
static Result<const PthTensor *> tileEntry(const PthFile &file,
                                           std::string_view name,
                                           const std::vector<int64_t> &offsets,
                                           const std::vector<int64_t> &sizes) {
  Result<const PthTensor *> found = file.entry(name);
  if (!found)
    return found;
  Status problem = checkTile((*found)->shape, offsets, sizes);
  if (!problem.ok())
    return fileError(file.path(),
                     "tensor " + quoteName(name) + ": " + problem.message());
  return found;
}

Result<HostTensor> PthFile::readTile(std::string_view name,
                                     const std::vector<int64_t> &offsets,
                                     const std::vector<int64_t> &sizes) const {
  Result<const PthTensor *> found = tileEntry(*this, name, offsets, sizes);
  if (!found)
    return found.error();
  HostTensor tile = HostTensor::zeros((*found)->dtype, sizes);
  Status status = readTileInto(name, offsets, sizes, tile.mutableData(),
                               rowMajorStrides(sizes));
  if (!status)
    return status.error();
  return tile;
}

Status PthFile::readTileInto(std::string_view name,
                             const std::vector<int64_t> &offsets,
                             const std::vector<int64_t> &sizes, uint8_t *out,
                             const std::vector<int64_t> &outStrides) const {
  Result<const PthTensor *> found = tileEntry(*this, name, offsets, sizes);
  if (!found)
    return found.error();
  const PthTensor &t = **found;
  if (outStrides.size() != sizes.size())
    return fileError(path(), "tensor " + quoteName(name) + ": output strides " +
                                 formatShape(outStrides) +
                                 " do not match the tile rank " +
                                 std::to_string(sizes.size()));
  if (readsWholeStorage(t, offsets, sizes))
    if (Status problem = checkStorage(t); !problem.ok())
      return problem;
  const size_t elementSize = dtypeSize(t.dtype);
  const uint8_t *base =
      file->data() + t.storageBegin + t.storageOffset * elementSize;
  // The bytes the tensor spans; a smaller tile is read in strided runs, so
  // keep the kernel from reading ahead into the bytes between them.
  uint64_t spanBytes = 0;
  if (t.numElements() > 0) {
    int64_t last = 0;
    for (size_t d = 0; d < t.shape.size(); ++d)
      last += (t.shape[d] - 1) * t.stride[d];
    spanBytes = uint64_t(last + 1) * elementSize;
  }
  uint64_t tileBytes =
      uint64_t(shapeElementCount(sizes).value_or(0)) * elementSize;
  const size_t spanStart = base - file->data();
  bool strided = tileBytes > 0 && tileBytes < spanBytes;
  if (strided)
    file->adviseAccess(spanStart, spanBytes, /*random=*/true);
  copyStridedTile(elementSize, base, t.stride, offsets, sizes, out, outStrides);
  if (strided)
    file->adviseAccess(spanStart, spanBytes, /*random=*/false);
  return Status::success();
}
