// The CPU's ceilings for the profiler's roofline (hearth/profile.h
// DeviceCeilings), measured on the backend's own thread pool: the read
// bandwidth of a buffer well beyond the caches, and the FLOP rate of the
// backend's fastest product (its Q8_0 matmul over a prefill-sized batch).
// About 0.1 s on a 2-core machine; run once per process (backend/ceilings.h).
#pragma once

#include "engine/backend/cpu/cpu_ops.h"
#include "hearth/profile.h"

namespace hearth::cpu {

DeviceCeilings measure_cpu_ceilings(CpuOps& ops);

// The read bandwidth alone (bytes per second; about 0.05 s): what the
// hardware-aware defaults (models/recommend.h) bound decode speed with.
double measure_cpu_read_bandwidth(CpuOps& ops);

}  // namespace hearth::cpu
