//===- File.cpp - Memory-mapped input and atomic output files -------------===//

#include "tra/Runtime/File.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tra::rt;

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

Result<std::shared_ptr<const MappedFile>>
MappedFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return fileError(path, systemError("cannot open file", err));
  }
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int err = errno;
    Error error = fileError(path, systemError("cannot stat file", err));
    ::close(fd);
    return error;
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return fileError(path, "is a directory, not a file");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return fileError(path, "is not a regular file");
  }
  size_t length = static_cast<size_t>(info.st_size);
  const uint8_t *bytes = nullptr;
  if (length > 0) {
    void *address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      int err = errno;
      Error error = fileError(path, systemError("cannot map file", err));
      ::close(fd);
      return error;
    }
    bytes = static_cast<const uint8_t *>(address);
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(path, bytes, length));
}

MappedFile::~MappedFile() {
  if (bytes)
    ::munmap(const_cast<uint8_t *>(bytes), length);
}

void MappedFile::adviseAccess(size_t offset, size_t size, bool random) const {
  if (!bytes || size == 0 || offset >= length)
    return;
  size_t pageSize = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t begin = offset / pageSize * pageSize;
  size_t end = std::min(length, offset + size);
  ::madvise(const_cast<uint8_t *>(bytes) + begin, end - begin,
            random ? MADV_RANDOM : MADV_NORMAL);
}

void MappedFile::releasePages(size_t offset, size_t size) const {
  if (!bytes || size == 0 || offset >= length)
    return;
  releaseFilePages(bytes + offset, std::min(length - offset, size));
}

void tra::rt::releaseFilePages(const void *data, size_t bytes) {
  if (!data || bytes == 0)
    return;
  uintptr_t pageSize = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) / pageSize * pageSize;
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

void tra::rt::prefaultPages(const void *data, size_t bytes) {
  if (!data || bytes == 0)
    return;
  uintptr_t pageSize = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) / pageSize * pageSize;
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
#ifdef MADV_POPULATE_READ
  // One system call instead of a fault per page (Linux 5.14 and later).
  if (::madvise(reinterpret_cast<void *>(begin), end - begin,
                MADV_POPULATE_READ) == 0)
    return;
#endif
  volatile uint8_t sink = 0;
  for (uintptr_t page = reinterpret_cast<uintptr_t>(data); page < end;
       page += pageSize)
    sink = sink + *reinterpret_cast<const volatile uint8_t *>(page);
  (void)sink;
}

Result<std::string> tra::rt::readFile(const std::string &path) {
  Result<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  const MappedFile &mapped = **file;
  return std::string(reinterpret_cast<const char *>(mapped.data()),
                     mapped.size());
}

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

Result<AtomicFileWriter> AtomicFileWriter::create(const std::string &path) {
  std::string base = path + ".tmp." + std::to_string(::getpid());
  std::string temp = base;
  for (int attempt = 1;; ++attempt) {
    int fd =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
      return AtomicFileWriter(fd, path, temp);
    int err = errno;
    if (err != EEXIST || attempt >= 1000)
      return fileError(
          path,
          systemError("cannot create temporary file '" + temp + "'", err));
    temp = base + "." + std::to_string(attempt);
  }
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter &&other) noexcept
    : fd(other.fd), finalPath(std::move(other.finalPath)),
      tempPath(std::move(other.tempPath)) {
  other.fd = -1;
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (fd < 0)
    return;
  ::close(fd);
  ::unlink(tempPath.c_str());
  fd = -1;
}

Status AtomicFileWriter::write(const void *data, size_t size) {
  if (fd < 0)
    return fileError(finalPath, "write after the file was closed");
  if (size == 0)
    return Status::success();
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      int err = errno;
      if (err == EINTR)
        continue;
      Error error = fileError(finalPath, systemError("cannot write", err));
      discard();
      return error;
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return Status::success();
}

Status AtomicFileWriter::commit() {
  if (fd < 0)
    return fileError(finalPath, "commit after the file was closed");
  // EINVAL: the file system does not support syncing; nothing to wait for.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    int err = errno;
    Error error = fileError(finalPath, systemError("cannot sync", err));
    discard();
    return error;
  }
  int closeResult = ::close(fd);
  int closeErrno = errno;
  fd = -1;
  if (closeResult != 0) {
    Error error = fileError(finalPath, systemError("cannot close", closeErrno));
    ::unlink(tempPath.c_str());
    return error;
  }
  if (::rename(tempPath.c_str(), finalPath.c_str()) != 0) {
    int err = errno;
    Error error = fileError(
        finalPath, systemError("cannot rename '" + tempPath + "' to it", err));
    ::unlink(tempPath.c_str());
    return error;
  }
  return Status::success();
}

Status tra::rt::commitAll(std::vector<AtomicFileWriter> &writers) {
  for (size_t i = 0; i < writers.size(); ++i)
    if (Status status = writers[i].commit(); !status) {
      for (size_t j = i + 1; j < writers.size(); ++j)
        writers[j].discard();
      return status;
    }
  return Status::success();
}

bool tra::rt::samePath(const std::string &a, const std::string &b) {
  std::error_code ea, eb;
  std::filesystem::path pa = std::filesystem::weakly_canonical(a, ea);
  std::filesystem::path pb = std::filesystem::weakly_canonical(b, eb);
  if (ea || eb)
    return a == b;
  return pa == pb;
}
