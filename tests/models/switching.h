// Switching between models and weight formats without restarting, as the app
// does it (models::open_engine, a greedy answer, the engine dropped): the
// helpers of the CPU and CUDA switching tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hearth/result.h"
#include "models/run_config.h"

namespace hearth::models::test {

// One thing a user switches to: a model file and how it runs.
struct SwitchTarget {
  std::string model;  // a path or a catalog name
  RunConfig config;
  std::string label;  // for messages
};

// The greedy tokens of a fixed prompt on `target` (opened, run, dropped);
// `loaded` (when given) is measured while the engine is still open.
Result<std::vector<std::int32_t>> greedy_once(const SwitchTarget& target, std::int32_t max_tokens,
                                              const std::function<std::size_t()>& loaded = {},
                                              std::size_t* loaded_value = nullptr);

// Resident memory of this process, bytes (anonymous + file-backed), after
// handing freed heap pages back to the system.
std::size_t resident_bytes();

struct SwitchReport {
  std::size_t baseline = 0;                              // the measure after the first round
  std::vector<std::size_t> after_each;                   // the measure after each later switch
  std::vector<std::size_t> while_loaded;                 // the measure with each engine open (every round)
  std::vector<std::vector<std::int32_t>> first_outputs;  // per target, from the first round
  std::vector<std::string> mismatches;                   // later outputs that differ from the first
};

// Opens each target in turn, `rounds` times over (the first round warms
// up what a process keeps once: allocator arenas, thread stacks, device
// context), measuring `measure()` after every engine is dropped.
Result<SwitchReport> switch_rounds(const std::vector<SwitchTarget>& targets, int rounds, std::int32_t max_tokens,
                                   const std::function<std::size_t()>& measure);

}  // namespace hearth::models::test
