//===- File.h - Memory-mapped input and atomic output files -----*- C++ -*-===//
//
// Readers map files read-only so that large checkpoints are neither copied
// nor read beyond the bytes actually used. Writers go through
// `AtomicFileWriter`, which writes "FILE.tmp.<pid>" and renames it over FILE
// only once everything was written and synced: a reader never sees a
// half-written file under the final name, and a failed write leaves neither
// the temporary file nor a changed FILE behind.
//
// A mapped file must not be truncated by another process while mapped (the
// kernel would raise SIGBUS on access); the runtime's own writers never
// modify a file in place, they replace it.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_FILE_H
#define TRA_RUNTIME_FILE_H

#include "tra/Runtime/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tra::rt {

/// A regular file mapped read-only into memory.
class MappedFile {
public:
  /// Maps the file at `path`. Fails, naming `path`, if it cannot be opened,
  /// is a directory or another non-regular file, or cannot be mapped.
  static Result<std::shared_ptr<const MappedFile>>
  open(const std::string &path);

  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  /// Returns the path the file was opened with.
  const std::string &path() const { return filePath; }
  /// Returns the file contents (null for an empty file).
  const uint8_t *data() const { return bytes; }
  /// Returns the file size in bytes.
  size_t size() const { return length; }

  /// Hints that bytes [offset, offset + size) will be accessed in no
  /// particular order (`random` true: no read-ahead) or sequentially
  /// (`random` false: the default read-ahead). Only a hint; never fails.
  void adviseAccess(size_t offset, size_t size, bool random) const;
  /// Drops this process's pages of bytes [offset, offset + size) (after a
  /// copy of them was made: they no longer count in its resident memory; a
  /// later access reads them again). Only a hint; never fails.
  void releasePages(size_t offset, size_t size) const;

private:
  MappedFile(std::string path, const uint8_t *bytes, size_t length)
      : filePath(std::move(path)), bytes(bytes), length(length) {}

  std::string filePath;
  const uint8_t *bytes;
  size_t length;
};

/// Maps the pages of [data, data + bytes) into this process now (reading
/// them from the file if they are not in the page cache), so that the first
/// computation on them does not take one page fault per 4 KiB: what loading
/// a checkpoint into memory costs, paid when it is loaded. Works on mapped
/// files and on any other readable memory; only a hint, never fails.
void prefaultPages(const void *data, size_t bytes);

/// Drops the pages holding [data, data + bytes) of a private read-only
/// file mapping from this process's resident memory (a later read fetches
/// them from the file again). The first page is dropped whole.
void releaseFilePages(const void *data, size_t bytes);

/// Reads a whole file into a string, failing with a message naming `path`.
Result<std::string> readFile(const std::string &path);

/// Writes a file atomically: the data goes to a temporary file next to the
/// destination, which `commit` syncs and renames over the destination. If the
/// writer is destroyed without a successful `commit`, or a step fails, the
/// temporary file is removed and the destination is left untouched.
class AtomicFileWriter {
public:
  /// Creates the temporary file "PATH.tmp.<pid>" (with a further ".<n>"
  /// suffix if that name is taken).
  static Result<AtomicFileWriter> create(const std::string &path);

  AtomicFileWriter(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter &operator=(AtomicFileWriter &&) = delete;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  /// Appends `size` bytes. After a failure the writer is discarded and every
  /// later call fails.
  Status write(const void *data, size_t size);
  /// Syncs the temporary file, closes it and renames it to the destination.
  Status commit();
  /// Removes the temporary file; the destination is left untouched.
  void discard();

  /// Returns the destination path.
  const std::string &path() const { return finalPath; }
  /// Returns the temporary file's path.
  const std::string &temporaryPath() const { return tempPath; }

private:
  AtomicFileWriter(int fd, std::string finalPath, std::string tempPath)
      : fd(fd), finalPath(std::move(finalPath)), tempPath(std::move(tempPath)) {
  }

  int fd = -1;
  std::string finalPath;
  std::string tempPath;
};

/// Commits every writer in order (all of several outputs complete in their
/// temporary files before any replaces its destination); on the first
/// failure the rest are discarded.
Status commitAll(std::vector<AtomicFileWriter> &writers);

/// Whether `a` and `b` name the same file (after resolving `.`/`..`,
/// symbolic links and the current directory; the file need not exist).
bool samePath(const std::string &a, const std::string &b);

} // namespace tra::rt

#endif // TRA_RUNTIME_FILE_H
