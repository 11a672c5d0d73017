//===- TensorTest.cpp - DType helpers, fp16/bf16, conversion, tiles -------===//

#include "tra/Runtime/Tensor.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace tra::rt;
using namespace tra::rt::test;

namespace {

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

bool isHalfNaN(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool isBFloat16NaN(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

//===----------------------------------------------------------------------===//
// DType helpers
//===----------------------------------------------------------------------===//

TEST(DTypeTest, SizesAndNames) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::I16), 2u);
  EXPECT_EQ(dtypeSize(DType::I8), 1u);
  EXPECT_EQ(dtypeSize(DType::U8), 1u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  for (DType dtype : kAllDTypes) {
    std::optional<DType> parsed = parseDType(dtypeName(dtype));
    ASSERT_TRUE(parsed) << dtypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(parseDType("BFloat16"), DType::BF16);
  EXPECT_EQ(parseDType("float"), DType::F32);
  EXPECT_EQ(parseDType("HALF"), DType::F16);
  EXPECT_EQ(parseDType("uint8"), DType::U8);
  EXPECT_FALSE(parseDType("f8"));
  EXPECT_FALSE(parseDType(""));
  EXPECT_FALSE(parseDType("u16"));
  EXPECT_TRUE(isFloatingPoint(DType::BF16));
  EXPECT_FALSE(isFloatingPoint(DType::I8));
}

TEST(DTypeTest, ShapeHelpers) {
  EXPECT_EQ(shapeElementCount({}), 1);
  EXPECT_EQ(shapeElementCount({0}), 0);
  EXPECT_EQ(shapeElementCount({2, 0, 3}), 0);
  EXPECT_EQ(shapeElementCount({2, 3, 4}), 24);
  EXPECT_FALSE(shapeElementCount({-1}));
  EXPECT_FALSE(shapeElementCount({int64_t(1) << 40, int64_t(1) << 40}));
  EXPECT_EQ(shapeElementCount({int64_t(1) << 40, int64_t(1) << 40, 0}), 0);
  EXPECT_FALSE(shapeElementCount({0, -1}));
  EXPECT_EQ(shapeByteSize(DType::F64, {3}), 24);
  EXPECT_FALSE(shapeByteSize(DType::F64, {int64_t(1) << 61}));
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
}

//===----------------------------------------------------------------------===//
// fp16
//===----------------------------------------------------------------------===//

/// The value of half bits `h` computed from the definition.
double referenceHalf(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double magnitude = exponent == 0
                         ? std::ldexp(mantissa, -24)
                         : std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  if (exponent == 0x1f)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  return sign ? -magnitude : magnitude;
}

TEST(HalfTest, ExhaustiveToFloatAndBack) {
  for (uint32_t i = 0; i < 0x10000; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = halfToFloat(h);
    double reference = referenceHalf(h);
    if (isHalfNaN(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << i;
      ASSERT_EQ(floatBits(f) >> 31, i >> 15u) << std::hex << i;
      uint16_t back = floatToHalf(f);
      ASSERT_TRUE(isHalfNaN(back)) << std::hex << i;
      // Sign and payload kept; the quiet bit is set.
      ASSERT_EQ(back, h | 0x0200) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), reference) << std::hex << i;
    ASSERT_EQ(floatToHalf(f), h) << std::hex << i;
    ASSERT_EQ(doubleToHalf(static_cast<double>(f)), h) << std::hex << i;
  }
}

TEST(HalfTest, RoundsToNearestEvenAtEveryMidpoint) {
  // For each pair of adjacent non-negative finite halves (and the last finite
  // one with infinity), the midpoint rounds to the even one, and the floats
  // just below and above it round down and up.
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    uint16_t next = h + 1;
    double low = referenceHalf(h);
    double high = next == 0x7c00 ? 65536.0 : referenceHalf(next);
    float mid = static_cast<float>((low + high) / 2); // Exact in float.
    ASSERT_EQ(static_cast<double>(mid), (low + high) / 2);
    uint16_t even = (h & 1) ? next : h;
    ASSERT_EQ(floatToHalf(mid), even) << std::hex << h;
    ASSERT_EQ(floatToHalf(-mid), even | 0x8000) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f)), h) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, INFINITY)), next)
        << std::hex << h;
    ASSERT_EQ(doubleToHalf(std::nextafter(static_cast<double>(mid), 0.0)), h)
        << std::hex << h;
    ASSERT_EQ(doubleToHalf(std::nextafter(static_cast<double>(mid), 1e9)), next)
        << std::hex << h;
  }
}

TEST(HalfTest, EdgeCases) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_TRUE(isHalfNaN(floatToHalf(NAN)));
  EXPECT_EQ(floatToHalf(-NAN) & 0x8000, 0x8000);
  // A float NaN whose payload is only in the low bits must not become inf.
  EXPECT_TRUE(isHalfNaN(floatToHalf(bitsToFloat(0x7f800001))));
  EXPECT_TRUE(isHalfNaN(floatToHalf(bitsToFloat(0xff800001))));
  // Subnormals and underflow.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // Tie to even: 0.
  EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalf(1e-10f), 0x0000);
  EXPECT_EQ(floatToHalf(-1e-10f), 0x8000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0xfc00), -INFINITY);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(HalfTest, DoubleRoundsOnce) {
  // 1 + 2^-11 is the midpoint between halves 1 and 1 + 2^-10; a double just
  // above it must round up, though rounding through float first would land
  // exactly on the midpoint and round down to even.
  double justAbove = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(doubleToHalf(justAbove), 0x3c01);
  EXPECT_EQ(doubleToHalf(-justAbove), 0xbc01);
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(doubleToHalf(1e300), 0x7c00);
  EXPECT_EQ(doubleToHalf(-1e300), 0xfc00);
  EXPECT_EQ(doubleToHalf(1e-300), 0x0000);
  EXPECT_EQ(doubleToHalf(-1e-300), 0x8000);
  EXPECT_TRUE(isHalfNaN(doubleToHalf(std::nan(""))));
  EXPECT_EQ(doubleToHalf(65519.999999), 0x7bff);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7c00);
}

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

TEST(BFloat16Test, ExhaustiveToFloatAndBack) {
  for (uint32_t i = 0; i < 0x10000; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float f = bfloat16ToFloat(b);
    ASSERT_EQ(floatBits(f), i << 16);
    uint16_t back = floatToBFloat16(f);
    if (isBFloat16NaN(b)) {
      ASSERT_TRUE(isBFloat16NaN(back));
      ASSERT_EQ(back, b | 0x0040) << std::hex << i;
      continue;
    }
    ASSERT_EQ(back, b) << std::hex << i;
    ASSERT_EQ(doubleToBFloat16(static_cast<double>(f)), b) << std::hex << i;
  }
}

TEST(BFloat16Test, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    // The midpoint between b and b + 1 (or infinity) is exact in float.
    uint32_t midBits = (b << 16) | 0x8000;
    float mid = bitsToFloat(midBits);
    uint16_t even = static_cast<uint16_t>((b & 1) ? b + 1 : b);
    ASSERT_EQ(floatToBFloat16(mid), even) << std::hex << b;
    ASSERT_EQ(floatToBFloat16(-mid), even | 0x8000) << std::hex << b;
    ASSERT_EQ(floatToBFloat16(bitsToFloat(midBits - 1)), b) << std::hex << b;
    ASSERT_EQ(floatToBFloat16(bitsToFloat(midBits + 1)), b + 1)
        << std::hex << b;
  }
}

TEST(BFloat16Test, EdgeCases) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloat16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBFloat16(-INFINITY), 0xff80);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBFloat16(bitsToFloat(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBFloat16(bitsToFloat(0x7f7f8000)), 0x7f80); // Tie, odd.
  EXPECT_TRUE(isBFloat16NaN(floatToBFloat16(NAN)));
  // NaN payload only in the low 16 bits must stay NaN, not become inf.
  EXPECT_TRUE(isBFloat16NaN(floatToBFloat16(bitsToFloat(0x7f800001))));
  EXPECT_EQ(floatToBFloat16(bitsToFloat(0xff800001)) & 0x8000, 0x8000);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::denorm_min()), 0);
  EXPECT_EQ(floatToBFloat16(bitsToFloat(0x00018000)), 0x0002); // Tie, odd.
  // Rounding once from double.
  double justAbove = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(doubleToBFloat16(justAbove), 0x3f81);
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(doubleToBFloat16(1e300), 0x7f80);
  EXPECT_EQ(doubleToBFloat16(1e-300), 0x0000);
}

//===----------------------------------------------------------------------===//
// HostTensor and conversion
//===----------------------------------------------------------------------===//

TEST(HostTensorTest, Basics) {
  HostTensor empty;
  EXPECT_EQ(empty.shape(), std::vector<int64_t>{0});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);

  HostTensor scalar = HostTensor::fromDoubles(DType::F64, {}, {2.5});
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.byteSize(), 8u);
  EXPECT_EQ(scalar.load<double>(0), 2.5);

  HostTensor t = HostTensor::zeros(DType::I16, {2, 0, 3});
  EXPECT_EQ(t.numElements(), 0);
  EXPECT_EQ(t.byteSize(), 0u);

  HostTensor m =
      HostTensor::fromDoubles(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(m.load<int32_t>(4), 5);
  m.store<int32_t>(4, -7);
  EXPECT_EQ(m.loadAsDouble(4), -7);
  HostTensor copy = m;
  copy.store<int32_t>(0, 100);
  EXPECT_EQ(m.load<int32_t>(0), 1); // Owned data is copied.
  EXPECT_FALSE(copy.identical(m));
}

TEST(HostTensorTest, ViewsCopyOnWrite) {
  auto storage =
      std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(storage->data());
  HostTensor view = HostTensor::view(DType::F32, {2, 2}, bytes, storage);
  EXPECT_TRUE(view.isView());
  EXPECT_EQ(view.data(), bytes);
  HostTensor shared = view;
  EXPECT_EQ(shared.data(), bytes);
  EXPECT_EQ(storage.use_count(), 3);

  view.store<float>(1, 20);
  EXPECT_FALSE(view.isView());
  EXPECT_EQ(view.load<float>(1), 20);
  EXPECT_EQ((*storage)[1], 2); // The viewed memory is untouched.
  EXPECT_EQ(shared.load<float>(1), 2);
  EXPECT_EQ(storage.use_count(), 2);
}

TEST(ConvertTest, FloatTypes) {
  std::vector<double> values = {0.0,  -0.0,   1.0,  -2.5,  65504.0,  65520.0,
                                1e-8, 3.1416, 1e39, -1e39, INFINITY, NAN};
  HostTensor f64 = HostTensor::fromDoubles(DType::F64, {12}, values);
  HostTensor f32 = convert(f64, DType::F32);
  HostTensor f16 = convert(f64, DType::F16);
  HostTensor bf16 = convert(f64, DType::BF16);
  for (int64_t i = 0; i < 12; ++i) {
    double v = values[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(f32.load<float>(i)));
      EXPECT_TRUE(isHalfNaN(f16.load<uint16_t>(i)));
      EXPECT_TRUE(isBFloat16NaN(bf16.load<uint16_t>(i)));
      continue;
    }
    EXPECT_EQ(f32.load<float>(i), static_cast<float>(v)) << i;
    EXPECT_EQ(f16.load<uint16_t>(i), doubleToHalf(v)) << i;
    EXPECT_EQ(bf16.load<uint16_t>(i), doubleToBFloat16(v)) << i;
  }
  EXPECT_EQ(f32.load<float>(8), INFINITY);
  EXPECT_EQ(f16.load<uint16_t>(5), 0x7c00);
  // Widening is exact.
  HostTensor back = convert(f16, DType::F64);
  EXPECT_EQ(back.load<double>(3), -2.5);
  EXPECT_EQ(back.load<double>(4), 65504.0);
  EXPECT_EQ(convert(bf16, DType::F32).load<float>(2), 1.0f);
  EXPECT_EQ(convert(f16, DType::BF16).load<uint16_t>(2), 0x3f80);
}

TEST(ConvertTest, FloatToIntegerTruncatesAndSaturates) {
  HostTensor f = HostTensor::fromDoubles(
      DType::F32, {8}, {1.9, -1.9, 300, -300, NAN, INFINITY, -INFINITY, 0.5});
  HostTensor i8 = convert(f, DType::I8);
  std::vector<int8_t> expectI8 = {1, -1, 127, -128, 0, 127, -128, 0};
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(i8.load<int8_t>(i), expectI8[i]) << i;
  HostTensor u8 = convert(f, DType::U8);
  std::vector<uint8_t> expectU8 = {1, 0, 255, 0, 0, 255, 0, 0};
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(u8.load<uint8_t>(i), expectU8[i]) << i;
  HostTensor i64 = convert(
      HostTensor::fromDoubles(DType::F64, {3}, {1e19, -1e19, 123456789.7}),
      DType::I64);
  EXPECT_EQ(i64.load<int64_t>(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.load<int64_t>(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64.load<int64_t>(2), 123456789);
  HostTensor b = convert(f, DType::Bool);
  std::vector<uint8_t> expectBool = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(b.load<uint8_t>(i), expectBool[i]) << i;
  EXPECT_EQ(
      convert(HostTensor::fromDoubles(DType::F32, {1}, {0.0}), DType::Bool)
          .load<uint8_t>(0),
      0);
}

TEST(ConvertTest, IntegerTypes) {
  HostTensor i64 = HostTensor::zeros(DType::I64, {5});
  std::vector<int64_t> values = {300, -129, int64_t(1) << 40, -1,
                                 (int64_t(1) << 24) + (int64_t(1) << 16) + 1};
  for (int64_t i = 0; i < 5; ++i)
    i64.store<int64_t>(i, values[i]);
  HostTensor i8 = convert(i64, DType::I8);
  EXPECT_EQ(i8.load<int8_t>(0), 44); // Wraps like NumPy.
  EXPECT_EQ(i8.load<int8_t>(1), 127);
  EXPECT_EQ(i8.load<int8_t>(3), -1);
  EXPECT_EQ(convert(i64, DType::U8).load<uint8_t>(3), 255);
  EXPECT_EQ(convert(i64, DType::I16).load<int16_t>(0), 300);
  HostTensor f64 = convert(i64, DType::F64);
  EXPECT_EQ(f64.load<double>(2), std::ldexp(1.0, 40));
  // 2^24 + 2^16 + 1 lies just above a bf16 midpoint: it must round up, which
  // rounding through float (to 2^24 + 2^16, a tie) would get wrong.
  EXPECT_EQ(bfloat16ToFloat(convert(i64, DType::BF16).load<uint16_t>(4)),
            std::ldexp(1.0f, 24) + std::ldexp(1.0f, 17));
  EXPECT_EQ(convert(i64, DType::F16).load<uint16_t>(2), 0x7c00);
  EXPECT_EQ(convert(i64, DType::F16).load<uint16_t>(1), floatToHalf(-129));
  HostTensor b = convert(i64, DType::Bool);
  EXPECT_EQ(b.load<uint8_t>(0), 1);
  HostTensor fromBool =
      convert(HostTensor::fromDoubles(DType::Bool, {3}, {0, 1, 1}), DType::F32);
  EXPECT_EQ(fromBool.load<float>(0), 0.0f);
  EXPECT_EQ(fromBool.load<float>(1), 1.0f);
  // A non-canonical bool byte still means true.
  HostTensor odd = HostTensor::zeros(DType::Bool, {1});
  odd.store<uint8_t>(0, 7);
  EXPECT_EQ(convert(odd, DType::I32).load<int32_t>(0), 1);
}

TEST(ConvertTest, EveryPairPreservesSmallValues) {
  // Values every dtype represents exactly survive every conversion.
  std::vector<double> values = {0, 1, 2, 3, 100, 0, 1, 5};
  for (DType from : kAllDTypes) {
    std::vector<double> v = values;
    if (from == DType::Bool)
      for (double &x : v)
        x = x != 0;
    HostTensor source = HostTensor::fromDoubles(from, {2, 4}, v);
    for (DType to : kAllDTypes) {
      HostTensor result = convert(source, to);
      ASSERT_EQ(result.dtype(), to);
      ASSERT_EQ(result.shape(), source.shape());
      for (int64_t i = 0; i < 8; ++i) {
        double expect = to == DType::Bool ? (v[i] != 0) : v[i];
        ASSERT_EQ(result.loadAsDouble(i), expect)
            << dtypeName(from) << " -> " << dtypeName(to) << " at " << i;
      }
    }
  }
}

TEST(ConvertTest, SameDTypeAndEmpty) {
  HostTensor t = patternTensor(DType::F16, {3, 4});
  HostTensor same = convert(t, DType::F16);
  EXPECT_TRUE(same.identical(t));
  HostTensor empty = convert(HostTensor::zeros(DType::F32, {0, 5}), DType::I8);
  EXPECT_EQ(empty.dtype(), DType::I8);
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{0, 5}));
  HostTensor scalar =
      convert(HostTensor::fromDoubles(DType::F32, {}, {-3.75}), DType::BF16);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.loadAsDouble(0), -3.75);
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

TEST(TileTest, MatchesElementwiseDefinition) {
  struct Case {
    std::vector<int64_t> shape, offsets, sizes;
  };
  std::vector<Case> cases = {
      {{}, {}, {}},
      {{7}, {2}, {3}},
      {{7}, {0}, {7}},
      {{7}, {7}, {0}},
      {{4, 6}, {1, 2}, {2, 3}},
      {{4, 6}, {1, 0}, {3, 6}}, // Full rows: one run.
      {{4, 6}, {0, 5}, {4, 1}}, // A column.
      {{4, 6}, {0, 0}, {4, 6}}, // Everything.
      {{4, 6}, {2, 3}, {0, 2}}, // Empty.
      {{3, 4, 5}, {1, 1, 1}, {2, 2, 3}},
      {{3, 4, 5}, {1, 0, 0}, {2, 4, 5}},
      {{3, 4, 5}, {0, 1, 0}, {3, 2, 5}},
      {{3, 4, 5}, {2, 3, 4}, {1, 1, 1}},
      {{2, 3, 4, 5}, {1, 1, 0, 2}, {1, 2, 4, 3}},
      {{2, 1, 3}, {0, 0, 1}, {2, 1, 2}},
  };
  for (DType dtype : {DType::F32, DType::BF16, DType::F64, DType::I8}) {
    for (const Case &c : cases) {
      HostTensor t = patternTensor(dtype, c.shape, 7);
      Result<HostTensor> tile = extractTile(t, c.offsets, c.sizes);
      ASSERT_TRUE(tile) << tile.message();
      EXPECT_EQ(tile->shape(), c.sizes);
      EXPECT_TRUE(tile->identical(naiveTile(t, c.offsets, c.sizes)))
          << dtypeName(dtype) << " shape " << formatShape(c.shape)
          << " offsets " << formatShape(c.offsets) << " sizes "
          << formatShape(c.sizes);
    }
  }
}

TEST(TileTest, InsertIsTheInverseOfCopy) {
  // insertTile writes exactly the tile's elements: the tile of a pattern,
  // inserted into zeros, gives the pattern inside the tile and 0 elsewhere.
  struct Case {
    std::vector<int64_t> shape, offsets, sizes;
  };
  std::vector<Case> cases = {
      {{}, {}, {}},
      {{7}, {2}, {3}},
      {{4, 6}, {1, 2}, {2, 3}},
      {{4, 6}, {1, 0}, {3, 6}},
      {{4, 6}, {0, 5}, {4, 1}},
      {{4, 6}, {4, 6}, {0, 0}}, // Empty, at the far corner.
      {{3, 4, 5}, {1, 1, 1}, {2, 2, 3}},
      {{3, 4, 5}, {0, 1, 0}, {3, 2, 5}},
      {{2, 1, 3}, {0, 0, 1}, {2, 1, 2}},
      {{2, 3, 4, 5}, {1, 1, 0, 2}, {1, 2, 4, 3}},
  };
  for (DType dtype : {DType::F32, DType::BF16, DType::I64}) {
    for (const Case &c : cases) {
      HostTensor t = patternTensor(dtype, c.shape, 3);
      Result<HostTensor> tile = extractTile(t, c.offsets, c.sizes);
      ASSERT_TRUE(tile) << tile.message();
      HostTensor whole = HostTensor::zeros(dtype, c.shape);
      insertTile(dtype, c.shape, whole.mutableData(), c.offsets, c.sizes,
                 tile->data());
      for (int64_t i = 0; i < whole.numElements(); ++i) {
        bool inside = true;
        for (size_t d = c.shape.size(), rest = size_t(i); d-- > 0;) {
          int64_t index = int64_t(rest % size_t(c.shape[d]));
          rest /= size_t(c.shape[d]);
          inside &= index >= c.offsets[d] && index < c.offsets[d] + c.sizes[d];
        }
        EXPECT_EQ(whole.loadAsDouble(i), inside ? t.loadAsDouble(i) : 0.0)
            << dtypeName(dtype) << " shape " << formatShape(c.shape)
            << " element " << i;
      }
    }
  }
}

TEST(TileTest, RejectsTilesOutsideTheTensor) {
  HostTensor t = patternTensor(DType::F32, {4, 6});
  Result<HostTensor> tile = extractTile(t, {0}, {1});
  ASSERT_FALSE(tile);
  EXPECT_NE(tile.message().find("rank"), std::string::npos) << tile.message();
  tile = extractTile(t, {3, 0}, {2, 6});
  ASSERT_FALSE(tile);
  EXPECT_NE(tile.message().find("dimension 0"), std::string::npos)
      << tile.message();
  tile = extractTile(t, {0, -1}, {1, 1});
  ASSERT_FALSE(tile);
  EXPECT_NE(tile.message().find("dimension 1"), std::string::npos);
  EXPECT_FALSE(extractTile(t, {0, 0}, {1, -1}));
  EXPECT_FALSE(extractTile(t, {0, 7}, {1, 0}));
  EXPECT_TRUE(extractTile(t, {4, 6}, {0, 0}));
}

} // namespace
