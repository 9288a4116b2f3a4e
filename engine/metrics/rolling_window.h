// Windows over recent measurements, for the live metrics: percentiles over the
// last N samples, a mean over the last N values, and a token rate over the
// last seconds of activity. Not thread-safe (the engine thread owns them).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "hearth/metrics.h"

namespace hearth::metrics {

using Clock = std::chrono::steady_clock;

// The last `capacity` samples (ring buffer); percentiles by nearest rank.
class SampleWindow {
 public:
  explicit SampleWindow(std::size_t capacity);
  void add(double value);
  std::size_t size() const { return values_.size(); }
  // p50 / p95 / p99 of the samples in the window; count = samples in the window.
  LatencySummary summary() const;
  double mean() const;

 private:
  std::size_t capacity_;
  std::size_t next_ = 0;        // where the next sample goes once full
  std::vector<double> values_;  // [<= capacity]
};

// Value at quantile q in [0, 1] of `sorted` (ascending, non-empty), nearest rank.
double nearest_rank(const std::vector<double>& sorted, double q);

// Tokens per second over the steps that ended in the last `window` of
// activity: their tokens over the wall time from the first one's start to the
// last one's end. Idle time after the last step does not count, so the rate
// shows the last measured speed when the engine is idle.
class RateWindow {
 public:
  explicit RateWindow(Clock::duration window) : window_(window) {}
  void add(Clock::time_point start, Clock::time_point end, std::int64_t tokens);
  double rate() const;

 private:
  struct Entry {
    Clock::time_point start, end;
    std::int64_t tokens;
  };
  Clock::duration window_;
  std::deque<Entry> entries_;
  std::int64_t tokens_ = 0;  // sum over entries_
};

}  // namespace hearth::metrics
