#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace hearth::server {
namespace {

nlohmann::json null_if_empty(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

ApiError make(int status, std::string message, std::string type, std::string param, std::string code) {
  return ApiError{status, std::move(message), std::move(type), std::move(param), std::move(code)};
}

}  // namespace

std::string ApiError::body() const {
  const nlohmann::json j = {
      {"error",
       {{"message", message}, {"type", type}, {"param", null_if_empty(param)}, {"code", null_if_empty(code)}}}};
  // Replace, not throw, on bytes that are not UTF-8 (a message may quote input).
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiError bad_request(std::string param, std::string message, std::string code) {
  return make(400, std::move(message), "invalid_request_error", std::move(param), std::move(code));
}

ApiError malformed_json(std::string message) {
  return make(400, std::move(message), "invalid_request_error", "", "invalid_json");
}

ApiError unauthorized(std::string message) {
  return make(401, std::move(message), "authentication_error", "", "invalid_api_key");
}

ApiError model_not_found(const std::string& model) {
  return make(404, "The model '" + model + "' does not exist: GET /v1/models lists the one this server serves",
              "not_found_error", "model", "model_not_found");
}

ApiError route_not_found(const std::string& method, const std::string& path) {
  return make(404, "No route " + method + " " + path, "not_found_error", "", "unknown_url");
}

ApiError body_too_large(std::size_t limit) {
  return make(413, "The request body is larger than the server's limit of " + std::to_string(limit) + " bytes",
              "invalid_request_error", "", "request_too_large");
}

ApiError too_many_requests(int limit) {
  return make(
      429, "The server is already running its limit of " + std::to_string(limit) + " concurrent requests: retry later",
      "rate_limit_error", "", "too_many_concurrent_requests");
}

ApiError overloaded(std::string message) {
  return make(503, std::move(message), "server_error", "", "overloaded");
}

ApiError internal_error(std::string message) {
  return make(500, std::move(message), "server_error", "", "internal_error");
}

}  // namespace hearth::server
