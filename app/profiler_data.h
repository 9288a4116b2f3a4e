// The profiler panel's data (issue 19): what the engine's live profile window
// has said so far, kept on the UI thread. Each ProfileUpdate (EngineWorker,
// 4 Hz while profiling) brings the window's sums and the steps since the last
// update; the steps are kept as a bounded history (each step's layers x kinds
// matrix and its breakdown) for the cell history chart and the timeline, and
// the last kTraceSteps with their entries for the trace export.
#pragma once

#include <QMetaType>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "hearth/profile.h"

namespace hearth::app {

// One update of the live window; `report->recent` holds only the steps new
// since the previous update of the same window. `window` changes whenever
// profiling restarts (a fresh window, steps numbered from 0 again).
struct ProfileUpdate {
  std::shared_ptr<const ProfileReport> report;
  std::uint64_t window = 0;
};

// Where one step's time went, a partition of the host's step: scheduling,
// then the forward (device busy + device idle + the rest: launches and host
// waits beyond the device's span), then sampling. On the CPU busy is the
// whole forward.
struct StepBreakdown {
  std::int64_t step = 0;
  std::int64_t tokens = 0;
  double busy_us = 0;
  double idle_us = 0;
  double other_us = 0;      // forward - busy - idle (>= 0)
  double host_wait_us = 0;  // part of the forward: the host blocked on the device
  double sampling_us = 0;
  double scheduling_us = 0;
  double total_us() const { return scheduling_us + busy_us + idle_us + other_us + sampling_us; }
};
StepBreakdown breakdown_of(const StepProfile& step);

class ProfilerData {
 public:
  static constexpr std::size_t kHistorySteps = 1024;  // per-step matrices kept (~1 MB for 30 layers)
  static constexpr std::size_t kTraceSteps = 128;     // steps kept with every entry, for the trace export

  // A report from another window (or a whole report: setReport) starts over.
  void apply(const ProfileUpdate& update);
  void clear();

  std::int32_t layers() const { return sums_.n_layer; }
  // The window's sums (`recent` empty).
  const ProfileReport& report() const { return sums_; }
  // The sums with the last kTraceSteps steps and their entries: what the export writes.
  ProfileReport exportReport() const;
  const std::deque<StepBreakdown>& steps() const { return steps_; }
  // The microseconds of (layer, kind) in each kept step, oldest first.
  std::vector<double> cellHistory(std::int32_t layer, KernelKind kind) const;

 private:
  ProfileReport sums_;
  std::uint64_t window_ = 0;
  std::int64_t next_step_ = 0;
  std::deque<StepBreakdown> steps_;
  std::deque<std::vector<float>> cells_;  // per kept step: [n_layer][kKernelKinds] us
  std::deque<StepProfile> trace_;         // the last kTraceSteps steps, entries included
};

}  // namespace hearth::app

Q_DECLARE_METATYPE(hearth::app::ProfileUpdate)
Q_DECLARE_METATYPE(hearth::OverflowFinding)
