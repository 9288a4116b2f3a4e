// Errors of the HTTP API in OpenAI's shape:
//   {"error": {"message": "...", "type": "...", "param": "..." | null, "code": "..." | null}}
// with the HTTP status that goes with them. The `type` and `code` strings are
// an interface (clients branch on them): add values, never rename.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hearth::server {

struct ApiError {
  int status = 500;
  std::string message;  // one line; names the field and the value or limit
  std::string type;     // "invalid_request_error", "authentication_error", "not_found_error", ...
  std::string param;    // the offending field's path ("messages[2].content"); "" -> null
  std::string code;     // "invalid_type", "context_length_exceeded", ...; "" -> null

  // The response body.
  std::string body() const;
};

// 400 invalid_request_error: a field is missing, of the wrong type or out of range.
ApiError bad_request(std::string param, std::string message, std::string code = "invalid_value");
// 400 for a body that is not JSON (or not an object).
ApiError malformed_json(std::string message);
// 401: no key, or a different one.
ApiError unauthorized(std::string message);
// 404 for a model this server does not serve.
ApiError model_not_found(const std::string& model);
// 404 / 405 for a route.
ApiError route_not_found(const std::string& method, const std::string& path);
// 413: the body is over --max-body-bytes.
ApiError body_too_large(std::size_t limit);
// 429: --max-concurrent requests are already in flight.
ApiError too_many_requests(int limit);
// 503: the engine cannot take the request now (KV memory exhausted, shutting down).
ApiError overloaded(std::string message);
// 500: the engine failed the request.
ApiError internal_error(std::string message);

// A value or the ApiError that stopped it (errors are values, as in the engine).
template <class T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::in_place_index<0>, std::move(value)) {}         // NOLINT: implicit by design
  ApiResult(ApiError error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const ApiError& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace hearth::server

// Declares `lhs` from an ApiResult-returning expression, or returns its error.
#define HEARTH_API_CONCAT_INNER_(a, b) a##b
#define HEARTH_API_CONCAT_(a, b) HEARTH_API_CONCAT_INNER_(a, b)
#define HEARTH_API_ASSIGN(lhs, expr) HEARTH_API_ASSIGN_IMPL_(HEARTH_API_CONCAT_(hearth_api_, __LINE__), lhs, expr)
#define HEARTH_API_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                            \
  if (!tmp) return tmp.error();                 \
  lhs = std::move(tmp).value()
// Returns the error of an ApiResult-returning expression, if any.
#define HEARTH_API_TRY(expr)                              \
  do {                                                    \
    auto hearth_api_try_ = (expr);                        \
    if (!hearth_api_try_) return hearth_api_try_.error(); \
  } while (0)
