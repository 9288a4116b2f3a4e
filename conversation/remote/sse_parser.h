// Server-sent events (the WHATWG "text/event-stream" format) read
// incrementally from bytes as they arrive: lines end in LF, CRLF or CR (a
// CRLF split across two reads is one ending), ':' starts a comment, "data:"
// lines of one event are joined with LF, a blank line ends the event.
// Only the data matters to an OpenAI stream; event/id/retry fields are read
// and ignored.
//
// The input is hostile: a line or an event longer than its limit stops the
// parser with an error naming the limit, so memory stays bounded by the
// limits whatever the server sends. An event cut off by the end of the
// stream is not delivered (the caller learns it through pending()).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::remote {

struct SseLimits {
  std::size_t max_line_bytes = std::size_t{1} << 20;   // one line, its ending excluded
  std::size_t max_event_bytes = std::size_t{4} << 20;  // one event's data, all its lines
};

class SseParser {
 public:
  explicit SseParser(SseLimits limits = {}) : limits_(limits) {}

  // Parses `bytes`, appending each completed event's data to `events`.
  // Returns false (and stays failed: later calls do nothing) when a limit was
  // passed; error() then says which.
  bool feed(std::string_view bytes, std::vector<std::string>& events);

  const std::optional<std::string>& error() const { return error_; }
  // True when bytes of an unfinished line or event are held (a stream that
  // ends now was cut inside an event).
  bool pending() const { return !line_.empty() || has_data_; }
  std::size_t bytes_seen() const { return bytes_seen_; }

 private:
  bool end_line(std::vector<std::string>& events);
  bool fail(std::string message);

  SseLimits limits_;
  std::string line_;  // the line being read, without its ending
  std::string data_;  // the event being read: its data lines joined by LF
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte was a CR: an LF next is part of that ending
  bool at_start_ = true;   // before the first line (a UTF-8 BOM may open it)
  std::size_t bytes_seen_ = 0;
  std::optional<std::string> error_;
};

}  // namespace hearth::remote
