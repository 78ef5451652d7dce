// Result<T>: recoverable errors as values. Modules return Result; only main()
// turns an Error into a message and an exit code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace blkrr {

struct Error {
  std::string message;
  int exit_code = 1;  // suggested exit status for main()

  Error() = default;
  explicit Error(std::string msg, int code = 1) : message(std::move(msg)), exit_code(code) {}

  // Prefix context ("reading foo.blkrr: ") while keeping the code.
  [[nodiscard]] Error context(const std::string& what) const {
    return Error(what + ": " + message, exit_code);
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

inline Error make_error(std::string msg, int code = 1) {
  return Error(std::move(msg), code);
}

}  // namespace blkrr

// Propagate an error from an expression returning Result<...>.
#define BLKRR_TRY(expr)                             \
  do {                                              \
    auto blkrr_try_r_ = (expr);                     \
    if (!blkrr_try_r_) return blkrr_try_r_.error(); \
  } while (0)
