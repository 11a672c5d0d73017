//===- Zip.cpp - The central directory of zip archives --------------------===//

#include "tra/Runtime/Zip.h"
#include "tra/Runtime/ByteOrder.h"

#include <array>
#include <cstdio>
#include <optional>

using namespace tra::rt;

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kLocalHeaderSize = 30;

/// The tables of slicing-by-8 CRC-32: tables[0] is the classic byte-wise
/// table, tables[k][b] the CRC of byte b followed by k zero bytes.
using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr CrcTables makeCrcTables() {
  CrcTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    tables[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; ++b)
    for (size_t k = 1; k < 8; ++k)
      tables[k][b] =
          (tables[k - 1][b] >> 8) ^ tables[0][tables[k - 1][b] & 0xff];
  return tables;
}

constexpr CrcTables kCrcTables = makeCrcTables();

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

} // namespace

bool tra::rt::hasZipLocalHeader(const uint8_t *data, uint64_t size) {
  return size >= 4 && readLE32(data) == kLocalHeaderSig;
}

Result<std::vector<ZipEntry>> tra::rt::readZipDirectory(const uint8_t *data,
                                                        uint64_t size) {
  std::vector<ZipEntry> entries;
  const char *damaged = " (truncated or damaged file?)";
  if (size < kEndSize)
    return Error{"not a zip archive: only " + std::to_string(size) + " bytes"};
  // The end record is the last thing in the file, followed only by its
  // comment. Search backwards for a signature whose comment length fits.
  std::optional<uint64_t> endPos;
  uint64_t lowest = size - kEndSize > 0xffff ? size - kEndSize - 0xffff : 0;
  for (uint64_t pos = size - kEndSize + 1; pos-- > lowest;) {
    if (readLE32(data + pos) == kEndSig &&
        pos + kEndSize + readLE16(data + pos + 20) == size) {
      endPos = pos;
      break;
    }
  }
  if (!endPos)
    return Error{"no zip end-of-central-directory record found" +
                 std::string(damaged)};
  const uint8_t *end = data + *endPos;
  uint64_t count = readLE16(end + 10);
  uint64_t directorySize = readLE32(end + 12);
  uint64_t directoryOffset = readLE32(end + 16);
  uint64_t directoryLimit = *endPos;
  if (readLE16(end + 4) != 0 || readLE16(end + 6) != 0 ||
      readLE16(end + 8) != readLE16(end + 10))
    return Error{"multi-disk zip archives are not supported"};

  // Zip64: a locator right before the end record points to the zip64 end
  // record, whose 64-bit fields replace the saturated 16/32-bit ones.
  if (*endPos >= kZip64LocatorSize &&
      readLE32(data + *endPos - kZip64LocatorSize) == kZip64LocatorSig) {
    const uint8_t *locator = data + *endPos - kZip64LocatorSize;
    uint64_t recordPos = readLE64(locator + 8);
    if (recordPos > *endPos - kZip64LocatorSize ||
        *endPos - kZip64LocatorSize - recordPos < kZip64EndSize ||
        readLE32(data + recordPos) != kZip64EndSig)
      return Error{
          "zip64 end-of-central-directory record not found at offset " +
          std::to_string(recordPos) + damaged};
    const uint8_t *record = data + recordPos;
    if (readLE64(record + 24) != readLE64(record + 32) ||
        readLE32(record + 16) != 0)
      return Error{"multi-disk zip archives are not supported"};
    count = readLE64(record + 32);
    directorySize = readLE64(record + 40);
    directoryOffset = readLE64(record + 48);
    directoryLimit = recordPos;
  } else if (count == 0xffff || directorySize == 0xffffffff ||
             directoryOffset == 0xffffffff) {
    return Error{"zip64 end-of-central-directory locator missing" +
                 std::string(damaged)};
  }
  if (directoryOffset > directoryLimit ||
      directorySize > directoryLimit - directoryOffset)
    return Error{"zip central directory (offset " +
                 std::to_string(directoryOffset) + ", " +
                 std::to_string(directorySize) +
                 " bytes) lies outside the file" + damaged};

  const uint8_t *cursor = data + directoryOffset;
  const uint8_t *limit = cursor + directorySize;
  for (uint64_t i = 0; i < count; ++i) {
    std::string where = "zip central directory entry " + std::to_string(i);
    if (size_t(limit - cursor) < kCentralHeaderSize ||
        readLE32(cursor) != kCentralHeaderSig)
      return Error{where + " is damaged" + damaged};
    ZipEntry entry;
    entry.flags = readLE16(cursor + 8);
    entry.method = readLE16(cursor + 10);
    entry.crc32 = readLE32(cursor + 16);
    entry.compressedSize = readLE32(cursor + 20);
    entry.size = readLE32(cursor + 24);
    size_t nameLength = readLE16(cursor + 28);
    size_t extraLength = readLE16(cursor + 30);
    size_t commentLength = readLE16(cursor + 32);
    uint64_t localOffset = readLE32(cursor + 42);
    if (size_t(limit - cursor) <
        kCentralHeaderSize + nameLength + extraLength + commentLength)
      return Error{where + " is damaged" + damaged};
    entry.name.assign(
        reinterpret_cast<const char *>(cursor + kCentralHeaderSize),
        nameLength);
    where = "zip entry " + quoteName(entry.name);

    // The zip64 extra field holds, in this order, the fields saturated above.
    const uint8_t *extra = cursor + kCentralHeaderSize + nameLength;
    const uint8_t *extraEnd = extra + extraLength;
    bool needSize = entry.size == 0xffffffff;
    bool needCompressed = entry.compressedSize == 0xffffffff;
    bool needOffset = localOffset == 0xffffffff;
    while (extraEnd - extra >= 4) {
      uint16_t id = readLE16(extra);
      size_t length = readLE16(extra + 2);
      if (size_t(extraEnd - extra - 4) < length)
        return Error{where + ": damaged extra field" + damaged};
      if (id == 0x0001) {
        const uint8_t *field = extra + 4, *fieldEnd = field + length;
        auto take = [&](uint64_t &out) {
          if (fieldEnd - field < 8)
            return false;
          out = readLE64(field);
          field += 8;
          return true;
        };
        if ((needSize && !take(entry.size)) ||
            (needCompressed && !take(entry.compressedSize)) ||
            (needOffset && !take(localOffset)))
          return Error{where + ": zip64 extra field too short" + damaged};
        needSize = needCompressed = needOffset = false;
      }
      extra += 4 + length;
    }
    if (needSize || needCompressed || needOffset)
      return Error{where + ": zip64 extra field missing" + damaged};

    // The local header's name and extra lengths may differ from the central
    // ones (torch pads the local extra field to align the data).
    if (localOffset > size || size - localOffset < kLocalHeaderSize ||
        readLE32(data + localOffset) != kLocalHeaderSig)
      return Error{where + ": local header not found at offset " +
                   std::to_string(localOffset) + damaged};
    const uint8_t *local = data + localOffset;
    uint64_t dataOffset = localOffset + kLocalHeaderSize +
                          readLE16(local + 26) + readLE16(local + 28);
    if (dataOffset > size || entry.compressedSize > size - dataOffset)
      return Error{where + ": its " + std::to_string(entry.compressedSize) +
                   " bytes at offset " + std::to_string(dataOffset) +
                   " extend past the end of the file (" + std::to_string(size) +
                   " bytes)" + damaged};
    entry.dataOffset = dataOffset;
    entries.push_back(std::move(entry));
    cursor += kCentralHeaderSize + nameLength + extraLength + commentLength;
  }
  return entries;
}

Status tra::rt::checkZipEntryStored(const ZipEntry &entry) {
  if (entry.flags & 1)
    return Error{"zip entry " + quoteName(entry.name) + " is encrypted"};
  if (entry.method != 0)
    return Error{"zip entry " + quoteName(entry.name) +
                 " is compressed (method " + std::to_string(entry.method) +
                 "); torch.save stores entries uncompressed"};
  if (entry.compressedSize != entry.size)
    return Error{"zip entry " + quoteName(entry.name) +
                 " is stored with different compressed and uncompressed sizes"};
  return Status::success();
}

uint32_t tra::rt::zipCrc32(const uint8_t *data, uint64_t size, uint32_t crc) {
  const CrcTables &t = kCrcTables;
  crc = ~crc;
  for (; size >= 8; data += 8, size -= 8) {
    uint32_t low = crc ^ readLE32(data);
    uint32_t high = readLE32(data + 4);
    crc = t[7][low & 0xff] ^ t[6][(low >> 8) & 0xff] ^
          t[5][(low >> 16) & 0xff] ^ t[4][low >> 24] ^ t[3][high & 0xff] ^
          t[2][(high >> 8) & 0xff] ^ t[1][(high >> 16) & 0xff] ^
          t[0][high >> 24];
  }
  for (; size > 0; ++data, --size)
    crc = (crc >> 8) ^ t[0][(crc ^ *data) & 0xff];
  return ~crc;
}

Status tra::rt::checkZipEntryCrc(const ZipEntry &entry,
                                 const uint8_t *archive) {
  uint32_t actual = zipCrc32(archive + entry.dataOffset, entry.size);
  if (actual == entry.crc32)
    return Status::success();
  return Error{"zip entry " + quoteName(entry.name) + " is damaged: its " +
               std::to_string(entry.size) + " bytes have CRC-32 " +
               hex32(actual) + ", the archive records " + hex32(entry.crc32)};
}
