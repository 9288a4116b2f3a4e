#include "conversation/remote/sse_parser.h"

#include <utility>

namespace hearth::remote {

bool SseParser::fail(std::string message) {
  error_ = std::move(message);
  line_.clear();
  data_.clear();
  has_data_ = false;
  return false;
}

bool SseParser::feed(std::string_view bytes, std::vector<std::string>& events) {
  if (error_) return false;
  bytes_seen_ += bytes.size();
  std::size_t start = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\n' && c != '\r') continue;
    if (c == '\n' && after_cr_ && i == start) {  // the LF of a CRLF whose CR ended the previous run
      after_cr_ = false;
      start = i + 1;
      continue;
    }
    const std::string_view piece = bytes.substr(start, i - start);
    if (line_.size() + piece.size() > limits_.max_line_bytes) {
      return fail("a line of the event stream is longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
    }
    line_ += piece;
    if (!end_line(events)) return false;
    after_cr_ = c == '\r';
    start = i + 1;
    if (after_cr_ && i + 1 < bytes.size() && bytes[i + 1] == '\n') {
      after_cr_ = false;
      start = i + 2;
      ++i;
    }
  }
  const std::string_view rest = bytes.substr(start);
  if (!rest.empty()) after_cr_ = false;
  if (line_.size() + rest.size() > limits_.max_line_bytes) {
    return fail("a line of the event stream is longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
  }
  line_ += rest;
  return true;
}

bool SseParser::end_line(std::vector<std::string>& events) {
  std::string line = std::exchange(line_, std::string());
  if (std::exchange(at_start_, false) && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 BOM
  if (line.empty()) {                                                                         // the event ends
    if (has_data_) events.push_back(std::exchange(data_, std::string()));
    has_data_ = false;
    return true;
  }
  if (line.front() == ':') return true;  // a comment (keep-alive pings)
  const std::size_t colon = line.find(':');
  const std::string_view field = std::string_view(line).substr(0, colon);
  std::string_view value;
  if (colon != std::string::npos) {
    value = std::string_view(line).substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field != "data") return true;  // event, id, retry and unknown fields: nothing an OpenAI stream needs
  const std::size_t grown = data_.size() + (has_data_ ? 1 : 0) + value.size();
  if (grown > limits_.max_event_bytes) {
    return fail("an event of the event stream is longer than " + std::to_string(limits_.max_event_bytes) + " bytes");
  }
  if (has_data_) data_ += '\n';
  data_ += value;
  has_data_ = true;
  return true;
}

}  // namespace hearth::remote
