//===- Safetensors.cpp - safetensors files and sharded checkpoints --------===//

#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/ByteOrder.h"
#include "tra/Runtime/Strings.h"

#include <algorithm>
#include <filesystem>

using namespace tra::rt;

/// The reference implementation refuses headers larger than this.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;

const char *tra::rt::safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> tra::rt::parseSafetensorsDType(std::string_view name) {
  for (DType dtype : kAllDTypes)
    if (name == safetensorsDTypeName(dtype))
      return dtype;
  return std::nullopt;
}

/// Returns true for dtypes the format defines but the runtime does not read.
static bool isKnownUnsupportedDType(std::string_view name) {
  static const char *const names[] = {
      "U16",     "U32",     "U64",     "C64", "F8_E5M2", "F8_E4M3",
      "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",  "E8M0"};
  for (const char *known : names)
    if (name == known)
      return true;
  return false;
}

/// Reads a JSON integer >= 0 into `out`.
static bool getNonNegative(const JsonValue &value, int64_t &out) {
  if (!value.isInteger() || value.getInteger() < 0)
    return false;
  out = value.getInteger();
  return true;
}

//===----------------------------------------------------------------------===//
// SafetensorsFile
//===----------------------------------------------------------------------===//

/// Parses one tensor's header entry. Fails with the problem.
static Status parseEntry(const JsonValue &value, SafetensorsEntry &entry) {
  if (!value.isObject())
    return Error{
        "header entry is a " + std::string(JsonValue::kindName(value.kind())) +
        ", expected an object with 'dtype', 'shape' and 'data_offsets'"};
  const JsonValue *dtype = value.find("dtype");
  if (!dtype || !dtype->isString())
    return Error{"missing or non-string 'dtype'"};
  std::optional<DType> parsed = parseSafetensorsDType(dtype->getString());
  if (!parsed) {
    if (isKnownUnsupportedDType(dtype->getString()))
      return Error{"unsupported dtype " + quoteName(dtype->getString()) +
                   " (supported: F32 F16 BF16 F64 I64 I32 I16 I8 U8 BOOL)"};
    return Error{"unknown dtype " + quoteName(dtype->getString())};
  }
  entry.dtype = *parsed;

  const JsonValue *shape = value.find("shape");
  if (!shape || !shape->isArray())
    return Error{"missing or non-array 'shape'"};
  for (const JsonValue &dim : shape->getArray()) {
    int64_t size;
    if (!getNonNegative(dim, size))
      return Error{"'shape' must be an array of non-negative integers"};
    entry.shape.push_back(size);
  }

  const JsonValue *offsets = value.find("data_offsets");
  int64_t begin, end;
  if (!offsets || !offsets->isArray() || offsets->getArray().size() != 2 ||
      !getNonNegative(offsets->getArray()[0], begin) ||
      !getNonNegative(offsets->getArray()[1], end))
    return Error{
        "'data_offsets' must be an array of two non-negative integers"};
  if (begin > end)
    return Error{"'data_offsets' [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] end before they begin"};
  entry.begin = static_cast<uint64_t>(begin);
  entry.end = static_cast<uint64_t>(end);

  std::optional<int64_t> bytes = shapeByteSize(entry.dtype, entry.shape);
  if (!bytes)
    return Error{"shape " + formatShape(entry.shape) + " is too large"};
  if (static_cast<uint64_t>(*bytes) != entry.end - entry.begin)
    return Error{"'data_offsets' [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] span " +
                 std::to_string(entry.end - entry.begin) +
                 " bytes, but shape " + formatShape(entry.shape) + " of " +
                 safetensorsDTypeName(entry.dtype) + " needs " +
                 std::to_string(*bytes)};
  return Status::success();
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string &path) {
  Result<std::shared_ptr<const MappedFile>> mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.error();
  SafetensorsFile result;
  result.file = std::move(*mapped);
  const uint8_t *bytes = result.file->data();
  const uint64_t size = result.file->size();

  if (size < 8)
    return fileError(path, "not a safetensors file: only " +
                               std::to_string(size) +
                               " bytes, too short for the 8-byte header "
                               "length");
  const uint64_t headerSize = readLE64(bytes);
  if (headerSize > size - 8)
    return fileError(path, "header length " + std::to_string(headerSize) +
                               " exceeds the file size " +
                               std::to_string(size) +
                               " (truncated, or not a safetensors file)");
  if (headerSize > kMaxHeaderSize)
    return fileError(path, "header length " + std::to_string(headerSize) +
                               " exceeds the limit of " +
                               std::to_string(kMaxHeaderSize) + " bytes");
  std::string_view headerText(reinterpret_cast<const char *>(bytes + 8),
                              headerSize);
  if (headerText.empty() || headerText[0] != '{')
    return fileError(path, "header does not start with '{' (not a "
                           "safetensors file?)");
  Result<JsonValue> header = parseJson(headerText, path);
  if (!header)
    return Error{header.error().message + " (in the safetensors header)"};
  if (!header->isObject())
    return fileError(path, "header is not a JSON object");
  result.dataStart = 8 + headerSize;
  const uint64_t dataSize = size - result.dataStart;

  for (const JsonValue::Member &member : header->getObject()) {
    const std::string &name = member.first;
    if (name == "__metadata__") {
      if (!member.second.isObject())
        return fileError(path, "'__metadata__' must be an object mapping "
                               "strings to strings");
      for (const JsonValue::Member &item : member.second.getObject()) {
        if (!item.second.isString())
          return fileError(path, "'__metadata__' value of " +
                                     quoteName(item.first) +
                                     " is not a string");
        result.meta.emplace_back(item.first, item.second.getString());
      }
      continue;
    }
    SafetensorsEntry entry;
    entry.name = name;
    Status problem = parseEntry(member.second, entry);
    if (!problem.ok())
      return fileError(path,
                       "tensor " + quoteName(name) + ": " + problem.message());
    if (entry.end > dataSize)
      return fileError(path, "tensor " + quoteName(name) +
                                 ": 'data_offsets' [" +
                                 std::to_string(entry.begin) + ", " +
                                 std::to_string(entry.end) +
                                 "] out of range: the data section has " +
                                 std::to_string(dataSize) + " bytes");
    // The JSON parser already rejects duplicate keys.
    result.byName.emplace(name, result.entries.size());
    result.entries.push_back(std::move(entry));
  }

  // The byte ranges must cover the data section exactly, without overlaps.
  std::vector<const SafetensorsEntry *> order;
  order.reserve(result.entries.size());
  for (const SafetensorsEntry &entry : result.entries)
    order.push_back(&entry);
  std::sort(order.begin(), order.end(),
            [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
              if (a->begin != b->begin)
                return a->begin < b->begin;
              if (a->end != b->end)
                return a->end < b->end;
              return a < b; // Header order, for deterministic messages.
            });
  uint64_t covered = 0;
  const SafetensorsEntry *previous = nullptr;
  for (const SafetensorsEntry *entry : order) {
    if (entry->begin < covered)
      return fileError(path, "tensors " + quoteName(previous->name) + " and " +
                                 quoteName(entry->name) +
                                 " overlap in the data section");
    if (entry->begin > covered)
      return fileError(path, "bytes [" + std::to_string(covered) + ", " +
                                 std::to_string(entry->begin) +
                                 ") of the data section, before tensor " +
                                 quoteName(entry->name) +
                                 ", belong to no tensor");
    covered = entry->end;
    previous = entry;
  }
  if (covered != dataSize)
    return fileError(path, "bytes [" + std::to_string(covered) + ", " +
                               std::to_string(dataSize) +
                               ") at the end of the data section belong to "
                               "no tensor");
  return result;
}

const SafetensorsEntry *SafetensorsFile::find(std::string_view name) const {
  auto it = byName.find(std::string(name));
  return it == byName.end() ? nullptr : &entries[it->second];
}

Result<const SafetensorsEntry *>
SafetensorsFile::entry(std::string_view name) const {
  if (const SafetensorsEntry *found = find(name))
    return found;
  return fileError(path(), "no tensor named " + quoteName(name));
}

Result<HostTensor> SafetensorsFile::get(std::string_view name) const {
  Result<const SafetensorsEntry *> found = entry(name);
  if (!found)
    return found.error();
  const SafetensorsEntry &e = **found;
  return HostTensor::view(e.dtype, e.shape, file->data() + dataStart + e.begin,
                          file);
}

Result<HostTensor>
SafetensorsFile::readTile(std::string_view name,
                          const std::vector<int64_t> &offsets,
                          const std::vector<int64_t> &sizes) const {
  Result<const SafetensorsEntry *> found = entry(name);
  if (!found)
    return found.error();
  const SafetensorsEntry &e = **found;
  Status problem = checkTile(e.shape, offsets, sizes);
  if (!problem.ok())
    return fileError(path(),
                     "tensor " + quoteName(name) + ": " + problem.message());
  HostTensor tile = HostTensor::zeros(e.dtype, sizes);
  const uint64_t tensorStart = dataStart + e.begin;
  const uint64_t tensorBytes = e.end - e.begin;
  // A tile narrower than the tensor is read in strided runs; keep the kernel
  // from reading ahead into the bytes between them.
  bool strided = tile.byteSize() > 0 && tile.byteSize() < tensorBytes;
  if (strided)
    file->adviseAccess(tensorStart, tensorBytes, /*random=*/true);
  copyTile(e.dtype, e.shape, file->data() + tensorStart, offsets, sizes,
           tile.mutableData());
  if (strided)
    file->adviseAccess(tensorStart, tensorBytes, /*random=*/false);
  return tile;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

Status tra::rt::writeSafetensors(const std::string &path,
                                 const std::vector<NamedTensor> &tensors,
                                 const SafetensorsMetadata &metadata) {
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string &name = tensors[i].name;
    if (name == "__metadata__")
      return fileError(path, "cannot write a tensor named '__metadata__' "
                             "(reserved by the format)");
    if (!seen.emplace(name, i).second)
      return fileError(path, "duplicate tensor name " + quoteName(name));
  }
  std::unordered_map<std::string, size_t> seenKeys;
  for (const auto &item : metadata)
    if (!seenKeys.emplace(item.first, 0).second)
      return fileError(path, "duplicate metadata key " + quoteName(item.first));

  // Lay the data out by decreasing element size so each tensor is aligned.
  std::vector<size_t> layout(tensors.size());
  for (size_t i = 0; i < layout.size(); ++i)
    layout[i] = i;
  std::sort(layout.begin(), layout.end(), [&](size_t a, size_t b) {
    size_t sizeA = dtypeSize(tensors[a].tensor.dtype());
    size_t sizeB = dtypeSize(tensors[b].tensor.dtype());
    return sizeA != sizeB ? sizeA > sizeB : a < b; // Stable.
  });
  std::vector<uint64_t> begins(tensors.size());
  uint64_t offset = 0;
  for (size_t i : layout) {
    begins[i] = offset;
    offset += tensors[i].tensor.byteSize();
  }

  JsonValue header = JsonValue::object();
  if (!metadata.empty()) {
    JsonValue meta = JsonValue::object();
    for (const auto &item : metadata)
      meta.getObject().emplace_back(item.first, JsonValue(item.second));
    header.getObject().emplace_back("__metadata__", std::move(meta));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor &tensor = tensors[i].tensor;
    JsonValue shape = JsonValue::array();
    for (int64_t dim : tensor.shape())
      shape.push(JsonValue(dim));
    JsonValue info = JsonValue::object();
    info.getObject().emplace_back("dtype",
                                  safetensorsDTypeName(tensor.dtype()));
    info.getObject().emplace_back("shape", std::move(shape));
    info.getObject().emplace_back(
        "data_offsets",
        JsonValue::array(
            {JsonValue(begins[i]), JsonValue(begins[i] + tensor.byteSize())}));
    header.getObject().emplace_back(tensors[i].name, std::move(info));
  }
  std::string text = header.serialize();
  text.append((8 - text.size() % 8) % 8, ' ');

  Result<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.error();
  uint8_t length[8];
  for (int i = 0; i < 8; ++i)
    length[i] =
        static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  if (Status s = writer->write(length, sizeof(length)); !s)
    return s;
  if (Status s = writer->write(text.data(), text.size()); !s)
    return s;
  for (size_t i : layout)
    if (Status s = writer->write(tensors[i].tensor.data(),
                                 tensors[i].tensor.byteSize());
        !s)
      return s;
  return writer->commit();
}

//===----------------------------------------------------------------------===//
// SafetensorsCheckpoint
//===----------------------------------------------------------------------===//

Result<SafetensorsCheckpoint>
SafetensorsCheckpoint::open(const std::string &path) {
  SafetensorsCheckpoint result;
  result.checkpointPath = path;
  if (!endsWith(path, ".json")) {
    Result<SafetensorsFile> file = SafetensorsFile::open(path);
    if (!file)
      return file.error();
    for (const SafetensorsEntry &entry : file->tensors()) {
      result.shardIndex.emplace(entry.name, 0);
      result.names.push_back(entry.name);
    }
    result.shardFiles.push_back(std::move(*file));
    return result;
  }

  result.sharded = true;
  Result<std::string> text = readFile(path);
  if (!text)
    return text.error();
  Result<JsonValue> index = parseJson(*text, path);
  if (!index)
    return index.error();
  if (!index->isObject())
    return fileError(path, "index is not a JSON object");
  if (const JsonValue *metadata = index->find("metadata")) {
    if (!metadata->isObject() && !metadata->isNull())
      return fileError(path, "'metadata' is not an object");
    result.metadataJson = *metadata;
  }
  const JsonValue *weightMap = index->find("weight_map");
  if (!weightMap)
    return fileError(path, "missing 'weight_map' (not a safetensors index?)");
  if (!weightMap->isObject())
    return fileError(path, "'weight_map' is not an object");

  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  std::unordered_map<std::string, size_t> shardByFile;
  for (const JsonValue::Member &member : weightMap->getObject()) {
    const std::string &name = member.first;
    if (!member.second.isString() || member.second.getString().empty())
      return fileError(path, "'weight_map' entry of tensor " + quoteName(name) +
                                 " is not a file name");
    const std::string &shardName = member.second.getString();
    auto [it, inserted] =
        shardByFile.emplace(shardName, result.shardFiles.size());
    if (inserted) {
      std::string shardPath = (directory / shardName).string();
      Result<SafetensorsFile> shard = SafetensorsFile::open(shardPath);
      if (!shard)
        return fileError(path, "cannot open shard " + quoteName(shardName) +
                                   " of tensor " + quoteName(name) + ": " +
                                   shard.error().message);
      result.shardFiles.push_back(std::move(*shard));
    }
    const SafetensorsFile &shard = result.shardFiles[it->second];
    if (!shard.find(name))
      return fileError(path, "tensor " + quoteName(name) +
                                 " is mapped to shard " + quoteName(shardName) +
                                 ", but " + shard.path() +
                                 " has no tensor of that name");
    result.shardIndex.emplace(name, it->second);
    result.names.push_back(name);
  }
  return result;
}

Result<const SafetensorsFile *>
SafetensorsCheckpoint::shardOf(std::string_view name) const {
  auto it = shardIndex.find(std::string(name));
  if (it == shardIndex.end())
    return fileError(checkpointPath, "no tensor named " + quoteName(name));
  return &shardFiles[it->second];
}

Result<const SafetensorsEntry *>
SafetensorsCheckpoint::entry(std::string_view name) const {
  Result<const SafetensorsFile *> shard = shardOf(name);
  if (!shard)
    return shard.error();
  return (*shard)->entry(name);
}

Result<HostTensor> SafetensorsCheckpoint::get(std::string_view name) const {
  Result<const SafetensorsFile *> shard = shardOf(name);
  if (!shard)
    return shard.error();
  return (*shard)->get(name);
}

Result<HostTensor>
SafetensorsCheckpoint::readTile(std::string_view name,
                                const std::vector<int64_t> &offsets,
                                const std::vector<int64_t> &sizes) const {
  Result<const SafetensorsFile *> shard = shardOf(name);
  if (!shard)
    return shard.error();
  return (*shard)->readTile(name, offsets, sizes);
}
