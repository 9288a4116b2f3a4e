// The device ceilings' cache (hearth/profile.h DeviceCeilings): a probe runs
// once per device and process (the first time profiling is turned on on it),
// later engines on the same device reuse its numbers. The probes themselves
// live with their backends (cpu/cpu_ceilings.cpp, cuda/cuda_ceilings.cpp).
#pragma once

#include <functional>
#include <string>

#include "hearth/profile.h"

namespace hearth::backend {

// The ceilings of `device_key` ("cpu:2", "cuda:0"), measured by `measure` the
// first time this process asks. Thread-safe; an empty key measures nothing.
DeviceCeilings cached_ceilings(const std::string& device_key, const std::function<DeviceCeilings()>& measure);

}  // namespace hearth::backend
