#include "engine/runtime/stop_matcher.h"

#include <algorithm>

namespace hearth::runtime {

StopMatcher::StopMatcher(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::size_t StopMatcher::partial_match() const {
  std::size_t longest = 0;
  for (const std::string& stop : stops_) {
    const std::size_t max_k = std::min(held_.size(), stop.size() - 1);
    for (std::size_t k = max_k; k > longest; --k) {
      if (std::string_view(held_).substr(held_.size() - k) == std::string_view(stop).substr(0, k)) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

StopMatcher::Output StopMatcher::push(std::string_view piece) {
  held_.append(piece);
  Output out;
  if (stops_.empty()) {
    out.text.swap(held_);
    return out;
  }
  std::size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    out.text = held_.substr(0, first);
    out.stopped = true;
    held_.clear();
    return out;
  }
  // A held tail starts where a stop string starts: a character boundary.
  const std::size_t keep = partial_match();
  out.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace hearth::runtime
