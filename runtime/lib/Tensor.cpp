//===- Tensor.cpp - Host tensors, element types and conversions -----------===//

#include "tra/Runtime/Tensor.h"
#include "tra/Runtime/Checked.h"
#include "tra/Runtime/StridedCopy.h"

#include <cassert>
#include <cmath>
#include <limits>

using namespace tra::rt;

//===----------------------------------------------------------------------===//
// DType helpers
//===----------------------------------------------------------------------===//

size_t tra::rt::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

const char *tra::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I16:
    return "i16";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "u8";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

std::optional<DType> tra::rt::parseDType(std::string_view name) {
  std::string lower(name);
  for (char &c : lower)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  struct Alias {
    const char *name;
    DType dtype;
  };
  static const Alias aliases[] = {
      {"f32", DType::F32},     {"float32", DType::F32},   {"float", DType::F32},
      {"f16", DType::F16},     {"float16", DType::F16},   {"half", DType::F16},
      {"bf16", DType::BF16},   {"bfloat16", DType::BF16}, {"f64", DType::F64},
      {"float64", DType::F64}, {"double", DType::F64},    {"i64", DType::I64},
      {"int64", DType::I64},   {"long", DType::I64},      {"i32", DType::I32},
      {"int32", DType::I32},   {"int", DType::I32},       {"i16", DType::I16},
      {"int16", DType::I16},   {"short", DType::I16},     {"i8", DType::I8},
      {"int8", DType::I8},     {"u8", DType::U8},         {"uint8", DType::U8},
      {"bool", DType::Bool},
  };
  for (const Alias &alias : aliases)
    if (lower == alias.name)
      return alias.dtype;
  return std::nullopt;
}

bool tra::rt::isFloatingPoint(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::F64;
}

std::optional<int64_t>
tra::rt::shapeElementCount(const std::vector<int64_t> &shape) {
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    empty |= dim == 0;
  }
  if (empty) // No overflow is possible: the product is 0.
    return 0;
  std::optional<int64_t> count = 1;
  for (int64_t dim : shape)
    if (!(count = checkedMul(*count, dim)))
      return std::nullopt;
  return count;
}

std::optional<int64_t>
tra::rt::shapeByteSize(DType dtype, const std::vector<int64_t> &shape) {
  std::optional<int64_t> count = shapeElementCount(shape);
  if (!count)
    return std::nullopt;
  return checkedMul(*count, static_cast<int64_t>(dtypeSize(dtype)));
}

std::string tra::rt::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

//===----------------------------------------------------------------------===//
// 16-bit floating point
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float tra::rt::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) // Infinity or NaN; keep the payload.
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0)
    return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0)
    return bitsToFloat(sign);
  // Subnormal: normalize the mantissa.
  int32_t e = 1;
  while (!(mantissa & 0x400)) {
    mantissa <<= 1;
    --e;
  }
  mantissa &= 0x3ff;
  return bitsToFloat(sign | (static_cast<uint32_t>(e + 112) << 23) |
                     (mantissa << 13));
}

uint16_t tra::rt::floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) {
    if (x == 0x7f800000)
      return sign | 0x7c00;
    // NaN: quiet it and keep the top payload bits.
    return sign | 0x7e00 | static_cast<uint16_t>((x >> 13) & 0x3ff);
  }
  if (x >= 0x477ff000) // >= 65520 rounds to infinity.
    return sign | 0x7c00;
  uint32_t exponent = x >> 23;
  if (exponent >= 113) {
    // Normal half: drop 13 mantissa bits, round to nearest even. A carry out
    // of the mantissa correctly increments the exponent.
    uint32_t h = ((exponent - 112) << 10) | ((x & 0x7fffff) >> 13);
    uint32_t rest = x & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
      ++h;
    return sign | static_cast<uint16_t>(h);
  }
  // Subnormal half (or zero): value = m * 2^-24.
  if (exponent < 102) // Below 2^-25: rounds to zero.
    return sign;
  uint32_t mantissa = (x & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - exponent; // 14..24
  uint32_t m = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (m & 1)))
    ++m;
  return sign | static_cast<uint16_t>(m);
}

float tra::rt::bfloat16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t tra::rt::floatToBFloat16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000) // NaN: quiet it, keep sign and payload.
    return static_cast<uint16_t>((x >> 16) | 0x0040);
  uint32_t bias = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + bias) >> 16);
}

/// Rounds `value` to float with round-to-odd: truncate toward zero, and set
/// the lowest mantissa bit if anything was lost. Rounding the result again to
/// a format with at least two fewer mantissa bits (f16, bf16) gives the same
/// value as rounding `value` directly.
static float roundToOddFloat(double value) {
  float f = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(f) == value)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(value))
    f = std::nextafter(f, 0.0f);
  return bitsToFloat(floatBits(f) | 1);
}

/// Like `roundToOddFloat`, from an integer.
static float roundToOddFloat(int64_t value) {
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value)
                                 : static_cast<uint64_t>(value);
  if (magnitude < (uint64_t(1) << 24))
    return static_cast<float>(value);
  int shift = 64 - __builtin_clzll(magnitude) - 24;
  uint64_t mantissa = magnitude >> shift;
  if (magnitude & ((uint64_t(1) << shift) - 1))
    mantissa |= 1;
  float f = std::ldexp(static_cast<float>(mantissa), shift);
  return value < 0 ? -f : f;
}

uint16_t tra::rt::doubleToHalf(double value) {
  return floatToHalf(roundToOddFloat(value));
}

uint16_t tra::rt::doubleToBFloat16(double value) {
  return floatToBFloat16(roundToOddFloat(value));
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor() : dims{0} {}

HostTensor HostTensor::zeros(DType dtype, std::vector<int64_t> shape) {
  std::optional<int64_t> count = shapeElementCount(shape);
  assert(count && shapeByteSize(dtype, shape) && "invalid tensor shape");
  HostTensor tensor;
  tensor.elementType = dtype;
  tensor.dims = std::move(shape);
  tensor.elementCount = count.value_or(0);
  tensor.ownedData.assign(tensor.byteSize(), 0);
  return tensor;
}

HostTensor HostTensor::copyOf(DType dtype, std::vector<int64_t> shape,
                              const void *data) {
  HostTensor tensor = zeros(dtype, std::move(shape));
  if (tensor.byteSize())
    std::memcpy(tensor.ownedData.data(), data, tensor.byteSize());
  return tensor;
}

HostTensor HostTensor::fromDoubles(DType dtype, std::vector<int64_t> shape,
                                   const std::vector<double> &values) {
  HostTensor wide = zeros(DType::F64, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == wide.numElements() &&
         "value count does not match the shape");
  if (wide.byteSize())
    std::memcpy(wide.ownedData.data(), values.data(), wide.byteSize());
  return convert(wide, dtype);
}

HostTensor HostTensor::view(DType dtype, std::vector<int64_t> shape,
                            const uint8_t *data,
                            std::shared_ptr<const void> owner) {
  std::optional<int64_t> count = shapeElementCount(shape);
  assert(count && "invalid tensor shape");
  HostTensor tensor;
  tensor.elementType = dtype;
  tensor.dims = std::move(shape);
  tensor.elementCount = count.value_or(0);
  if (tensor.byteSize() == 0)
    return tensor; // Nothing to view; an empty owned buffer is equivalent.
  tensor.viewData = data;
  tensor.viewOwner = std::move(owner);
  return tensor;
}

uint8_t *HostTensor::mutableData() {
  if (viewData) {
    ownedData.assign(viewData, viewData + byteSize());
    viewData = nullptr;
    viewOwner.reset();
  }
  return ownedData.data();
}

double HostTensor::loadAsDouble(int64_t index) const {
  switch (elementType) {
  case DType::F32:
    return load<float>(index);
  case DType::F16:
    return halfToFloat(load<uint16_t>(index));
  case DType::BF16:
    return bfloat16ToFloat(load<uint16_t>(index));
  case DType::F64:
    return load<double>(index);
  case DType::I64:
    return static_cast<double>(load<int64_t>(index));
  case DType::I32:
    return load<int32_t>(index);
  case DType::I16:
    return load<int16_t>(index);
  case DType::I8:
    return load<int8_t>(index);
  case DType::U8:
    return load<uint8_t>(index);
  case DType::Bool:
    return load<uint8_t>(index) != 0;
  }
  return 0;
}

bool HostTensor::identical(const HostTensor &other) const {
  if (elementType != other.elementType || dims != other.dims)
    return false;
  return byteSize() == 0 || std::memcmp(data(), other.data(), byteSize()) == 0;
}

//===----------------------------------------------------------------------===//
// Conversion
//===----------------------------------------------------------------------===//

namespace {
/// Reads one element. `Value` is double for floating types and int64_t for
/// the others.
template <DType D> struct Reader;
template <> struct Reader<DType::F32> {
  static double get(const uint8_t *p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
};
template <> struct Reader<DType::F16> {
  static double get(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return halfToFloat(v);
  }
};
template <> struct Reader<DType::BF16> {
  static double get(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return bfloat16ToFloat(v);
  }
};
template <> struct Reader<DType::F64> {
  static double get(const uint8_t *p) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
};
template <class T> struct IntReader {
  static int64_t get(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<int64_t>(v);
  }
};
template <> struct Reader<DType::I64> : IntReader<int64_t> {};
template <> struct Reader<DType::I32> : IntReader<int32_t> {};
template <> struct Reader<DType::I16> : IntReader<int16_t> {};
template <> struct Reader<DType::I8> : IntReader<int8_t> {};
template <> struct Reader<DType::U8> : IntReader<uint8_t> {};
template <> struct Reader<DType::Bool> {
  static int64_t get(const uint8_t *p) { return *p != 0; }
};

template <class T> void putRaw(uint8_t *p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

/// Converts a double to integer type T: truncate, saturate, NaN -> 0.
template <class T> T saturatingCast(double value) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  if (truncated <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  // For int64 the max is not representable; (double)max rounds up to 2^63.
  if (truncated >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(truncated);
}

/// Writes one element from a double or an int64_t.
template <DType D> struct Writer;
template <> struct Writer<DType::F32> {
  static void put(uint8_t *p, double v) { putRaw(p, static_cast<float>(v)); }
  static void put(uint8_t *p, int64_t v) { putRaw(p, static_cast<float>(v)); }
};
template <> struct Writer<DType::F16> {
  static void put(uint8_t *p, double v) { putRaw(p, doubleToHalf(v)); }
  static void put(uint8_t *p, int64_t v) {
    putRaw(p, floatToHalf(roundToOddFloat(v)));
  }
};
template <> struct Writer<DType::BF16> {
  static void put(uint8_t *p, double v) { putRaw(p, doubleToBFloat16(v)); }
  static void put(uint8_t *p, int64_t v) {
    putRaw(p, floatToBFloat16(roundToOddFloat(v)));
  }
};
template <> struct Writer<DType::F64> {
  static void put(uint8_t *p, double v) { putRaw(p, v); }
  static void put(uint8_t *p, int64_t v) { putRaw(p, static_cast<double>(v)); }
};
template <class T> struct IntWriter {
  static void put(uint8_t *p, double v) { putRaw(p, saturatingCast<T>(v)); }
  static void put(uint8_t *p, int64_t v) {
    // Wraps modulo 2^bits (two's complement).
    putRaw(p, static_cast<T>(static_cast<uint64_t>(v)));
  }
};
template <> struct Writer<DType::I64> : IntWriter<int64_t> {};
template <> struct Writer<DType::I32> : IntWriter<int32_t> {};
template <> struct Writer<DType::I16> : IntWriter<int16_t> {};
template <> struct Writer<DType::I8> : IntWriter<int8_t> {};
template <> struct Writer<DType::U8> : IntWriter<uint8_t> {};
template <> struct Writer<DType::Bool> {
  static void put(uint8_t *p, double v) {
    *p = (v != 0 || std::isnan(v)) ? 1 : 0;
  }
  static void put(uint8_t *p, int64_t v) { *p = v != 0; }
};

template <DType From, DType To>
void convertLoop(const uint8_t *src, uint8_t *dst, int64_t count) {
  const size_t fromSize = dtypeSize(From), toSize = dtypeSize(To);
  for (int64_t i = 0; i < count; ++i)
    Writer<To>::put(dst + i * toSize, Reader<From>::get(src + i * fromSize));
}

template <DType From>
void convertFrom(DType to, const uint8_t *src, uint8_t *dst, int64_t count) {
  switch (to) {
  case DType::F32:
    return convertLoop<From, DType::F32>(src, dst, count);
  case DType::F16:
    return convertLoop<From, DType::F16>(src, dst, count);
  case DType::BF16:
    return convertLoop<From, DType::BF16>(src, dst, count);
  case DType::F64:
    return convertLoop<From, DType::F64>(src, dst, count);
  case DType::I64:
    return convertLoop<From, DType::I64>(src, dst, count);
  case DType::I32:
    return convertLoop<From, DType::I32>(src, dst, count);
  case DType::I16:
    return convertLoop<From, DType::I16>(src, dst, count);
  case DType::I8:
    return convertLoop<From, DType::I8>(src, dst, count);
  case DType::U8:
    return convertLoop<From, DType::U8>(src, dst, count);
  case DType::Bool:
    return convertLoop<From, DType::Bool>(src, dst, count);
  }
}
} // namespace

HostTensor tra::rt::convert(const HostTensor &tensor, DType dtype) {
  if (tensor.dtype() == dtype)
    return tensor;
  HostTensor result = HostTensor::zeros(dtype, tensor.shape());
  const uint8_t *src = tensor.data();
  uint8_t *dst = result.mutableData();
  int64_t count = tensor.numElements();
  if (count == 0)
    return result;
  switch (tensor.dtype()) {
  case DType::F32:
    convertFrom<DType::F32>(dtype, src, dst, count);
    break;
  case DType::F16:
    convertFrom<DType::F16>(dtype, src, dst, count);
    break;
  case DType::BF16:
    convertFrom<DType::BF16>(dtype, src, dst, count);
    break;
  case DType::F64:
    convertFrom<DType::F64>(dtype, src, dst, count);
    break;
  case DType::I64:
    convertFrom<DType::I64>(dtype, src, dst, count);
    break;
  case DType::I32:
    convertFrom<DType::I32>(dtype, src, dst, count);
    break;
  case DType::I16:
    convertFrom<DType::I16>(dtype, src, dst, count);
    break;
  case DType::I8:
    convertFrom<DType::I8>(dtype, src, dst, count);
    break;
  case DType::U8:
    convertFrom<DType::U8>(dtype, src, dst, count);
    break;
  case DType::Bool:
    convertFrom<DType::Bool>(dtype, src, dst, count);
    break;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

Status tra::rt::checkTile(const std::vector<int64_t> &shape,
                          const std::vector<int64_t> &offsets,
                          const std::vector<int64_t> &sizes) {
  if (offsets.size() != shape.size() || sizes.size() != shape.size())
    return Error{"tile offsets " + formatShape(offsets) + " and sizes " +
                 formatShape(sizes) + " do not match the rank " +
                 std::to_string(shape.size()) + " of shape " +
                 formatShape(shape)};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] > shape[d] ||
        sizes[d] > shape[d] - offsets[d])
      return Error{"tile offsets " + formatShape(offsets) + " sizes " +
                   formatShape(sizes) + " exceed shape " + formatShape(shape) +
                   " in dimension " + std::to_string(d)};
  }
  return Status::success();
}

void tra::rt::copyTile(DType dtype, const std::vector<int64_t> &shape,
                       const uint8_t *data, const std::vector<int64_t> &offsets,
                       const std::vector<int64_t> &sizes, uint8_t *out) {
  assert(checkTile(shape, offsets, sizes).ok() && "invalid tile");
  copyStridedTile(dtypeSize(dtype), data, rowMajorStrides(shape), offsets,
                  sizes, out, rowMajorStrides(sizes));
}

void tra::rt::insertTile(DType dtype, const std::vector<int64_t> &shape,
                         uint8_t *data, const std::vector<int64_t> &offsets,
                         const std::vector<int64_t> &sizes,
                         const uint8_t *tile) {
  assert(checkTile(shape, offsets, sizes).ok() && "invalid tile");
  if (shapeElementCount(sizes) == 0)
    return; // Its offsets may lie past the end of `data`.
  // The tile's first element in `data`; the tile itself is the source.
  const std::vector<int64_t> strides = rowMajorStrides(shape);
  int64_t first = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    first += offsets[d] * strides[d];
  copyStridedTile(dtypeSize(dtype), tile, rowMajorStrides(sizes),
                  std::vector<int64_t>(sizes.size(), 0), sizes,
                  data + first * static_cast<int64_t>(dtypeSize(dtype)),
                  strides);
}

Result<HostTensor> tra::rt::extractTile(const HostTensor &tensor,
                                        const std::vector<int64_t> &offsets,
                                        const std::vector<int64_t> &sizes) {
  Status problem = checkTile(tensor.shape(), offsets, sizes);
  if (!problem.ok())
    return problem.error();
  HostTensor tile = HostTensor::zeros(tensor.dtype(), sizes);
  copyTile(tensor.dtype(), tensor.shape(), tensor.data(), offsets, sizes,
           tile.mutableData());
  return tile;
}
