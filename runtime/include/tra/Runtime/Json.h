//===- Json.h - A small strict JSON parser and writer -----------*- C++ -*-===//
//
// The runtime cannot use LLVM's JSON support, so it carries its own. The
// parser accepts exactly RFC 8259 JSON: no comments, no trailing commas, no
// NaN/Infinity, no control characters or invalid UTF-8 in strings, no
// duplicate object keys, nesting at most 512 deep. Object members keep their
// order. Integers written without fraction or exponent that fit in int64_t
// are kept exactly.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_JSON_H
#define TRA_RUNTIME_JSON_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tra::rt {

/// A JSON value: null, boolean, number, string, array or object.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<JsonValue>;
  using Member = std::pair<std::string, JsonValue>;
  using Object = std::vector<Member>;

  /// Constructs null.
  JsonValue() = default;
  JsonValue(std::nullptr_t) {}
  JsonValue(bool value) : valueKind(Kind::Bool), boolValue(value) {}
  /// Constructs an exact integer number.
  template <class T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  JsonValue(T value)
      : valueKind(Kind::Number), integral(true),
        intValue(static_cast<int64_t>(value)),
        numberValue(static_cast<double>(value)) {}
  JsonValue(double value) : valueKind(Kind::Number), numberValue(value) {}
  JsonValue(std::string value)
      : valueKind(Kind::String), stringValue(std::move(value)) {}
  JsonValue(std::string_view value)
      : valueKind(Kind::String), stringValue(value) {}
  JsonValue(const char *value) : valueKind(Kind::String), stringValue(value) {}

  /// Returns an array value.
  static JsonValue array(Array elements = {});
  /// Returns an object value; the keys must be distinct.
  static JsonValue object(Object members = {});

  Kind kind() const { return valueKind; }
  bool isNull() const { return valueKind == Kind::Null; }
  bool isBool() const { return valueKind == Kind::Bool; }
  bool isNumber() const { return valueKind == Kind::Number; }
  /// Returns true for a number held exactly as an int64_t.
  bool isInteger() const { return valueKind == Kind::Number && integral; }
  bool isString() const { return valueKind == Kind::String; }
  bool isArray() const { return valueKind == Kind::Array; }
  bool isObject() const { return valueKind == Kind::Object; }

  /// Accessors; each must only be called on a value of the matching kind.
  bool getBool() const { return boolValue; }
  double getNumber() const { return numberValue; }
  int64_t getInteger() const { return intValue; }
  const std::string &getString() const { return stringValue; }
  const Array &getArray() const { return arrayValue; }
  Array &getArray() { return arrayValue; }
  const Object &getObject() const { return objectValue; }
  Object &getObject() { return objectValue; }

  /// Returns the member named `key` of an object, or null if there is none
  /// (or this is not an object).
  const JsonValue *find(std::string_view key) const;
  /// Sets member `key` of an object, replacing an existing one.
  void set(std::string key, JsonValue value);
  /// Appends to an array.
  void push(JsonValue value) { arrayValue.push_back(std::move(value)); }

  /// Returns the JSON text of this value: compact, or with `indent` spaces
  /// per level when `indent` > 0. Non-finite numbers are written as null.
  std::string serialize(int indent = 0) const;

  /// Returns a short name of the kind ("object", "string", ...).
  static const char *kindName(Kind kind);

  bool operator==(const JsonValue &other) const;
  bool operator!=(const JsonValue &other) const { return !(*this == other); }

private:
  void serializeTo(std::string &out, int indent, int depth) const;

  Kind valueKind = Kind::Null;
  bool boolValue = false;
  bool integral = false;
  int64_t intValue = 0;
  double numberValue = 0;
  std::string stringValue;
  Array arrayValue;
  Object objectValue;
};

/// Parses `text` as one JSON value (surrounding whitespace allowed). On
/// failure the message reads "SOURCE: invalid JSON at line L, column C:
/// PROBLEM", where SOURCE names where the text came from (usually a file).
Result<JsonValue> parseJson(std::string_view text, std::string_view source);

/// Appends `text` to `out` as a quoted JSON string.
void appendJsonString(std::string &out, std::string_view text);

} // namespace tra::rt

#endif // TRA_RUNTIME_JSON_H
