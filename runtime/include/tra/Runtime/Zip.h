//===- Zip.h - The central directory of zip archives ------------*- C++ -*-===//
//
// Locates the entries of a zip archive held in memory (a memory-mapped
// file), for formats built on zip whose entries are stored uncompressed, as
// torch.save's are. It reads the end-of-central-directory record (and the
// zip64 records that replace its saturated fields for archives beyond 4 GiB
// or 65535 entries), then every central directory entry and the local header
// it points to, checking that each entry's bytes lie inside the archive.
// Multi-disk archives are refused. Reading the directory does not read the
// entries' bytes, so it does not verify their CRC-32s: a reader calls
// `checkZipEntryCrc` for an entry when it reads the entry's bytes in full
// (Pth.h does, for the pickle at open and for a storage the first time one
// read covers all of it).
//
// Messages describe the problem without the file's name, which the caller
// (who knows it) puts first.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_ZIP_H
#define TRA_RUNTIME_ZIP_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tra::rt {

/// An entry of the zip central directory, with its data located.
struct ZipEntry {
  std::string name;
  /// The compression method (0: stored) and general purpose flags (bit 0:
  /// encrypted), as recorded in the central directory.
  uint16_t method = 0;
  uint16_t flags = 0;
  /// The entry's size uncompressed, and as stored in the archive.
  uint64_t size = 0;
  uint64_t compressedSize = 0;
  /// The CRC-32 of the uncompressed bytes, as the central directory records
  /// it.
  uint32_t crc32 = 0;
  /// The offset of the stored bytes in the archive, past the local header:
  /// [dataOffset, dataOffset + compressedSize) lies inside the archive.
  uint64_t dataOffset = 0;
};

/// Returns true if the `size` bytes at `data` start with a zip local file
/// header, as an archive whose first entry is at offset 0 does.
bool hasZipLocalHeader(const uint8_t *data, uint64_t size);

/// Reads the central directory of the zip archive of `size` bytes at `data`,
/// locating each entry's data through its local header, and returns the
/// entries in directory order. Fails with the problem (ending in
/// "(truncated or damaged file?)" where the structure is damaged).
Result<std::vector<ZipEntry>> readZipDirectory(const uint8_t *data,
                                               uint64_t size);

/// Succeeds if `entry` is stored as is (not encrypted, not compressed, the
/// same size stored and uncompressed), so that its bytes are the archive's
/// bytes at `dataOffset`; fails naming the entry otherwise.
Status checkZipEntryStored(const ZipEntry &entry);

/// Returns the CRC-32 of the `size` bytes at `data` (the checksum of zip,
/// gzip and zlib's crc32: polynomial 0xEDB88320, reflected), continuing
/// from `crc`, the CRC-32 of the bytes before them (0 for none).
uint32_t zipCrc32(const uint8_t *data, uint64_t size, uint32_t crc = 0);

/// Succeeds if the bytes of the stored entry `entry` of the archive at
/// `archive` have the CRC-32 its directory records; fails naming the entry
/// and both checksums otherwise ("zip entry 'NAME' is damaged: ..."). Reads
/// every byte of the entry.
Status checkZipEntryCrc(const ZipEntry &entry, const uint8_t *archive);

} // namespace tra::rt

#endif // TRA_RUNTIME_ZIP_H
