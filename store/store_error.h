// Errors of the store, as values. store/ sits beside engine/ in the layering
// (DESIGN.md: store/ includes nothing of ours), so it cannot use hearth::Result;
// these types have the same shape, and StoreErrorCode reuses the numbers of
// hearth::ErrorCode, so a front end converts with
//   hearth::Error{static_cast<hearth::ErrorCode>(e.code), e.message}.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hearth::store {

// Same values as hearth::ErrorCode: do not change or reuse.
enum class StoreErrorCode : int {
  kInvalidArgument = 1,  // unknown id, a message of another conversation, a bad state change
  kNotFound = 2,         // the row asked for does not exist
  kIo = 3,               // disk full, read-only database, locked by another process, I/O failure
  kCorruptFile = 4,      // the database file is damaged or not a database
  kUnsupported = 5,      // a schema version newer than this program
  kInternal = 9,         // a bug: SQL that should not fail did
};

const char* to_string(StoreErrorCode code);

struct StoreError {
  StoreErrorCode code = StoreErrorCode::kInternal;
  std::string message{};  // one line for the user: what failed, while doing what (names the row id)
  std::string detail{};   // SQLite's own words, when SQLite reported it; may be empty

  std::string describe() const {
    std::string s = std::string(to_string(code)) + ": " + message;
    return detail.empty() ? s : s + " (" + detail + ")";
  }
};

inline StoreError make_store_error(StoreErrorCode code, std::string message) {
  return StoreError{code, std::move(message), {}};
}

template <class T>
class [[nodiscard]] StoreResult {
 public:
  StoreResult(T value) : v_(std::in_place_index<0>, std::move(value)) {}           // NOLINT: implicit by design
  StoreResult(StoreError error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

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

  const StoreError& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  StoreError&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, StoreError> v_;
};

template <>
class [[nodiscard]] StoreResult<void> {
 public:
  StoreResult() = default;
  StoreResult(StoreError error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const StoreError& error() const& {
    assert(!ok_);
    return error_;
  }
  StoreError&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  StoreError error_;
  bool ok_ = true;
};

}  // namespace hearth::store

// Propagates an error from an expression returning StoreResult<...>.
#define STORE_TRY(expr)                                                  \
  do {                                                                   \
    auto store_try_result_ = (expr);                                     \
    if (!store_try_result_) return std::move(store_try_result_).error(); \
  } while (0)

// Declares `lhs` from the value of a StoreResult-returning expression, or returns its error.
#define STORE_CONCAT_INNER_(a, b) a##b
#define STORE_CONCAT_(a, b) STORE_CONCAT_INNER_(a, b)
#define STORE_ASSIGN_OR_RETURN(lhs, expr) \
  STORE_ASSIGN_OR_RETURN_IMPL_(STORE_CONCAT_(store_result_, __LINE__), lhs, expr)
#define STORE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp) return std::move(tmp).error();           \
  lhs = std::move(tmp).value()
