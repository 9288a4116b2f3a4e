#include "cli/cli_common.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hearth::cli {

const char* error_kind(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kCorruptFile:
      return "corrupt_file";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kOutOfMemory:
      return "out_of_memory";
    case ErrorCode::kContextExceeded:
      return "context_exceeded";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "error";
}

void fail(const Error& error) {
  throw Failure{error.describe(), 1, error_kind(error.code)};
}

void fail(const std::string& message) {
  throw Failure{message, 1};
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Failure{path + " is a directory, not a file", 1, "invalid_argument"};
  if (!std::filesystem::exists(path, ec)) throw Failure{"cannot read " + path + ": no such file", 1, "not_found"};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure{"cannot read " + path, 1, "io"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Failure{"cannot read " + path, 1, "io"};
  return ss.str();
}

nlohmann::json parse_json_input(const std::string& text, const std::string& what) {
  bool too_deep = false;
  // Returning false drops the value, so nothing deeper than the cap is built.
  const nlohmann::json::parser_callback_t cap = [&too_deep](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxJsonInputDepth) too_deep = true;
    return !too_deep;
  };
  nlohmann::json doc = nlohmann::json::parse(text, cap, /*allow_exceptions=*/false);
  if (too_deep) {
    throw Failure{what + ": JSON nested deeper than " + std::to_string(kMaxJsonInputDepth) + " levels", 1,
                  "invalid_argument"};
  }
  if (doc.is_discarded()) throw Failure{what + " is not valid JSON", 1, "invalid_argument"};
  return doc;
}

}  // namespace hearth::cli
