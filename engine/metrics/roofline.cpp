#include "engine/metrics/roofline.h"

#include <algorithm>

namespace hearth::metrics {

AchievedRate achieved_rate(double bytes, double flops, double duration_us, const DeviceCeilings& ceilings) {
  AchievedRate r;
  if (!(duration_us > 0)) return r;
  const double seconds = duration_us * 1e-6;
  r.bytes_per_s = std::max(0.0, bytes) / seconds;
  r.flops_per_s = std::max(0.0, flops) / seconds;
  if (ceilings.bytes_per_s > 0) r.bandwidth_fraction = r.bytes_per_s / ceilings.bytes_per_s;
  if (ceilings.flops_per_s > 0) r.compute_fraction = r.flops_per_s / ceilings.flops_per_s;
  r.ceiling_fraction = std::max(r.bandwidth_fraction, r.compute_fraction);
  return r;
}

}  // namespace hearth::metrics
