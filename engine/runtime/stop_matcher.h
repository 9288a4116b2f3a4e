// Stop strings over streamed text. Text arrives piece by piece (one token's
// complete UTF-8 at a time); a stop string may span pieces. The matcher holds
// back the longest tail of the text that could still become a stop string and
// releases it once it cannot; on a match it returns the text before the stop
// string and drops the rest, so the stop text itself is never emitted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stop_strings);  // empty strings are ignored

  struct Output {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string matched: `text` ends where it began
  };
  Output push(std::string_view piece);
  // Ends the stream without a match: returns the held-back text.
  std::string flush();

  std::size_t held_bytes() const { return held_.size(); }

 private:
  // Length of the longest suffix of held_ that is a proper prefix of a stop string.
  std::size_t partial_match() const;

  std::vector<std::string> stops_;
  std::string held_;
};

}  // namespace hearth::runtime
