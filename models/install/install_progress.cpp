#include "models/install/install_progress.h"

#include <cmath>
#include <cstdio>

namespace hearth::models::install {

const char* to_string(InstallProgress::Phase phase) {
  switch (phase) {
    case InstallProgress::Phase::kResolving:
      return "resolving";
    case InstallProgress::Phase::kDownloading:
      return "downloading";
    case InstallProgress::Phase::kExtracting:
      return "extracting";
    case InstallProgress::Phase::kVerifying:
      return "verifying";
  }
  return "?";
}

std::string format_size(std::uint64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

std::string describe(const InstallProgress& p) {
  std::string s = to_string(p.phase);
  if (p.parts > 1 && p.part > 0) s += " part " + std::to_string(p.part) + "/" + std::to_string(p.parts);
  if (p.total_bytes > 0) s += ": " + format_size(p.done_bytes) + " of " + format_size(p.total_bytes);
  if (p.bytes_per_second > 0) s += ", " + format_size(static_cast<std::uint64_t>(p.bytes_per_second)) + "/s";
  if (p.seconds_left >= 0) {
    const long left = std::lround(p.seconds_left);
    s += ", " + (left >= 60 ? std::to_string(left / 60) + " min " : std::string()) + std::to_string(left % 60) +
         " s left";
  }
  return s;
}

void RateMeter::add(Clock::time_point t, std::uint64_t bytes) {
  samples_.emplace_back(t, bytes);
  while (samples_.size() > 2 && t - samples_[1].first >= window_) samples_.pop_front();
}

double RateMeter::bytes_per_second() const {
  if (samples_.size() < 2) return 0;
  const double span = std::chrono::duration<double>(samples_.back().first - samples_.front().first).count();
  if (span < 0.5) return 0;
  return static_cast<double>(samples_.back().second - samples_.front().second) / span;
}

}  // namespace hearth::models::install
