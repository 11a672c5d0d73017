//===- Json.cpp - A small strict JSON parser and writer -------------------===//

#include "tra/Runtime/Json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>

using namespace tra::rt;

//===----------------------------------------------------------------------===//
// JsonValue
//===----------------------------------------------------------------------===//

JsonValue JsonValue::array(Array elements) {
  JsonValue value;
  value.valueKind = Kind::Array;
  value.arrayValue = std::move(elements);
  return value;
}

JsonValue JsonValue::object(Object members) {
  JsonValue value;
  value.valueKind = Kind::Object;
  value.objectValue = std::move(members);
  return value;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  if (valueKind != Kind::Object)
    return nullptr;
  for (const Member &member : objectValue)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

void JsonValue::set(std::string key, JsonValue value) {
  for (Member &member : objectValue) {
    if (member.first == key) {
      member.second = std::move(value);
      return;
    }
  }
  objectValue.emplace_back(std::move(key), std::move(value));
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

bool JsonValue::operator==(const JsonValue &other) const {
  if (valueKind != other.valueKind)
    return false;
  switch (valueKind) {
  case Kind::Null:
    return true;
  case Kind::Bool:
    return boolValue == other.boolValue;
  case Kind::Number:
    if (integral && other.integral)
      return intValue == other.intValue;
    return numberValue == other.numberValue;
  case Kind::String:
    return stringValue == other.stringValue;
  case Kind::Array:
    return arrayValue == other.arrayValue;
  case Kind::Object:
    return objectValue == other.objectValue;
  }
  return false;
}

void tra::rt::appendJsonString(std::string &out, std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (u < 0x20) {
        out += "\\u00";
        out += hex[u >> 4];
        out += hex[u & 15];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

static void appendNewline(std::string &out, int indent, int depth) {
  out += '\n';
  out.append(static_cast<size_t>(indent) * depth, ' ');
}

void JsonValue::serializeTo(std::string &out, int indent, int depth) const {
  switch (valueKind) {
  case Kind::Null:
    out += "null";
    return;
  case Kind::Bool:
    out += boolValue ? "true" : "false";
    return;
  case Kind::Number: {
    if (integral) {
      out += std::to_string(intValue);
      return;
    }
    if (!std::isfinite(numberValue)) {
      out += "null";
      return;
    }
    char buffer[64];
    std::to_chars_result r =
        std::to_chars(buffer, buffer + sizeof(buffer), numberValue);
    out.append(buffer, r.ptr);
    // "-0" would read back as the integer 0: keep negative zero a double.
    if (numberValue == 0 && std::signbit(numberValue))
      out += ".0";
    return;
  }
  case Kind::String:
    appendJsonString(out, stringValue);
    return;
  case Kind::Array:
    out += '[';
    for (size_t i = 0; i < arrayValue.size(); ++i) {
      if (i)
        out += ',';
      if (indent)
        appendNewline(out, indent, depth + 1);
      arrayValue[i].serializeTo(out, indent, depth + 1);
    }
    if (indent && !arrayValue.empty())
      appendNewline(out, indent, depth);
    out += ']';
    return;
  case Kind::Object:
    out += '{';
    for (size_t i = 0; i < objectValue.size(); ++i) {
      if (i)
        out += ',';
      if (indent)
        appendNewline(out, indent, depth + 1);
      appendJsonString(out, objectValue[i].first);
      out += indent ? ": " : ":";
      objectValue[i].second.serializeTo(out, indent, depth + 1);
    }
    if (indent && !objectValue.empty())
      appendNewline(out, indent, depth);
    out += '}';
    return;
  }
}

std::string JsonValue::serialize(int indent) const {
  std::string out;
  serializeTo(out, indent, 0);
  return out;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
constexpr int kMaxDepth = 512;

class Parser {
public:
  Parser(std::string_view text) : text(text) {}

  /// Parses the whole text; on failure `problem` and `errorPos` are set.
  bool parseDocument(JsonValue &out) {
    skipWhitespace();
    if (!parseValue(out, 0))
      return false;
    skipWhitespace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

  std::string problem;
  size_t errorPos = 0;

private:
  bool fail(std::string message) {
    problem = std::move(message);
    errorPos = pos;
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  void skipWhitespace() {
    while (!atEnd() && (text[pos] == ' ' || text[pos] == '\t' ||
                        text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool parseValue(JsonValue &out, int depth) {
    if (atEnd())
      return fail("unexpected end of input, expected a value");
    char c = text[pos];
    switch (c) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"': {
      std::string s;
      if (!parseString(s))
        return false;
      out = JsonValue(std::move(s));
      return true;
    }
    case 't':
      return parseLiteral("true", JsonValue(true), out);
    case 'f':
      return parseLiteral("false", JsonValue(false), out);
    case 'n':
      return parseLiteral("null", JsonValue(), out);
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail(std::string("unexpected character '") + describe(c) + "'");
    }
  }

  static std::string describe(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", u);
      return buffer;
    }
    return std::string(1, c);
  }

  bool parseLiteral(std::string_view word, JsonValue value, JsonValue &out) {
    if (text.substr(pos, word.size()) != word)
      return fail("invalid literal, expected '" + std::string(word) + "'");
    pos += word.size();
    out = std::move(value);
    return true;
  }

  bool parseNumber(JsonValue &out) {
    size_t start = pos;
    bool isIntegral = true;
    if (peek() == '-')
      ++pos;
    if (peek() == '0') {
      ++pos;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    } else {
      return fail("invalid number: expected a digit");
    }
    if (peek() == '.') {
      isIntegral = false;
      ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("invalid number: expected a digit after '.'");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      isIntegral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("invalid number: expected a digit in the exponent");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    const char *first = text.data() + start;
    const char *last = text.data() + pos;
    if (isIntegral) {
      int64_t value;
      std::from_chars_result r = std::from_chars(first, last, value);
      if (r.ec == std::errc() && r.ptr == last) {
        out = JsonValue(value);
        return true;
      }
      // Too large for int64_t: fall through to a double.
    }
    double value;
    std::from_chars_result r = std::from_chars(first, last, value);
    if (r.ec == std::errc::result_out_of_range || !std::isfinite(value)) {
      pos = start;
      return fail("number out of range");
    }
    if (r.ec != std::errc() || r.ptr != last) {
      pos = start;
      return fail("invalid number");
    }
    out = JsonValue(value);
    return true;
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(uint32_t &code) {
    code = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = atEnd() ? -1 : hexDigit(text[pos]);
      if (digit < 0)
        return fail("invalid \\u escape: expected 4 hex digits");
      code = code * 16 + static_cast<uint32_t>(digit);
      ++pos;
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  /// Validates one UTF-8 sequence starting at `pos` and appends it.
  bool copyUtf8Sequence(std::string &out) {
    unsigned char lead = static_cast<unsigned char>(text[pos]);
    int length;
    uint32_t code, min;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2, code = lead & 0x1f, min = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3, code = lead & 0x0f, min = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4, code = lead & 0x07, min = 0x10000;
    } else {
      return fail("invalid UTF-8 in string");
    }
    if (pos + length > text.size())
      return fail("invalid UTF-8 in string");
    for (int i = 1; i < length; ++i) {
      unsigned char next = static_cast<unsigned char>(text[pos + i]);
      if ((next & 0xc0) != 0x80)
        return fail("invalid UTF-8 in string");
      code = (code << 6) | (next & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      return fail("invalid UTF-8 in string");
    out.append(text.substr(pos, length));
    pos += length;
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // Opening quote.
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = text[pos];
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos;
        return true;
      }
      if (u < 0x20)
        return fail("control character in string");
      if (u >= 0x80) {
        if (!copyUtf8Sequence(out))
          return false;
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        return fail("unterminated string");
      char escape = text[pos++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xdc00 && code <= 0xdfff)
          return fail("invalid \\u escape: unpaired low surrogate");
        if (code >= 0xd800 && code <= 0xdbff) {
          if (text.substr(pos, 2) != "\\u")
            return fail("invalid \\u escape: unpaired high surrogate");
          pos += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xdc00 || low > 0xdfff)
            return fail("invalid \\u escape: unpaired high surrogate");
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        }
        appendUtf8(out, code);
        break;
      }
      default:
        --pos;
        return fail("invalid escape '\\" + describe(escape) + "'");
      }
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    if (depth >= kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    ++pos; // '['
    JsonValue::Array elements;
    skipWhitespace();
    if (peek() == ']') {
      ++pos;
      out = JsonValue::array(std::move(elements));
      return true;
    }
    while (true) {
      skipWhitespace();
      JsonValue element;
      if (!parseValue(element, depth + 1))
        return false;
      elements.push_back(std::move(element));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == ']') {
        ++pos;
        out = JsonValue::array(std::move(elements));
        return true;
      }
      return atEnd() ? fail("unexpected end of input in array")
                     : fail("expected ',' or ']' in array");
    }
  }

  bool parseObject(JsonValue &out, int depth) {
    if (depth >= kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    ++pos; // '{'
    JsonValue result = JsonValue::object();
    JsonValue::Object &members = result.getObject();
    std::unordered_set<std::string> keys;
    skipWhitespace();
    if (peek() == '}') {
      ++pos;
      out = std::move(result);
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        return atEnd() ? fail("unexpected end of input in object")
                       : fail("expected a string key in object");
      size_t keyPos = pos;
      std::string key;
      if (!parseString(key))
        return false;
      if (!keys.insert(key).second) {
        pos = keyPos;
        std::string quoted;
        appendJsonString(quoted, key);
        return fail("duplicate key " + quoted);
      }
      skipWhitespace();
      if (peek() != ':')
        return fail("expected ':' after object key");
      ++pos;
      skipWhitespace();
      JsonValue value;
      if (!parseValue(value, depth + 1))
        return false;
      members.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == '}') {
        ++pos;
        out = std::move(result);
        return true;
      }
      return atEnd() ? fail("unexpected end of input in object")
                     : fail("expected ',' or '}' in object");
    }
  }

  std::string_view text;
  size_t pos = 0;
};
} // namespace

Result<JsonValue> tra::rt::parseJson(std::string_view text,
                                     std::string_view source) {
  Parser parser(text);
  JsonValue value;
  if (parser.parseDocument(value))
    return value;
  size_t line = 1, column = 1;
  for (size_t i = 0; i < parser.errorPos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fileError(source, "invalid JSON at line " + std::to_string(line) +
                               ", column " + std::to_string(column) + ": " +
                               parser.problem);
}
