//===- JsonTest.cpp - The runtime's strict JSON parser and writer ---------===//

#include "tra/Runtime/Json.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace tra::rt;

namespace {

JsonValue parseOk(std::string_view text) {
  Result<JsonValue> value = parseJson(text, "test.json");
  EXPECT_TRUE(value) << value.message();
  return value ? *value : JsonValue();
}

std::string parseError(std::string_view text) {
  Result<JsonValue> value = parseJson(text, "test.json");
  EXPECT_FALSE(value) << "accepted: " << text;
  return value ? "" : value.message();
}

TEST(JsonTest, ParsesScalars) {
  EXPECT_TRUE(parseOk("null").isNull());
  EXPECT_TRUE(parseOk(" true ").getBool());
  EXPECT_FALSE(parseOk("false").getBool());
  EXPECT_EQ(parseOk("\"hi\"").getString(), "hi");
  JsonValue zero = parseOk("0");
  EXPECT_TRUE(zero.isInteger());
  EXPECT_EQ(zero.getInteger(), 0);
  JsonValue big = parseOk("9223372036854775807");
  ASSERT_TRUE(big.isInteger());
  EXPECT_EQ(big.getInteger(), std::numeric_limits<int64_t>::max());
  JsonValue small = parseOk("-9223372036854775808");
  ASSERT_TRUE(small.isInteger());
  EXPECT_EQ(small.getInteger(), std::numeric_limits<int64_t>::min());
  JsonValue tooBig = parseOk("9223372036854775808");
  EXPECT_TRUE(tooBig.isNumber());
  EXPECT_FALSE(tooBig.isInteger());
  EXPECT_EQ(tooBig.getNumber(), 9223372036854775808.0);
  JsonValue real = parseOk("-12.5e-1");
  EXPECT_FALSE(real.isInteger());
  EXPECT_EQ(real.getNumber(), -1.25);
  EXPECT_FALSE(parseOk("1.0").isInteger());
  EXPECT_FALSE(parseOk("1e2").isInteger());
  EXPECT_EQ(parseOk("1E+2").getNumber(), 100.0);
}

TEST(JsonTest, ParsesStrings) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\b\f\n\r\t")").getString(),
            "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parseOk(R"("\u0041\u00e9\u20ac")").getString(),
            "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parseOk(R"("\ud83d\ude00")").getString(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parseOk("\"\xc3\xa9\xf0\x9f\x98\x80\"").getString(),
            "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(parseOk(R"("\u0000")").getString(), std::string(1, '\0'));
}

TEST(JsonTest, ParsesContainersInOrder) {
  JsonValue v = parseOk(R"({"b": [1, 2, {"c": null}], "a": {}, "e": []})");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.getObject().size(), 3u);
  EXPECT_EQ(v.getObject()[0].first, "b");
  EXPECT_EQ(v.getObject()[1].first, "a");
  const JsonValue *b = v.find("b");
  ASSERT_TRUE(b && b->isArray());
  EXPECT_EQ(b->getArray().size(), 3u);
  EXPECT_TRUE(b->getArray()[2].find("c")->isNull());
  EXPECT_TRUE(v.find("a")->getObject().empty());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(b->find("x"), nullptr); // Not an object.
}

TEST(JsonTest, RejectsNonStrictInput) {
  const char *bad[] = {
      "",
      "   ",
      "{",
      "[1,]",
      "{\"a\":1,}",
      "[1 2]",
      "{'a': 1}",
      "{a: 1}",
      "// c\n1",
      "NaN",
      "Infinity",
      "-",
      "01",
      "1.",
      ".5",
      "+1",
      "1e",
      "0x10",
      "tru",
      "nul",
      "\"abc",
      "\"\t\"",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\\ud800\\u0041\"",
      "\"\xff\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xe2\x82\"",
      "1 2",
      "[] x",
      "1e999",
      "{\"a\" 1}",
      "{\"a\":}",
      "[",
      "]",
  };
  for (const char *text : bad) {
    std::string message = parseError(text);
    EXPECT_EQ(message.rfind("test.json: invalid JSON at line ", 0), 0u)
        << message;
  }
}

TEST(JsonTest, RejectsDuplicateKeys) {
  std::string message = parseError(R"({"w": 1, "v": 2, "w": 3})");
  EXPECT_NE(message.find("duplicate key \"w\""), std::string::npos) << message;
  EXPECT_NE(message.find("column 18"), std::string::npos) << message;
}

TEST(JsonTest, ReportsLineAndColumn) {
  std::string message = parseError("{\n  \"a\": 1,\n  \"b\": tru\n}");
  EXPECT_EQ(message,
            "test.json: invalid JSON at line 3, column 8: invalid literal, "
            "expected 'true'");
}

TEST(JsonTest, LimitsNesting) {
  std::string deep(600, '[');
  deep += std::string(600, ']');
  EXPECT_NE(parseError(deep).find("nesting deeper than"), std::string::npos);
  std::string ok(400, '[');
  ok += std::string(400, ']');
  EXPECT_TRUE(parseOk(ok).isArray());
}

TEST(JsonTest, SerializesAndRoundTrips) {
  JsonValue v = JsonValue::object();
  v.set("name", "w\"\n\x01");
  v.set("shape", JsonValue::array({JsonValue(2), JsonValue(int64_t(1) << 40)}));
  v.set("scale", 0.1);
  v.set("flag", true);
  v.set("none", nullptr);
  v.set("empty", JsonValue::array());
  v.set("neg", -3);
  EXPECT_EQ(v.serialize(),
            R"({"name":"w\"\n\u0001","shape":[2,1099511627776],"scale":0.1,)"
            R"("flag":true,"none":null,"empty":[],"neg":-3})");
  EXPECT_EQ(parseOk(v.serialize()), v);
  EXPECT_EQ(parseOk(v.serialize(2)), v);
  v.set("flag", false); // Replaces in place.
  EXPECT_EQ(v.getObject().size(), 7u);
  EXPECT_FALSE(v.find("flag")->getBool());
  EXPECT_EQ(JsonValue::object({{"a", JsonValue::array({1})}}).serialize(2),
            "{\n  \"a\": [\n    1\n  ]\n}");
  EXPECT_EQ(JsonValue(std::nan("")).serialize(), "null");
  EXPECT_EQ(JsonValue(1e300).serialize(), "1e+300");
  EXPECT_EQ(parseOk(JsonValue(0.1 + 0.2).serialize()).getNumber(), 0.1 + 0.2);
  // Negative zero stays a negative double (found by fuzz-json: "-0" read
  // back as the integer 0, so serializing was not a fixed point).
  EXPECT_EQ(JsonValue(-0.0).serialize(), "-0.0");
  JsonValue negativeZero = parseOk(JsonValue(-0.0).serialize());
  EXPECT_FALSE(negativeZero.isInteger());
  EXPECT_TRUE(std::signbit(negativeZero.getNumber()));
  EXPECT_EQ(negativeZero.serialize(), "-0.0");
}

} // namespace
