//===- ZipTest.cpp - The zip central directory reader ---------------------===//
//
// Archives are built byte by byte here, so every field the reader checks can
// be damaged on purpose; PthTest reads archives Python's zipfile writes.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Zip.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace tra::rt;

namespace {

void put16(std::string &out, uint64_t value) {
  for (int i = 0; i < 2; ++i)
    out.push_back(char(value >> (8 * i)));
}
void put32(std::string &out, uint64_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(char(value >> (8 * i)));
}
void put64(std::string &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char(value >> (8 * i)));
}
void set32(std::string &out, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out[at + i] = char(value >> (8 * i));
}

struct TestEntry {
  std::string name, data;
  uint16_t method = 0, flags = 0;
  /// Bytes of padding in the local header's extra field (torch aligns the
  /// data this way); the central header's extra field stays empty.
  size_t localPadding = 0;
};

/// A zip archive, and where its records start.
struct TestArchive {
  std::string bytes;
  std::vector<size_t> localOffsets, dataOffsets;
  size_t directoryOffset = 0, endOffset = 0;
  const uint8_t *data() const {
    return reinterpret_cast<const uint8_t *>(bytes.data());
  }
};

/// Writes a stored zip archive of `entries`. With `zip64`, the sizes and
/// offsets of every entry, and the directory's count, size and offset, are
/// saturated and given in zip64 records, as for an archive beyond 4 GiB.
TestArchive makeZip(const std::vector<TestEntry> &entries, bool zip64 = false,
                    const std::string &comment = "") {
  TestArchive archive;
  std::string &out = archive.bytes;
  for (const TestEntry &e : entries) {
    archive.localOffsets.push_back(out.size());
    put32(out, 0x04034b50);
    put16(out, 20);       // version needed
    put16(out, e.flags);  // flags
    put16(out, e.method); // method
    put32(out, 0);        // time, date
    put32(out, 0);        // crc (not checked)
    put32(out, e.data.size());
    put32(out, e.data.size());
    put16(out, e.name.size());
    put16(out, e.localPadding);
    out += e.name;
    out.append(e.localPadding, '\0');
    archive.dataOffsets.push_back(out.size());
    out += e.data;
  }
  archive.directoryOffset = out.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const TestEntry &e = entries[i];
    std::string extra;
    if (zip64) {
      put16(extra, 0x0001);
      put16(extra, 24);
      put64(extra, e.data.size());
      put64(extra, e.data.size());
      put64(extra, archive.localOffsets[i]);
    }
    put32(out, 0x02014b50);
    put16(out, 45); // version made by
    put16(out, 45); // version needed
    put16(out, e.flags);
    put16(out, e.method);
    put32(out, 0); // time, date
    put32(out, 0); // crc
    put32(out, zip64 ? 0xffffffff : e.data.size());
    put32(out, zip64 ? 0xffffffff : e.data.size());
    put16(out, e.name.size());
    put16(out, extra.size());
    put16(out, 0); // comment length
    put16(out, 0); // disk
    put16(out, 0); // internal attributes
    put32(out, 0); // external attributes
    put32(out, zip64 ? 0xffffffff : archive.localOffsets[i]);
    out += e.name;
    out += extra;
  }
  const size_t directorySize = out.size() - archive.directoryOffset;
  if (zip64) {
    const size_t recordOffset = out.size();
    put32(out, 0x06064b50);
    put64(out, 44); // size of the rest of the record
    put16(out, 45);
    put16(out, 45);
    put32(out, 0); // this disk
    put32(out, 0); // directory's disk
    put64(out, entries.size());
    put64(out, entries.size());
    put64(out, directorySize);
    put64(out, archive.directoryOffset);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, recordOffset);
    put32(out, 1); // disks
  }
  archive.endOffset = out.size();
  put32(out, 0x06054b50);
  put16(out, 0); // this disk
  put16(out, 0); // directory's disk
  put16(out, zip64 ? 0xffff : entries.size());
  put16(out, zip64 ? 0xffff : entries.size());
  put32(out, zip64 ? 0xffffffff : directorySize);
  put32(out, zip64 ? 0xffffffff : archive.directoryOffset);
  put16(out, comment.size());
  out += comment;
  return archive;
}

const std::vector<TestEntry> kEntries = {
    {"archive/data.pkl", "pickle bytes"},
    {"archive/data/0", std::string(64, 'x'), 0, 0, 37},
    {"archive/empty", ""},
};

/// Reads `archive` and expects the entries of kEntries.
void expectEntries(const TestArchive &archive) {
  ASSERT_TRUE(hasZipLocalHeader(archive.data(), archive.bytes.size()));
  Result<std::vector<ZipEntry>> entries =
      readZipDirectory(archive.data(), archive.bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.message();
  ASSERT_EQ(entries->size(), kEntries.size());
  for (size_t i = 0; i < kEntries.size(); ++i) {
    const ZipEntry &e = (*entries)[i];
    EXPECT_EQ(e.name, kEntries[i].name);
    EXPECT_EQ(e.size, kEntries[i].data.size());
    EXPECT_EQ(e.compressedSize, kEntries[i].data.size());
    EXPECT_EQ(e.dataOffset, archive.dataOffsets[i]) << e.name;
    EXPECT_EQ(archive.bytes.substr(e.dataOffset, e.size), kEntries[i].data);
    EXPECT_TRUE(checkZipEntryStored(e).ok());
  }
}

/// Expects reading `bytes` to fail with a message containing `part`.
void expectError(const std::string &bytes, const std::string &part) {
  Result<std::vector<ZipEntry>> entries = readZipDirectory(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  ASSERT_FALSE(entries.ok()) << "expected: " << part;
  EXPECT_NE(entries.message().find(part), std::string::npos)
      << "'" << part << "' not in: " << entries.message();
}

TEST(ZipTest, LocatesEntriesAndTheirData) {
  expectEntries(makeZip(kEntries));
  // The end record may be followed by a comment (which may even contain
  // something that looks like an end record).
  TestArchive commented = makeZip(kEntries, false,
                                  std::string("PK\x05\x06", 4) + " a comment " +
                                      std::string(40, '-'));
  expectEntries(commented);
  Result<std::vector<ZipEntry>> none =
      readZipDirectory(makeZip({}).data(), makeZip({}).bytes.size());
  ASSERT_TRUE(none.ok()) << none.message();
  EXPECT_TRUE(none->empty());
}

TEST(ZipTest, Zip64Records) { expectEntries(makeZip(kEntries, true)); }

TEST(ZipTest, NotAZipArchive) {
  EXPECT_FALSE(hasZipLocalHeader(nullptr, 0));
  const std::string text = "hello world, not a zip archive";
  EXPECT_FALSE(hasZipLocalHeader(reinterpret_cast<const uint8_t *>(text.data()),
                                 text.size()));
  expectError("hello", "not a zip archive: only 5 bytes");
  expectError(text, "no zip end-of-central-directory record found "
                    "(truncated or damaged file?)");
}

TEST(ZipTest, TruncatedArchives) {
  const TestArchive archive = makeZip(kEntries);
  // Cut anywhere, the end record is gone.
  for (size_t keep : {archive.bytes.size() - 1, archive.endOffset,
                      archive.directoryOffset + 10, size_t(40)})
    expectError(archive.bytes.substr(0, keep),
                "no zip end-of-central-directory record found (truncated");

  // A central directory cut short (the end record kept, claiming three
  // entries), the directory's last entry is damaged.
  std::string cut = archive.bytes.substr(0, archive.endOffset - 20) +
                    archive.bytes.substr(archive.endOffset);
  set32(cut, cut.size() - 22 + 12,
        archive.endOffset - 20 - archive.directoryOffset);
  expectError(cut, "zip central directory entry 2 is damaged (truncated");

  // A directory larger than the bytes before the end record.
  std::string large = archive.bytes;
  set32(large, archive.endOffset + 12,
        archive.endOffset - archive.directoryOffset + 1);
  expectError(large, "zip central directory (offset " +
                         std::to_string(archive.directoryOffset) + ", " +
                         std::to_string(archive.endOffset -
                                        archive.directoryOffset + 1) +
                         " bytes) lies outside the file (truncated");
}

TEST(ZipTest, DamagedEntries) {
  const TestArchive archive = makeZip(kEntries);
  const size_t central1 =
      archive.directoryOffset + 46 + kEntries[0].name.size();

  // An entry whose local header offset points elsewhere.
  std::string moved = archive.bytes;
  set32(moved, central1 + 42, archive.localOffsets[1] + 1);
  expectError(moved, "zip entry 'archive/data/0': local header not found at "
                     "offset " +
                         std::to_string(archive.localOffsets[1] + 1));

  // An entry whose data runs past the end of the file.
  std::string longer = archive.bytes;
  set32(longer, central1 + 20, uint32_t(archive.bytes.size()));
  set32(longer, central1 + 24, uint32_t(archive.bytes.size()));
  expectError(longer, "zip entry 'archive/data/0': its " +
                          std::to_string(archive.bytes.size()) +
                          " bytes at offset " +
                          std::to_string(archive.dataOffsets[1]) +
                          " extend past the end of the file");

  // A saturated size without a zip64 extra field.
  std::string saturated = archive.bytes;
  set32(saturated, central1 + 24, 0xffffffff);
  expectError(saturated, "zip entry 'archive/data/0': zip64 extra field "
                         "missing");

  // A saturated directory without the zip64 locator.
  std::string count = archive.bytes;
  count[archive.endOffset + 8] = count[archive.endOffset + 10] = '\xff';
  count[archive.endOffset + 9] = count[archive.endOffset + 11] = '\xff';
  expectError(count, "zip64 end-of-central-directory locator missing");

  // Multi-disk archives.
  std::string disks = archive.bytes;
  disks[archive.endOffset + 4] = 1;
  expectError(disks, "multi-disk zip archives are not supported");
}

TEST(ZipTest, StoredEntriesOnly) {
  ZipEntry entry;
  entry.name = "archive/data/0";
  entry.size = entry.compressedSize = 8;
  EXPECT_TRUE(checkZipEntryStored(entry).ok());
  entry.method = 8;
  EXPECT_EQ(checkZipEntryStored(entry).message(),
            "zip entry 'archive/data/0' is compressed (method 8); torch.save "
            "stores entries uncompressed");
  entry.method = 0;
  entry.flags = 1;
  EXPECT_EQ(checkZipEntryStored(entry).message(),
            "zip entry 'archive/data/0' is encrypted");
  entry.flags = 0;
  entry.compressedSize = 7;
  EXPECT_NE(checkZipEntryStored(entry).message().find(
                "different compressed and uncompressed sizes"),
            std::string::npos);

  // The reader reports what the directory says; the caller decides.
  std::vector<TestEntry> deflated = kEntries;
  deflated[1].method = 8;
  TestArchive archive = makeZip(deflated);
  Result<std::vector<ZipEntry>> entries =
      readZipDirectory(archive.data(), archive.bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.message();
  EXPECT_EQ((*entries)[1].method, 8);
  EXPECT_FALSE(checkZipEntryStored((*entries)[1]).ok());
}

TEST(ZipTest, Crc32) {
  auto crc = [](const std::string &text, uint32_t start = 0) {
    return zipCrc32(reinterpret_cast<const uint8_t *>(text.data()), text.size(),
                    start);
  };
  // The check value of CRC-32/ISO-HDLC, and zlib.crc32 of a longer text.
  EXPECT_EQ(crc(""), 0u);
  EXPECT_EQ(crc("123456789"), 0xcbf43926u);
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc(fox), 0x414fa339u);
  // Continuing from the CRC of a prefix, at every split (odd lengths and
  // alignments take the byte-wise tail).
  for (size_t split = 0; split <= fox.size(); ++split)
    EXPECT_EQ(crc(fox.substr(split), crc(fox.substr(0, split))), 0x414fa339u)
        << split;
}

TEST(ZipTest, EntryCrcIsVerifiedWhenAsked) {
  TestArchive archive = makeZip({{"archive/data/0", "123456789"}});
  // The directory records the CRC-32 (makeZip writes 0; set it).
  set32(archive.bytes, archive.directoryOffset + 16, 0xcbf43926);
  Result<std::vector<ZipEntry>> entries =
      readZipDirectory(archive.data(), archive.bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.message();
  EXPECT_EQ((*entries)[0].crc32, 0xcbf43926u);
  EXPECT_TRUE(checkZipEntryCrc((*entries)[0], archive.data()).ok());
  // One damaged byte of the data: reading the directory does not notice,
  // the CRC check does, naming the entry and both checksums.
  archive.bytes[archive.dataOffsets[0] + 4] ^= 0x20;
  entries = readZipDirectory(archive.data(), archive.bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.message();
  Status damaged = checkZipEntryCrc((*entries)[0], archive.data());
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.message().rfind("zip entry 'archive/data/0' is damaged: "
                                    "its 9 bytes have CRC-32 0x",
                                    0),
            0u)
      << damaged.message();
  EXPECT_NE(damaged.message().find("the archive records 0xcbf43926"),
            std::string::npos)
      << damaged.message();
}

} // namespace
