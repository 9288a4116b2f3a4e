// The engine's window of profiled steps (hearth/profile.h): the engine thread
// adds each profiled step; report() copies the aggregate for any thread. The
// matrix and the sums cover every step since reset(); the entries of only the
// last keep_steps steps are kept (a long generation does not grow memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "hearth/profile.h"

namespace hearth::metrics {

class ProfileWindow {
 public:
  // Engine thread: forget everything; rows for `n_layer` layers; reports carry `window`.
  void reset(std::int32_t n_layer, std::size_t keep_steps, std::uint64_t window);
  // Engine thread: one step (its ops' layers in [-1, n_layer)).
  void add(StepProfile step);
  // Engine thread: the device's ceilings, reported with the window.
  void set_ceilings(const DeviceCeilings& ceilings);
  // Any thread. report_since: `recent` holds only steps numbered first_step or later.
  ProfileReport report() const { return report_since(0); }
  ProfileReport report_since(std::int64_t first_step) const;

 private:
  mutable std::mutex mu_;
  ProfileReport sums_;  // `recent` left empty: the deque below holds it
  std::deque<StepProfile> recent_;
  std::size_t keep_steps_ = 0;
};

}  // namespace hearth::metrics
