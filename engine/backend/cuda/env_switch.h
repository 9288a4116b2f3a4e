// The environment switches of the CUDA backend's A/B runs (docs/perf-notes.md).
#pragma once

#include <cstdlib>
#include <cstring>

namespace hearth::cuda {

// On unless the variable is set to "0".
inline bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// An experiment's switch: off unless the variable is set to "1".
inline bool env_opt_in(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace hearth::cuda
