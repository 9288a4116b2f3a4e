// Achieved rates of a kernel (or a heat-map cell: several ops summed) against
// the device's measured ceilings (hearth/profile.h DeviceCeilings): the
// roofline view. A kernel is bound by whichever roof it is closer to, so its
// fraction of the ceiling is the larger of its bandwidth and compute
// fractions. A fraction above 1 is possible: the ceilings are what a probe
// achieved, not the hardware's data sheet (a kernel whose data sits in cache
// reads faster than the memory probe).
#pragma once

#include "hearth/profile.h"

namespace hearth::metrics {

struct AchievedRate {
  double bytes_per_s = 0;         // (read + written) / duration
  double flops_per_s = 0;         // flops / duration
  double bandwidth_fraction = 0;  // bytes_per_s / ceilings.bytes_per_s (0 when that ceiling is unknown)
  double compute_fraction = 0;    // flops_per_s / ceilings.flops_per_s (0 when unknown)
  double ceiling_fraction = 0;    // max of the two
};

// bytes and flops done in duration_us microseconds; all zero when duration_us <= 0.
AchievedRate achieved_rate(double bytes, double flops, double duration_us, const DeviceCeilings& ceilings);

}  // namespace hearth::metrics
