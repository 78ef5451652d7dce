// Result<T>: recoverable errors as values. Modules return Result; only main()
// turns an Error into a message and an exit code.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace blkrr {

// What kind of failure an Error is, so that a caller can react to it (give
// up on EPERM, create on ENOENT, tell "bad input" from "broken system")
// without reading the message.
enum class ErrorKind : uint8_t {
  kFailed,       // nothing more specific known
  kNotFound,     // ENOENT, ENODEV, ENXIO: a file, device or kernel object is missing
  kPermission,   // EPERM, EACCES, EROFS: refused by the kernel, an LSM or lockdown
  kBadInput,     // the input is malformed, truncated or out of range
  kUnsupported,  // ENOSYS, EOPNOTSUPP, EINVAL from the kernel: this system cannot do it
  kIo,           // EIO, ENOSPC, EDQUOT and other errors of reading or writing
  kUsage,        // the command as given cannot run: an option, argument, target or input
                 // the user must change (nothing was done)
  kInterrupted,  // stopped by a signal before it could do its work
  kInternal,     // a bug of blkrr's own (e.g. a clash in an option table)
};

inline ErrorKind error_kind_of_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return ErrorKind::kNotFound;
    case EPERM:
    case EACCES:
    case EROFS:
      return ErrorKind::kPermission;
    case ENOSYS:
    case EOPNOTSUPP:
    case EINVAL:
      return ErrorKind::kUnsupported;
    case EIO:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return ErrorKind::kIo;
    default:
      return ErrorKind::kFailed;
  }
}

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kFailed;
  int sys_errno = 0;  // the errno behind the failure, 0 if none

  Error() = default;
  explicit Error(std::string msg) : message(std::move(msg)) {}
  Error(ErrorKind k, std::string msg) : message(std::move(msg)), kind(k) {}

  // A failed system call: "WHAT: strerror(err)" (plus `hint` if not empty),
  // its kind derived from `err` (a positive errno).
  static Error system(const std::string& what, int err, const std::string& hint = "") {
    Error e(error_kind_of_errno(err),
            what + ": " + std::strerror(err) + (hint.empty() ? "" : "; " + hint));
    e.sys_errno = err;
    return e;
  }

  // The same error as another kind: a system failure the user must answer by
  // changing the command (Error::system(...).as(ErrorKind::kUsage)).
  [[nodiscard]] Error as(ErrorKind k) const {
    Error e = *this;
    e.kind = k;
    return e;
  }
  // Prefix context ("reading foo.blkrr: ") while keeping kind and errno.
  [[nodiscard]] Error context(const std::string& what) const {
    Error e = *this;
    e.message = what + ": " + message;
    return e;
  }
  // Append to the message (" (disk full?)") while keeping kind and errno.
  [[nodiscard]] Error append(const std::string& tail) const {
    Error e = *this;
    e.message += tail;
    return e;
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error err) : v_(std::move(err)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T&& operator*() && { return std::get<0>(std::move(v_)); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error err) : err_(std::move(err)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace blkrr

// Propagate an error from an expression returning Result<...>.
#define BLKRR_TRY(expr)                             \
  do {                                              \
    auto blkrr_try_r_ = (expr);                     \
    if (!blkrr_try_r_) return blkrr_try_r_.error(); \
  } while (0)
