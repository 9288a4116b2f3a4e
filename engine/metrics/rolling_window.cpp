#include "engine/metrics/rolling_window.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace hearth::metrics {

SampleWindow::SampleWindow(std::size_t capacity) : capacity_(capacity) {
  assert(capacity > 0);
  values_.reserve(capacity);
}

void SampleWindow::add(double value) {
  if (values_.size() < capacity_) {
    values_.push_back(value);
    return;
  }
  values_[next_] = value;
  next_ = (next_ + 1) % capacity_;
}

double nearest_rank(const std::vector<double>& sorted, double q) {
  assert(!sorted.empty());
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(q * n));  // 1-based
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

LatencySummary SampleWindow::summary() const {
  LatencySummary s;
  s.count = static_cast<std::int64_t>(values_.size());
  if (values_.empty()) return s;
  std::vector<double> sorted = values_;
  std::sort(sorted.begin(), sorted.end());
  s.p50 = nearest_rank(sorted, 0.50);
  s.p95 = nearest_rank(sorted, 0.95);
  s.p99 = nearest_rank(sorted, 0.99);
  return s;
}

double SampleWindow::mean() const {
  if (values_.empty()) return 0.0;
  return std::accumulate(values_.begin(), values_.end(), 0.0) / static_cast<double>(values_.size());
}

void RateWindow::add(Clock::time_point start, Clock::time_point end, std::int64_t tokens) {
  entries_.push_back({start, end, tokens});
  tokens_ += tokens;
  while (!entries_.empty() && entries_.front().end <= end - window_) {
    tokens_ -= entries_.front().tokens;
    entries_.pop_front();
  }
}

double RateWindow::rate() const {
  if (entries_.empty()) return 0.0;
  const std::chrono::duration<double> span = entries_.back().end - entries_.front().start;
  return span.count() > 0 ? static_cast<double>(tokens_) / span.count() : 0.0;
}

}  // namespace hearth::metrics
