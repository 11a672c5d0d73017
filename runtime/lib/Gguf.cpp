//===- Gguf.cpp - GGUF files (llama.cpp's checkpoint format) --------------===//

#include "tra/Runtime/Gguf.h"
#include "tra/Runtime/ByteOrder.h"
#include "tra/Runtime/Checked.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace tra::rt;

static constexpr uint8_t kMagic[4] = {'G', 'G', 'U', 'F'};
static constexpr uint64_t kDefaultAlignment = 32;

const char *tra::rt::ggufValueTypeName(GgufValueType type) {
  switch (type) {
  case GgufValueType::U8:
    return "u8";
  case GgufValueType::I8:
    return "i8";
  case GgufValueType::U16:
    return "u16";
  case GgufValueType::I16:
    return "i16";
  case GgufValueType::U32:
    return "u32";
  case GgufValueType::I32:
    return "i32";
  case GgufValueType::F32:
    return "f32";
  case GgufValueType::Bool:
    return "bool";
  case GgufValueType::String:
    return "string";
  case GgufValueType::Array:
    return "array";
  case GgufValueType::U64:
    return "u64";
  case GgufValueType::I64:
    return "i64";
  case GgufValueType::F64:
    return "f64";
  }
  return "?";
}

std::string tra::rt::ggmlTypeName(uint32_t type) {
  // ggml's type enumeration; numbers it retired are left empty.
  static const char *const names[] = {
      "F32",   "F16",   "Q4_0",    "Q4_1",   "",        "",      "Q5_0",
      "Q5_1",  "Q8_0",  "Q8_1",    "Q2_K",   "Q3_K",    "Q4_K",  "Q5_K",
      "Q6_K",  "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",
      "IQ3_S", "IQ2_S", "IQ4_XS",  "I8",     "I16",     "I32",   "I64",
      "F64",   "IQ1_M", "BF16",    "",       "",        "",      "TQ1_0",
      "TQ2_0", "",      "",        "",       "MXFP4",   "NVFP4", "Q1_0",
      "Q2_0"};
  return type < std::size(names) ? names[type] : "";
}

DType GgufTensor::dtype() const {
  switch (type) {
  case GgmlType::F16:
    return DType::F16;
  case GgmlType::BF16:
    return DType::BF16;
  case GgmlType::F32:
  case GgmlType::Q8_0:
    return DType::F32;
  }
  return DType::F32;
}

/// Returns the encoded size of a scalar value type, or 0 for strings and
/// arrays.
static uint64_t scalarSize(GgufValueType type) {
  switch (type) {
  case GgufValueType::U8:
  case GgufValueType::I8:
  case GgufValueType::Bool:
    return 1;
  case GgufValueType::U16:
  case GgufValueType::I16:
    return 2;
  case GgufValueType::U32:
  case GgufValueType::I32:
  case GgufValueType::F32:
    return 4;
  case GgufValueType::U64:
  case GgufValueType::I64:
  case GgufValueType::F64:
    return 8;
  case GgufValueType::String:
  case GgufValueType::Array:
    return 0;
  }
  return 0;
}

static bool isInteger(GgufValueType type) {
  return type != GgufValueType::F32 && type != GgufValueType::F64 &&
         type != GgufValueType::Bool && scalarSize(type) != 0;
}

/// Decodes the integer of `type` (an integer type) at `p`. A u64 above
/// INT64_MAX comes back negative; callers check.
static int64_t loadInteger(GgufValueType type, const uint8_t *p) {
  switch (type) {
  case GgufValueType::U8:
    return p[0];
  case GgufValueType::I8:
    return int8_t(p[0]);
  case GgufValueType::U16:
    return readLE16(p);
  case GgufValueType::I16:
    return int16_t(readLE16(p));
  case GgufValueType::U32:
    return readLE32(p);
  case GgufValueType::I32:
    return int32_t(readLE32(p));
  case GgufValueType::U64:
  case GgufValueType::I64:
    return int64_t(readLE64(p));
  default:
    return 0;
  }
}

namespace {
/// Reads the header front to back, never past the end of the file.
class Cursor {
public:
  Cursor(const uint8_t *data, uint64_t size) : data(data), size(size) {}

  uint64_t offset() const { return pos; }
  uint64_t left() const { return size - pos; }
  uint64_t fileSize() const { return size; }

  /// Takes the next `n` bytes; false (nothing taken) if fewer are left.
  bool take(uint64_t n, const uint8_t *&out) {
    if (n > left())
      return false;
    out = data + pos;
    pos += n;
    return true;
  }
  bool u32(uint32_t &value) {
    const uint8_t *p;
    return take(4, p) && (value = readLE32(p), true);
  }
  bool u64(uint64_t &value) {
    const uint8_t *p;
    return take(8, p) && (value = readLE64(p), true);
  }
  /// Reads a string (u64 length, bytes); false if its length prefix or its
  /// bytes run past the end.
  bool string(std::string_view &value) {
    uint64_t length;
    uint64_t start = pos;
    const uint8_t *p;
    if (!u64(length) || !take(length, p)) {
      pos = start;
      return false;
    }
    value = std::string_view(reinterpret_cast<const char *>(p), length);
    return true;
  }

private:
  const uint8_t *data;
  uint64_t size;
  uint64_t pos = 0;
};

/// Parses the header of one file into `GgufFile`'s fields.
class HeaderParser {
public:
  HeaderParser(const std::string &path, const uint8_t *data, uint64_t size)
      : path(path), cursor(data, size) {}

  /// "truncated: WHAT at offset O: only L bytes are left in the file".
  Error truncated(const std::string &what, uint64_t at) const {
    return fileError(path, "truncated: " + what + " at offset " +
                               std::to_string(at) + ": only " +
                               std::to_string(cursor.fileSize() - at) +
                               " bytes are left in the file");
  }

  /// Skips one value of `type` (already read) at the cursor, `depth` arrays
  /// deep, for `what` (the key, quoted, for messages). Fills `entry` for the
  /// outermost value.
  Status skipValue(GgufValueType type, int depth, const std::string &what,
                   GgufEntry *entry);

  const std::string &path;
  Cursor cursor;
};
} // namespace

/// Parses a value type number.
static bool parseValueType(uint32_t number, GgufValueType &type) {
  if (number > uint32_t(GgufValueType::F64))
    return false;
  type = GgufValueType(number);
  return true;
}

Status HeaderParser::skipValue(GgufValueType type, int depth,
                               const std::string &what, GgufEntry *entry) {
  const uint64_t at = cursor.offset();
  const uint8_t *p = nullptr;
  if (entry)
    entry->type = type;
  if (uint64_t bytes = scalarSize(type)) {
    if (!cursor.take(bytes, p))
      return truncated("the " + std::string(ggufValueTypeName(type)) +
                           " value of " + what,
                       at);
    if (entry)
      entry->data = p;
    return Status::success();
  }
  if (type == GgufValueType::String) {
    std::string_view text;
    if (!cursor.string(text))
      return truncated("the string value of " + what, at);
    if (entry)
      entry->data = reinterpret_cast<const uint8_t *>(text.data()) - 8;
    return Status::success();
  }
  // An array: element type, count, elements.
  if (depth >= kMaxGgufArrayDepth)
    return fileError(path, what + ": arrays nested deeper than " +
                               std::to_string(kMaxGgufArrayDepth));
  uint32_t elementNumber;
  uint64_t count;
  if (!cursor.u32(elementNumber) || !cursor.u64(count))
    return truncated("the array header of " + what, at);
  GgufValueType element;
  if (!parseValueType(elementNumber, element))
    return fileError(path, what + ": array of unknown value type " +
                               std::to_string(elementNumber));
  if (entry) {
    entry->elementType = element;
    entry->count = count;
  }
  const uint64_t elementsAt = cursor.offset();
  // Every element takes at least one byte (a string eight, an array
  // twelve): a count beyond that is refused before anything is walked.
  uint64_t least = scalarSize(element);
  if (element == GgufValueType::String)
    least = 8;
  else if (element == GgufValueType::Array)
    least = 12;
  std::optional<int64_t> bytes =
      count > uint64_t(INT64_MAX) ? std::nullopt
                                  : checkedMul(int64_t(count), int64_t(least));
  if (!bytes || uint64_t(*bytes) > cursor.left())
    return truncated("the " + std::to_string(count) + " " +
                         ggufValueTypeName(element) + " elements of " + what,
                     elementsAt);
  const uint8_t *first = nullptr;
  if (scalarSize(element)) {
    cursor.take(uint64_t(*bytes), first);
  } else {
    cursor.take(0, first);
    for (uint64_t i = 0; i < count; ++i)
      if (Status s = skipValue(element, depth + 1, what, nullptr); !s.ok())
        return s;
  }
  if (entry)
    entry->data = first;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// GgufFile::open
//===----------------------------------------------------------------------===//

/// Returns the byte size of `count` elements of a ggml `type`, for a tensor
/// whose rows have `rowLength` elements, or a problem.
static Result<uint64_t> tensorBytes(GgmlType type, int64_t count,
                                    int64_t rowLength) {
  std::optional<int64_t> bytes;
  switch (type) {
  case GgmlType::F32:
    bytes = checkedMul(count, 4);
    break;
  case GgmlType::F16:
  case GgmlType::BF16:
    bytes = checkedMul(count, 2);
    break;
  case GgmlType::Q8_0:
    if (rowLength % kQ8_0BlockValues != 0)
      return Error{"type Q8_0 needs rows (ne[0]) of a multiple of " +
                   std::to_string(kQ8_0BlockValues) + " values, it has " +
                   std::to_string(rowLength)};
    bytes = checkedMul(count / kQ8_0BlockValues, kQ8_0BlockBytes);
    break;
  }
  if (!bytes)
    return Error{"its byte size overflows"};
  return uint64_t(*bytes);
}

Result<GgufFile> GgufFile::open(const std::string &path) {
  Result<std::shared_ptr<const MappedFile>> mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.error();
  GgufFile result;
  result.file = std::move(*mapped);
  const uint64_t size = result.file->size();
  HeaderParser parser(path, result.file->data(), size);
  Cursor &cursor = parser.cursor;

  // Magic, version, counts.
  const uint8_t *magic;
  if (!cursor.take(4, magic) || !hasGgufMagic(magic, 4))
    return fileError(path, "not a GGUF file: it does not start with the "
                           "magic \"GGUF\"");
  uint32_t version;
  uint64_t tensorCount, keyCount;
  if (!cursor.u32(version))
    return parser.truncated("the header's version", 4);
  if (version == 0 || (version & 0xFFFF) == 0)
    return fileError(path, "GGUF version " + std::to_string(version) +
                               " is not supported (only little-endian "
                               "versions 2 and 3 are; a big-endian file?)");
  if (version != 2 && version != 3)
    return fileError(path, "GGUF version " + std::to_string(version) +
                               " is not supported (versions 2 and 3 are)");
  result.formatVersion = version;
  if (!cursor.u64(tensorCount) || !cursor.u64(keyCount))
    return parser.truncated("the header's tensor and key counts", 8);
  if (tensorCount > kMaxGgufEntries)
    return fileError(
        path, "the header's tensor count " + std::to_string(tensorCount) +
                  " exceeds the limit of " + std::to_string(kMaxGgufEntries));
  if (keyCount > kMaxGgufEntries)
    return fileError(
        path, "the header's metadata key count " + std::to_string(keyCount) +
                  " exceeds the limit of " + std::to_string(kMaxGgufEntries));

  // Metadata. Each pair takes at least 13 bytes: reserve no more than the
  // file can hold.
  result.metadata.reserve(std::min<uint64_t>(keyCount, cursor.left() / 13));
  for (uint64_t i = 0; i < keyCount; ++i) {
    const uint64_t at = cursor.offset();
    GgufEntry entry;
    if (!cursor.string(entry.key))
      return parser.truncated("the name of metadata key " + std::to_string(i),
                              at);
    if (entry.key.empty())
      return fileError(path, "metadata key " + std::to_string(i) +
                                 " has an empty name");
    const std::string what = "metadata key " + quoteName(entry.key);
    uint32_t typeNumber;
    if (!cursor.u32(typeNumber))
      return parser.truncated("the value type of " + what, cursor.offset());
    GgufValueType type;
    if (!parseValueType(typeNumber, type))
      return fileError(path, what + " has unknown value type " +
                                 std::to_string(typeNumber));
    if (Status s = parser.skipValue(type, 0, what, &entry); !s.ok())
      return s.error();
    if (!result.byKey.emplace(entry.key, result.metadata.size()).second)
      return fileError(path, "duplicate " + what);
    result.metadata.push_back(entry);
  }

  // The alignment of tensor data.
  if (const GgufEntry *align = result.find("general.alignment")) {
    if (align->type != GgufValueType::U32)
      return fileError(path, "metadata key 'general.alignment' is a " +
                                 std::string(ggufValueTypeName(align->type)) +
                                 ", expected a u32");
    uint32_t value = readLE32(align->data);
    if (value == 0 || (value & (value - 1)) != 0)
      return fileError(path, "metadata key 'general.alignment' is " +
                                 std::to_string(value) +
                                 ", not a power of two");
    result.dataAlignment = value;
  } else {
    result.dataAlignment = kDefaultAlignment;
  }

  // Tensor infos: each takes at least 24 bytes.
  result.tensorList.reserve(
      std::min<uint64_t>(tensorCount, cursor.left() / 24));
  for (uint64_t i = 0; i < tensorCount; ++i) {
    const uint64_t at = cursor.offset();
    GgufTensor tensor;
    if (!cursor.string(tensor.name))
      return parser.truncated("the name of tensor " + std::to_string(i), at);
    const std::string what = "tensor " + quoteName(tensor.name);
    uint32_t dims;
    if (!cursor.u32(dims))
      return parser.truncated("the dimension count of " + what,
                              cursor.offset());
    if (dims > kMaxGgufDims)
      return fileError(path, what + " has " + std::to_string(dims) +
                                 " dimensions, at most " +
                                 std::to_string(kMaxGgufDims) + " are allowed");
    tensor.shape.assign(dims, 0);
    for (uint32_t d = 0; d < dims; ++d) {
      uint64_t ne;
      if (!cursor.u64(ne))
        return parser.truncated("the dimensions of " + what, cursor.offset());
      if (ne > uint64_t(INT64_MAX))
        return fileError(path, what + ": dimension ne[" + std::to_string(d) +
                                   "] = " + std::to_string(ne) +
                                   " is too large");
      tensor.shape[dims - 1 - d] = int64_t(ne);
    }
    uint32_t type;
    if (!cursor.u32(type) || !cursor.u64(tensor.offset))
      return parser.truncated("the type and offset of " + what,
                              cursor.offset());
    if (type != uint32_t(GgmlType::F32) && type != uint32_t(GgmlType::F16) &&
        type != uint32_t(GgmlType::BF16) && type != uint32_t(GgmlType::Q8_0))
      return fileError(
          path, what + (ggmlTypeName(type).empty()
                            ? " has unknown ggml type " + std::to_string(type)
                            : " has type " + ggmlTypeName(type) +
                                  ", which tra does not read (it reads F32, "
                                  "F16, BF16 and Q8_0)"));
    tensor.type = GgmlType(type);
    std::optional<int64_t> count = shapeElementCount(tensor.shape);
    if (!count)
      return fileError(path, what + " of shape " + formatShape(tensor.shape) +
                                 " has too many elements");
    Result<uint64_t> bytes = tensorBytes(
        tensor.type, *count, dims ? tensor.shape.back() : int64_t(1));
    if (!bytes)
      return fileError(path, what + " of shape " + formatShape(tensor.shape) +
                                 ": " + bytes.message());
    tensor.bytes = *bytes;
    if (tensor.offset % result.dataAlignment != 0)
      return fileError(path, what + ": offset " +
                                 std::to_string(tensor.offset) +
                                 " is not a multiple of the alignment " +
                                 std::to_string(result.dataAlignment));
    if (!result.byName.emplace(tensor.name, result.tensorList.size()).second)
      return fileError(path, "duplicate " + what);
    result.tensorList.push_back(std::move(tensor));
  }

  // The data section starts at the next multiple of the alignment.
  const uint64_t headerEnd = cursor.offset();
  const uint64_t padding =
      (result.dataAlignment - headerEnd % result.dataAlignment) %
      result.dataAlignment;
  if (padding > size - headerEnd) {
    if (!result.tensorList.empty())
      return fileError(path, "truncated: the data section would start at "
                             "offset " +
                                 std::to_string(headerEnd + padding) +
                                 ", past the end of the file (" +
                                 std::to_string(size) + " bytes)");
    result.dataStart = size;
  } else {
    result.dataStart = headerEnd + padding;
  }
  const uint64_t dataSize = size - result.dataStart;

  // Every tensor inside the data section, none overlapping another.
  std::vector<GgufTensor *> order;
  order.reserve(result.tensorList.size());
  for (GgufTensor &tensor : result.tensorList) {
    if (tensor.offset > dataSize || tensor.bytes > dataSize - tensor.offset)
      return fileError(
          path, "tensor " + quoteName(tensor.name) + ": its " +
                    std::to_string(tensor.bytes) + " bytes at offset " +
                    std::to_string(tensor.offset) +
                    " run past the end of the data section (" +
                    std::to_string(dataSize) + " bytes; a truncated file?)");
    if (tensor.bytes)
      order.push_back(&tensor);
  }
  std::sort(order.begin(), order.end(),
            [](const GgufTensor *a, const GgufTensor *b) {
              return a->offset != b->offset ? a->offset < b->offset : a < b;
            });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset)
      return fileError(path, "tensors " + quoteName(order[i - 1]->name) +
                                 " and " + quoteName(order[i]->name) +
                                 " overlap in the data section");
  for (GgufTensor &tensor : result.tensorList)
    tensor.offset += result.dataStart;
  return result;
}

//===----------------------------------------------------------------------===//
// Metadata
//===----------------------------------------------------------------------===//

const GgufEntry *GgufFile::find(std::string_view key) const {
  auto it = byKey.find(key);
  return it == byKey.end() ? nullptr : &metadata[it->second];
}

Result<const GgufEntry *> GgufFile::entry(std::string_view key) const {
  if (const GgufEntry *found = find(key))
    return found;
  return fileError(path(), "metadata key " + quoteName(key) + " is missing");
}

/// "metadata key 'K' has type T, expected E".
static Error wrongType(const std::string &path, const GgufEntry &entry,
                       const char *expected) {
  std::string actual = ggufValueTypeName(entry.type);
  if (entry.type == GgufValueType::Array)
    actual += std::string(" of ") + ggufValueTypeName(entry.elementType);
  return fileError(path, "metadata key " + quoteName(entry.key) + " has type " +
                             actual + ", expected " + expected);
}

Result<std::string_view> GgufFile::getString(std::string_view key) const {
  Result<const GgufEntry *> e = entry(key);
  if (!e)
    return e.error();
  if ((*e)->type != GgufValueType::String)
    return wrongType(path(), **e, "string");
  const uint8_t *p = (*e)->data;
  return std::string_view(reinterpret_cast<const char *>(p + 8), readLE64(p));
}

Result<uint64_t> GgufFile::getUnsigned(std::string_view key) const {
  Result<const GgufEntry *> e = entry(key);
  if (!e)
    return e.error();
  const GgufValueType type = (*e)->type;
  if (!isInteger(type))
    return wrongType(path(), **e, "an integer");
  if (type == GgufValueType::U64)
    return readLE64((*e)->data);
  int64_t value = loadInteger(type, (*e)->data);
  if (value < 0)
    return fileError(path(), "metadata key " + quoteName(key) + " is " +
                                 std::to_string(value) + ", negative");
  return uint64_t(value);
}

Result<double> GgufFile::getFloat(std::string_view key) const {
  Result<const GgufEntry *> e = entry(key);
  if (!e)
    return e.error();
  const uint8_t *p = (*e)->data;
  if ((*e)->type == GgufValueType::F32) {
    uint32_t bits = readLE32(p);
    float value;
    std::memcpy(&value, &bits, 4);
    return double(value);
  }
  if ((*e)->type == GgufValueType::F64) {
    uint64_t bits = readLE64(p);
    double value;
    std::memcpy(&value, &bits, 8);
    return value;
  }
  return wrongType(path(), **e, "f32 or f64");
}

Result<const GgufEntry *> GgufFile::array(std::string_view key,
                                          bool (*element)(GgufValueType),
                                          const char *expected) const {
  Result<const GgufEntry *> e = entry(key);
  if (!e)
    return e.error();
  if ((*e)->type != GgufValueType::Array || !element((*e)->elementType))
    return wrongType(path(), **e, expected);
  return e;
}

Result<std::vector<std::string_view>>
GgufFile::getStringArray(std::string_view key) const {
  Result<const GgufEntry *> e = array(
      key, [](GgufValueType t) { return t == GgufValueType::String; },
      "array of string");
  if (!e)
    return e.error();
  // Validated at open: every string lies inside the file.
  std::vector<std::string_view> values;
  values.reserve((*e)->count);
  const uint8_t *p = (*e)->data;
  for (uint64_t i = 0; i < (*e)->count; ++i) {
    uint64_t length = readLE64(p);
    values.emplace_back(reinterpret_cast<const char *>(p + 8), length);
    p += 8 + length;
  }
  return values;
}

Result<std::vector<float>> GgufFile::getF32Array(std::string_view key) const {
  Result<const GgufEntry *> e = array(
      key, [](GgufValueType t) { return t == GgufValueType::F32; },
      "array of f32");
  if (!e)
    return e.error();
  std::vector<float> values((*e)->count);
  if (!values.empty())
    std::memcpy(values.data(), (*e)->data, values.size() * 4);
  return values;
}

Result<std::vector<int64_t>> GgufFile::getIntArray(std::string_view key) const {
  Result<const GgufEntry *> e = array(key, isInteger, "array of integers");
  if (!e)
    return e.error();
  const GgufValueType element = (*e)->elementType;
  const uint64_t stride = scalarSize(element);
  std::vector<int64_t> values((*e)->count);
  for (uint64_t i = 0; i < values.size(); ++i) {
    values[i] = loadInteger(element, (*e)->data + i * stride);
    if (element == GgufValueType::U64 && values[i] < 0)
      return fileError(path(), "metadata key " + quoteName(key) + ": element " +
                                   std::to_string(i) + " is too large");
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

const GgufTensor *GgufFile::findTensor(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &tensorList[it->second];
}

/// Dequantises columns [begin, begin + n) of the Q8_0 row at `row` into
/// `out`, reading only the blocks that hold them.
static void dequantiseQ8_0(const uint8_t *row, int64_t begin, int64_t n,
                           float *out) {
  int64_t column = begin;
  const int64_t end = begin + n;
  while (column < end) {
    const int64_t block = column / kQ8_0BlockValues;
    const uint8_t *b = row + block * kQ8_0BlockBytes;
    const float scale = halfToFloat(readLE16(b));
    const int64_t blockEnd = std::min(end, (block + 1) * kQ8_0BlockValues);
    for (; column < blockEnd; ++column)
      *out++ = scale * float(int8_t(b[2 + column % kQ8_0BlockValues]));
  }
}

Result<HostTensor> GgufFile::readTile(const GgufTensor &tensor,
                                      const std::vector<int64_t> &offsets,
                                      const std::vector<int64_t> &sizes) const {
  Status problem = checkTile(tensor.shape, offsets, sizes);
  if (!problem.ok())
    return fileError(path(), "tensor " + quoteName(tensor.name) + ": " +
                                 problem.message());
  HostTensor tile = HostTensor::zeros(tensor.dtype(), sizes);
  const uint8_t *data = file->data() + tensor.offset;
  // A tile narrower than the tensor is read in strided runs; keep the kernel
  // from reading ahead into the bytes between them.
  const bool strided =
      tile.numElements() > 0 &&
      tile.numElements() < shapeElementCount(tensor.shape).value_or(0);
  if (strided)
    file->adviseAccess(tensor.offset, tensor.bytes, /*random=*/true);
  if (tensor.type != GgmlType::Q8_0) {
    copyTile(tile.dtype(), tensor.shape, data, offsets, sizes,
             tile.mutableData());
  } else if (tile.numElements() > 0) {
    // Row by row: the tile's rows are runs of the tensor's rows (ne[0]).
    const size_t rank = tensor.shape.size();
    const int64_t rowLength = tensor.shape.back();
    const int64_t rowBytes = rowLength / kQ8_0BlockValues * kQ8_0BlockBytes;
    const int64_t n = sizes.back();
    const int64_t rows = tile.numElements() / n;
    std::vector<int64_t> index(rank, 0); // Within the tile, last dim unused.
    float *out = reinterpret_cast<float *>(tile.mutableData());
    for (int64_t r = 0; r < rows; ++r) {
      int64_t row = 0;
      for (size_t d = 0; d + 1 < rank; ++d)
        row = row * tensor.shape[d] + offsets[d] + index[d];
      dequantiseQ8_0(data + row * rowBytes, offsets.back(), n, out + r * n);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
  }
  if (strided)
    file->adviseAccess(tensor.offset, tensor.bytes, /*random=*/false);
  return tile;
}

Result<HostTensor> GgufFile::read(const GgufTensor &tensor) const {
  if (tensor.type == GgmlType::Q8_0)
    return readTile(tensor, std::vector<int64_t>(tensor.shape.size(), 0),
                    tensor.shape);
  return HostTensor::view(tensor.dtype(), tensor.shape,
                          file->data() + tensor.offset, file);
}

Result<std::pair<HostTensor, HostTensor>>
GgufFile::readQ8_0(const GgufTensor &tensor) const {
  if (tensor.type != GgmlType::Q8_0)
    return fileError(path(), "tensor " + quoteName(tensor.name) + " is " +
                                 ggmlTypeName(uint32_t(tensor.type)) +
                                 ", not Q8_0");
  std::vector<int64_t> scaleShape = tensor.shape;
  scaleShape.back() /= kQ8_0BlockValues;
  HostTensor values = HostTensor::zeros(DType::I8, tensor.shape);
  HostTensor scales = HostTensor::zeros(DType::F16, scaleShape);
  // open() checked that the blocks lie inside the file.
  const uint8_t *block = file->data() + tensor.offset;
  auto *v = static_cast<uint8_t *>(values.mutableData());
  auto *s = static_cast<uint8_t *>(scales.mutableData());
  for (int64_t b = 0, n = scales.numElements(); b < n; ++b) {
    const uint16_t scale = readLE16(block);
    std::memcpy(s + 2 * b, &scale, 2);
    std::memcpy(v + b * kQ8_0BlockValues, block + 2, kQ8_0BlockValues);
    block += kQ8_0BlockBytes;
  }
  // The copy holds them now: the file's pages need not stay resident too.
  file->releasePages(tensor.offset, tensor.bytes);
  return std::make_pair(std::move(values), std::move(scales));
}

bool tra::rt::hasGgufMagic(const uint8_t *data, size_t size) {
  return size >= 4 && std::memcmp(data, kMagic, 4) == 0;
}

bool tra::rt::isGgufFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  uint8_t magic[4] = {};
  bool match = std::fread(magic, 1, 4, f) == 4 && hasGgufMagic(magic, 4);
  std::fclose(f);
  return match;
}
