//===- Error.h - Error and result types for the runtime ---------*- C++ -*-===//
//
// The runtime reports failures as values, not exceptions: a function that can
// fail returns `Status` (nothing on success) or `Result<T>` (a T on success).
// Every message produced by a file-reading or file-writing function starts
// with the file it is about, as in "model.safetensors: tensor 'w': ...", so a
// tool can print it unchanged after "error: ".
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_ERROR_H
#define TRA_RUNTIME_ERROR_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tra::rt {

/// A failure, described by a complete human-readable message.
struct Error {
  std::string message;
};

/// Returns an error whose message is "FILE: PROBLEM".
inline Error fileError(std::string_view file, std::string_view problem) {
  std::string message;
  message.reserve(file.size() + 2 + problem.size());
  message.append(file).append(": ").append(problem);
  return Error{std::move(message)};
}

/// Returns `name` in single quotes, as messages quote the names of tensors,
/// entries and keys: "tensor 'w'".
inline std::string quoteName(std::string_view name) {
  return "'" + std::string(name) + "'";
}

/// Returns "WHAT: <strerror(err)>", the problem of a failed system call.
inline std::string systemError(const std::string &what, int err) {
  return what + ": " + std::strerror(err);
}

namespace detail {
/// Aborts with `what`; used when a caller reads the value of a failed result.
[[noreturn]] inline void fatalAccess(const char *what, const Error *error) {
  std::fprintf(stderr, "tra runtime: %s%s%s\n", what, error ? ": " : "",
               error ? error->message.c_str() : "");
  std::abort();
}
} // namespace detail

/// Success, or an `Error`.
class [[nodiscard]] Status {
public:
  /// Constructs a successful status.
  Status() = default;
  /// Constructs a failed status.
  Status(Error error) : failure(std::move(error)) {}

  /// Returns a successful status.
  static Status success() { return Status(); }

  /// Returns true on success.
  bool ok() const { return !failure.has_value(); }
  explicit operator bool() const { return ok(); }

  /// Returns the error. Must only be called on a failed status.
  const Error &error() const {
    if (!failure)
      detail::fatalAccess("error() called on a successful Status", nullptr);
    return *failure;
  }
  /// Returns the error message, or "" on success.
  const std::string &message() const {
    static const std::string empty;
    return failure ? failure->message : empty;
  }

private:
  std::optional<Error> failure;
};

/// A value of type `T`, or an `Error`.
template <class T> class [[nodiscard]] Result {
public:
  /// Constructs a successful result holding `value`.
  Result(T value) : storage(std::in_place_index<0>, std::move(value)) {}
  /// Constructs a failed result.
  Result(Error error) : storage(std::in_place_index<1>, std::move(error)) {}
  /// Constructs a failed result from a failed status.
  Result(const Status &status)
      : storage(std::in_place_index<1>, status.error()) {}

  /// Returns true on success.
  bool ok() const { return storage.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// Returns the value. Aborts if the result holds an error.
  T &value() & {
    check();
    return std::get<0>(storage);
  }
  const T &value() const & {
    check();
    return std::get<0>(storage);
  }
  T &&value() && {
    check();
    return std::get<0>(std::move(storage));
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  /// Returns the error. Must only be called on a failed result.
  const Error &error() const {
    if (ok())
      detail::fatalAccess("error() called on a successful Result", nullptr);
    return std::get<1>(storage);
  }
  /// Returns the error message, or "" on success.
  const std::string &message() const {
    static const std::string empty;
    return ok() ? empty : std::get<1>(storage).message;
  }
  /// Returns the outcome without the value.
  Status status() const { return ok() ? Status() : Status(error()); }

private:
  void check() const {
    if (!ok())
      detail::fatalAccess("value() called on a failed Result",
                          &std::get<1>(storage));
  }

  std::variant<T, Error> storage;
};

} // namespace tra::rt

#endif // TRA_RUNTIME_ERROR_H
