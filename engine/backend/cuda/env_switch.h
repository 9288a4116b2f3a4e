// An environment switch of the CUDA backend's A/B runs (docs/perf-notes.md):
// on unless the variable is set to "0".
#pragma once

#include <cstdlib>
#include <cstring>

namespace hearth::cuda {

inline bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr || std::strcmp(v, "0") != 0;
}

}  // namespace hearth::cuda
