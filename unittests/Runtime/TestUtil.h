//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//

#ifndef TRA_UNITTESTS_RUNTIME_TESTUTIL_H
#define TRA_UNITTESTS_RUNTIME_TESTUTIL_H

#include "tra/Runtime/Tensor.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tra::rt::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
/// destruction.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/tra-rt-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    dir = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  /// Returns the directory path.
  const std::string &path() const { return dir; }
  /// Returns the path of `name` inside the directory.
  std::string file(const std::string &name) const { return dir + "/" + name; }
  /// Returns the names of the entries in the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(dir))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  std::string dir;
};

/// Expects `result` (a Result or Status) to be a failure whose message
/// holds each of the strings that follow.
#define EXPECT_ERROR(result, ...)                                              \
  do {                                                                         \
    auto &&r_ = (result);                                                      \
    ASSERT_FALSE(r_.ok()) << "expected an error";                              \
    for (const std::string &part_ : std::vector<std::string>{__VA_ARGS__})     \
      EXPECT_NE(r_.message().find(part_), std::string::npos)                   \
          << "message: " << r_.message() << "\nlacks: " << part_;              \
  } while (0)

/// Writes `bytes` to `path`, replacing it.
inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// Returns the contents of `path` ("" if it cannot be read).
inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

/// Returns a tensor of `dtype` and `shape` filled with pseudo-random bytes
/// (any bit pattern, including NaNs), different for each `seed`.
inline HostTensor patternTensor(DType dtype, std::vector<int64_t> shape,
                                uint32_t seed = 1) {
  HostTensor tensor = HostTensor::zeros(dtype, std::move(shape));
  uint8_t *bytes = tensor.mutableData();
  uint32_t state = seed * 2654435761u + 12345;
  for (size_t i = 0; i < tensor.byteSize(); ++i) {
    state = state * 1664525u + 1013904223u;
    bytes[i] = static_cast<uint8_t>(state >> 24);
  }
  return tensor;
}

/// The value element `i` has in the tensors the NumPy cross-checks exchange;
/// the Python side computes the same (see `kPythonExpected`).
inline double expectedValue(DType dtype, int64_t i) {
  switch (dtype) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64:
    return static_cast<double>(i % 16) * 0.75 - 2.5;
  case DType::U8:
    return static_cast<double>((i * 7) % 256);
  case DType::Bool:
    return i % 3 == 0 ? 1 : 0;
  default:
    return static_cast<double>((i % 40) * 3 - 60);
  }
}

/// Python source defining `expected(kind, n)` to match `expectedValue`,
/// where kind is a NumPy dtype kind character ('f', 'i', 'u', 'b').
inline const char *const kPythonExpected = R"(
import numpy as np
def expected(kind, n):
    i = np.arange(n, dtype=np.int64)
    if kind == 'f':
        return (i % 16) * 0.75 - 2.5
    if kind == 'u':
        return (i * 7) % 256
    if kind == 'b':
        return i % 3 == 0
    return (i % 40) * 3 - 60
)";

/// Returns a tensor whose elements are `expectedValue(dtype, i)`.
inline HostTensor expectedTensor(DType dtype, std::vector<int64_t> shape) {
  int64_t count = shapeElementCount(shape).value_or(0);
  std::vector<double> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = expectedValue(dtype, i);
  return HostTensor::fromDoubles(dtype, std::move(shape), values);
}

/// Extracts a tile element by element, from the definition.
inline HostTensor naiveTile(const HostTensor &t,
                            const std::vector<int64_t> &offsets,
                            const std::vector<int64_t> &sizes) {
  HostTensor tile = HostTensor::zeros(t.dtype(), sizes);
  size_t elementSize = dtypeSize(t.dtype());
  int64_t count = tile.numElements();
  size_t rank = sizes.size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, source = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t index = rest % sizes[d];
      rest /= sizes[d];
      source += (offsets[d] + index) * stride;
      stride *= t.shape()[d];
    }
    std::memcpy(tile.mutableData() + i * elementSize,
                t.data() + source * elementSize, elementSize);
  }
  return tile;
}

/// The outcome of running a command.
struct CommandResult {
  int exitCode = -1;
  std::string output; // stdout and stderr, interleaved
};

/// Runs `command` through the shell, capturing stdout and stderr.
inline CommandResult runCommand(const std::string &command) {
  CommandResult result;
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// Quotes `text` for the shell.
inline std::string shellQuote(const std::string &text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// The Python the cross-checks run. NumPy and PyTorch are declared
/// dependencies of the tests (scripts/setup.sh installs python3-numpy and
/// python3-torch), so a test that needs them fails, rather than skips, when
/// they are missing: a skipped cross-check looks like a passing one.
inline const char *const kPython = "/usr/bin/python3";

/// "" when kPython runs and imports `modules` (e.g. "torch, numpy"; "" for
/// Python alone); otherwise what is wrong and how to fix it.
/// Each answer is computed once per process.
inline std::string pythonProblem(const std::string &modules) {
  static std::map<std::string, std::string> known;
  auto it = known.find(modules);
  if (it != known.end())
    return it->second;
  std::string &problem = known[modules];
  if (::access(kPython, X_OK) != 0)
    return problem = std::string(kPython) +
                     " not found: the runtime's cross-checks need it (run "
                     "scripts/setup.sh, or apt-get install python3 "
                     "python3-numpy python3-torch)";
  if (modules.empty())
    return problem;
  CommandResult result = runCommand(std::string(kPython) + " -c " +
                                    shellQuote("import " + modules));
  if (result.exitCode != 0)
    problem = std::string(kPython) + " cannot import " + modules +
              ", declared dependencies of these tests (run scripts/setup.sh, "
              "or apt-get install python3-numpy python3-torch):\n" +
              result.output;
  return problem;
}

/// Fails the test (fatally, from the test body) unless kPython imports
/// `modules`.
#define TRA_REQUIRE_PYTHON(modules)                                            \
  do {                                                                         \
    std::string problem_ = ::tra::rt::test::pythonProblem(modules);            \
    if (!problem_.empty())                                                     \
      GTEST_FAIL() << problem_;                                                \
  } while (false)

} // namespace tra::rt::test

#endif // TRA_UNITTESTS_RUNTIME_TESTUTIL_H
