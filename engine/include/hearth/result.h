// Errors as values: every fallible engine call returns Result<T>, which holds
// either a value or an Error naming what went wrong. Nothing in the engine
// throws to its caller, calls exit or abort; asserts guard programming errors.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hearth {

// Serialized by the CLI's --json output: do not change or reuse values.
enum class ErrorCode : int {
  kInvalidArgument = 1,  // a caller passed something malformed
  kNotFound = 2,         // a file, key, tensor or model does not exist
  kIo = 3,               // reading or writing failed (permissions, disk full)
  kCorruptFile = 4,      // a file's contents violate its format
  kUnsupported = 5,      // valid input the engine does not implement
  kOutOfMemory = 6,      // RAM or VRAM budget exhausted
  kContextExceeded = 7,  // a prompt or generation does not fit the context
  kCancelled = 8,        // the request was cancelled
  kInternal = 9,         // a bug: an invariant did not hold
};

const char* to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  // one line, names the offending field / file / value

  std::string describe() const { return std::string(to_string(code)) + ": " + message; }
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace hearth

// Propagates an error from an expression returning Result<...>.
#define HEARTH_TRY(expr)                                                   \
  do {                                                                     \
    auto hearth_try_result_ = (expr);                                      \
    if (!hearth_try_result_) return std::move(hearth_try_result_).error(); \
  } while (0)

// Declares `lhs` from the value of a Result-returning expression, or returns its error.
#define HEARTH_CONCAT_INNER_(a, b) a##b
#define HEARTH_CONCAT_(a, b) HEARTH_CONCAT_INNER_(a, b)
#define HEARTH_ASSIGN_OR_RETURN(lhs, expr) \
  HEARTH_ASSIGN_OR_RETURN_IMPL_(HEARTH_CONCAT_(hearth_result_, __LINE__), lhs, expr)
#define HEARTH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp) return std::move(tmp).error();            \
  lhs = std::move(tmp).value()
