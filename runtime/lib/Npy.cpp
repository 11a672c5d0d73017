//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format reference: numpy/lib/format.py. A file is the magic "\x93NUMPY", a
// major and minor version byte, a little-endian header length (2 bytes in
// version 1.0, 4 bytes in 2.0 and 3.0), the header -- a Python dict literal
// with keys 'descr', 'fortran_order' and 'shape', padded with spaces and a
// newline -- and the raw array data.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/File.h"

#include <algorithm>
#include <cctype>
#include <cstring>

using namespace tra::rt;

static const char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

std::optional<std::string> tra::rt::npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return std::string("<f4");
  case DType::F16:
    return std::string("<f2");
  case DType::F64:
    return std::string("<f8");
  case DType::I64:
    return std::string("<i8");
  case DType::I32:
    return std::string("<i4");
  case DType::I16:
    return std::string("<i2");
  case DType::I8:
    return std::string("|i1");
  case DType::U8:
    return std::string("|u1");
  case DType::Bool:
    return std::string("|b1");
  case DType::BF16:
    return std::nullopt;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Header dict parsing
//===----------------------------------------------------------------------===//

namespace {
/// A value in the header dict: a string, a boolean, a tuple of integers, or
/// a list (only meaningful as a structured-dtype descr, which is rejected).
struct DictValue {
  enum class Kind { String, Bool, Tuple, List } kind = Kind::String;
  std::string text;
  bool flag = false;
  std::vector<int64_t> items;
};

/// Parses the restricted Python literal NumPy writes as the header.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Parses the dict into `descr`, `fortranOrder`, `shape`; fails with the
  /// problem.
  Status parse(DictValue &descr, bool &fortranOrder,
               std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return Error{"expected '{' at the start of the header"};
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return Error{problem.empty() ? "expected a quoted key" : problem};
      if (key != "descr" && key != "fortran_order" && key != "shape")
        return Error{"unexpected key '" + key + "'"};
      skipSpace();
      if (!consume(':'))
        return Error{"expected ':' after key '" + key + "'"};
      skipSpace();
      DictValue value;
      if (!parseValue(value))
        return Error{problem.empty() ? "invalid value for key '" + key + "'"
                                     : problem};
      if (key == "descr") {
        if (haveDescr)
          return Error{"duplicate key 'descr'"};
        haveDescr = true;
        if (value.kind != DictValue::Kind::String &&
            value.kind != DictValue::Kind::List)
          return Error{"'descr' must be a string"};
        descr = value;
      } else if (key == "fortran_order") {
        if (haveOrder)
          return Error{"duplicate key 'fortran_order'"};
        haveOrder = true;
        if (value.kind != DictValue::Kind::Bool)
          return Error{"'fortran_order' must be True or False"};
        fortranOrder = value.flag;
      } else if (key == "shape") {
        if (haveShape)
          return Error{"duplicate key 'shape'"};
        haveShape = true;
        if (value.kind != DictValue::Kind::Tuple)
          return Error{"'shape' must be a tuple of integers"};
        shape = value.items;
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return Error{"expected ',' or '}' after the value of '" + key + "'"};
    }
    skipSpace();
    if (pos != text.size())
      return Error{"unexpected text after the header dict"};
    if (!haveDescr)
      return Error{"missing key 'descr'"};
    if (!haveOrder)
      return Error{"missing key 'fortran_order'"};
    if (!haveShape)
      return Error{"missing key 'shape'"};
    return Status::success();
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    size_t end = pos + word.size();
    if (end < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[end])) ||
         text[end] == '_'))
      return false;
    pos = end;
    return true;
  }

  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t start = pos;
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\\' || text[pos] == '\n') {
        problem = "unsupported character in a string";
        return false;
      }
      ++pos;
    }
    if (pos >= text.size()) {
      problem = "unterminated string";
      return false;
    }
    out = std::string(text.substr(start, pos - start));
    ++pos;
    return true;
  }

  bool parseInteger(int64_t &out) {
    size_t start = pos;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      std::optional<int64_t> next = checkedMul(value, 10);
      if (next)
        next = checkedAdd(*next, text[pos] - '0');
      if (!next) {
        problem = "shape dimension too large";
        return false;
      }
      value = *next;
      ++pos;
    }
    if (pos == start) {
      problem = "expected a non-negative integer in 'shape'";
      return false;
    }
    consume('L'); // Python 2 long suffix, as in old files.
    out = value;
    return true;
  }

  bool parseValue(DictValue &value) {
    if (pos >= text.size())
      return false;
    char c = text[pos];
    if (c == '\'' || c == '"') {
      value.kind = DictValue::Kind::String;
      return parseString(value.text);
    }
    if (consumeWord("True")) {
      value.kind = DictValue::Kind::Bool;
      value.flag = true;
      return true;
    }
    if (consumeWord("False")) {
      value.kind = DictValue::Kind::Bool;
      value.flag = false;
      return true;
    }
    if (c == '[') {
      // A structured dtype: skip the (possibly nested) list.
      value.kind = DictValue::Kind::List;
      int depth = 0;
      for (; pos < text.size(); ++pos) {
        if (text[pos] == '[' || text[pos] == '(')
          ++depth;
        else if ((text[pos] == ']' || text[pos] == ')') && --depth == 0) {
          ++pos;
          return true;
        }
      }
      problem = "unterminated list";
      return false;
    }
    if (c == '(') {
      // A tuple: "()", "(3,)", "(2, 3)" or "(2, 3,)". "(3)" is an int.
      ++pos;
      value.kind = DictValue::Kind::Tuple;
      skipSpace();
      if (consume(')'))
        return true;
      while (true) {
        skipSpace();
        int64_t item;
        if (!parseInteger(item))
          return false;
        value.items.push_back(item);
        skipSpace();
        bool comma = consume(',');
        skipSpace();
        if (consume(')')) {
          if (value.items.size() == 1 && !comma) {
            problem = "'shape' must be a tuple, not a parenthesized integer "
                      "(write (N,))";
            return false;
          }
          return true;
        }
        if (!comma) {
          problem = "expected ',' or ')' in 'shape'";
          return false;
        }
      }
    }
    return false;
  }

  std::string_view text;
  size_t pos = 0;

public:
  std::string problem;
};
} // namespace

/// Maps an .npy descr to a dtype. Fails with the problem.
static Status parseDescr(const std::string &descr, DType &dtype) {
  static const char *const supported =
      "supported: <f4 <f2 <f8 <i8 <i4 <i2 |i1 |u1 |b1";
  if (descr.size() < 3)
    return Error{"unsupported dtype '" + descr + "' (" + supported + ")"};
  char order = descr[0];
  std::string code = descr.substr(1);
  struct Entry {
    const char *code;
    DType dtype;
  };
  static const Entry entries[] = {
      {"f4", DType::F32}, {"f2", DType::F16}, {"f8", DType::F64},
      {"i8", DType::I64}, {"i4", DType::I32}, {"i2", DType::I16},
      {"i1", DType::I8},  {"u1", DType::U8},  {"b1", DType::Bool},
  };
  const Entry *found = nullptr;
  for (const Entry &entry : entries)
    if (code == entry.code)
      found = &entry;
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return Error{"unsupported dtype '" + descr + "' (" + supported + ")"};
  if (!found)
    return Error{"unsupported dtype '" + descr + "' (" + supported + ")"};
  if (dtypeSize(found->dtype) > 1) {
    if (order == '>')
      return Error{"big-endian dtype '" + descr +
                   "' is not supported; save the array with dtype '<" + code +
                   "'"};
    if (order == '|')
      return Error{"unsupported dtype '" + descr + "' (" + supported + ")"};
  }
  dtype = found->dtype;
  return Status::success();
}

/// Returns a printable excerpt of the header for error messages.
static std::string quoteHeader(std::string_view header) {
  while (!header.empty() && (header.back() == ' ' || header.back() == '\n'))
    header.remove_suffix(1);
  std::string out;
  for (char c : header.substr(0, 200)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  if (header.size() > 200)
    out += "...";
  return out;
}

Result<NpyHeader> tra::rt::parseNpy(const uint8_t *data, size_t size,
                                    const std::string &path) {
  if (size == 0)
    return fileError(path, "not a .npy file (the file is empty)");
  if (std::memcmp(data, kMagic, std::min(size, kMagicSize)) != 0)
    return fileError(path, "not a .npy file (bad magic bytes)");
  if (size < kMagicSize + 2)
    return fileError(path, "truncated header: the file is only " +
                               std::to_string(size) + " bytes");
  NpyHeader header;
  header.majorVersion = data[6];
  header.minorVersion = data[7];
  if (header.majorVersion < 1 || header.majorVersion > 3 ||
      header.minorVersion != 0)
    return fileError(path, "unsupported .npy format version " +
                               std::to_string(header.majorVersion) + "." +
                               std::to_string(header.minorVersion));
  size_t lengthBytes = header.majorVersion == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthBytes;
  if (size < prefix)
    return fileError(path, "truncated header: the file is only " +
                               std::to_string(size) + " bytes");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<size_t>(data[8 + i]) << (8 * i);
  if (headerLength > size - prefix)
    return fileError(path, "truncated header: the header length is " +
                               std::to_string(headerLength) +
                               " bytes but only " +
                               std::to_string(size - prefix) + " follow");
  header.dataOffset = prefix + headerLength;

  std::string_view text(reinterpret_cast<const char *>(data + prefix),
                        headerLength);
  DictValue descr;
  bool fortranOrder = false;
  HeaderParser parser(text);
  Status problem = parser.parse(descr, fortranOrder, header.shape);
  if (!problem.ok())
    return fileError(path, "malformed .npy header: " + problem.message() +
                               " in \"" + quoteHeader(text) + "\"");
  if (descr.kind == DictValue::Kind::List)
    return fileError(path, "unsupported dtype: structured arrays are not "
                           "supported");
  header.descr = descr.text;
  problem = parseDescr(header.descr, header.dtype);
  if (!problem.ok())
    return fileError(path, problem.message());

  std::optional<int64_t> byteSize = shapeByteSize(header.dtype, header.shape);
  if (!byteSize)
    return fileError(path,
                     "shape " + formatShape(header.shape) + " is too large");
  if (fortranOrder) {
    // Fortran and C order agree when at most one dimension exceeds 1.
    int nonUnit = 0;
    for (int64_t dim : header.shape)
      nonUnit += dim > 1;
    if (nonUnit > 1 && *byteSize > 0)
      return fileError(path, "Fortran-order (column-major) arrays are not "
                             "supported; save a C-order array "
                             "(numpy.ascontiguousarray)");
  }
  size_t available = size - header.dataOffset;
  if (static_cast<uint64_t>(*byteSize) > available)
    return fileError(
        path, "truncated data: shape " + formatShape(header.shape) + " of '" +
                  header.descr + "' needs " + std::to_string(*byteSize) +
                  " bytes after the header, but the file has " +
                  std::to_string(available));
  return header;
}

Result<NpyHeader> tra::rt::readNpyHeader(const std::string &path) {
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  return parseNpy((*file)->data(), (*file)->size(), path);
}

Result<HostTensor> tra::rt::readNpy(const std::string &path,
                                    const NpyReadOptions &options) {
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  std::shared_ptr<const MappedFile> mapped = std::move(*file);
  Result<NpyHeader> header = parseNpy(mapped->data(), mapped->size(), path);
  if (!header)
    return header.error();
  const uint8_t *bytes = mapped->data() + header->dataOffset;
  if (options.memoryMap)
    return HostTensor::view(header->dtype, header->shape, bytes,
                            std::move(mapped));
  return HostTensor::copyOf(header->dtype, header->shape, bytes);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Returns the magic, version, length and padded header for an array of
/// `dtype` (not BF16) and `shape`.
static std::string encodeNpyHeader(DType dtype,
                                   const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '" + npyDescr(dtype).value_or("<f4") +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    dict += ",";
  dict += "), }";

  // Pad with spaces and a final newline so the data starts at a multiple of
  // 64 bytes.
  auto build = [&](int major, size_t lengthBytes) {
    size_t prefix = kMagicSize + 2 + lengthBytes;
    size_t unpadded = prefix + dict.size() + 1;
    size_t total = (unpadded + 63) / 64 * 64;
    size_t headerLength = total - prefix;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < lengthBytes; ++i)
      out += static_cast<char>((headerLength >> (8 * i)) & 0xff);
    out += dict;
    out.append(total - out.size() - 1, ' ');
    out += '\n';
    return std::make_pair(out, headerLength);
  };
  auto [v1, v1Length] = build(1, 2);
  if (v1Length <= 0xffff)
    return v1;
  return build(2, 4).first;
}

std::string tra::rt::encodeNpy(const HostTensor &tensor) {
  if (tensor.dtype() == DType::BF16)
    return encodeNpy(convert(tensor, DType::F32));
  std::string out = encodeNpyHeader(tensor.dtype(), tensor.shape());
  out.append(reinterpret_cast<const char *>(tensor.data()), tensor.byteSize());
  return out;
}

Result<AtomicFileWriter> tra::rt::prepareNpy(const std::string &path,
                                             const HostTensor &tensor) {
  if (tensor.dtype() == DType::BF16)
    return prepareNpy(path, convert(tensor, DType::F32));
  Result<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.error();
  std::string header = encodeNpyHeader(tensor.dtype(), tensor.shape());
  if (Status s = writer->write(header.data(), header.size()); !s)
    return s.error();
  if (Status s = writer->write(tensor.data(), tensor.byteSize()); !s)
    return s.error();
  return writer;
}

Status tra::rt::writeNpy(const std::string &path, const HostTensor &tensor) {
  Result<AtomicFileWriter> writer = prepareNpy(path, tensor);
  if (!writer)
    return writer.error();
  return writer->commit();
}
