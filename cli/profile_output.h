// hearth-cli profile's three outputs of a ProfileReport (hearth/profile.h):
// the table, the --json object and the --trace file (Chrome / Perfetto
// trace-event JSON: one complete event "ph": "X" per op, microseconds).
// The JSON field names are an interface: add, never rename.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hearth/profile.h"

namespace hearth::cli {

// layers, kernels, matrix_us ([layer][kernel] microseconds summed over the
// run), outside_layers_us, forward_us, the per-step metrics (steps), entries;
// the roofline: ceilings, matrix_bytes, matrix_flops, matrix_ceiling_fraction,
// kernel_rates, and each entry's achieved_bytes_per_s / achieved_flops_per_s /
// ceiling_fraction (engine/metrics/roofline.h). Shared with the app's export.
nlohmann::json profile_json(const ProfileReport& report);
nlohmann::json overflow_json(const std::optional<OverflowFinding>& finding);
// {"traceEvents": [...]}: per op an "X" event on the thread of its place
// (1: the device's ops, 2: the host's sampling), per step a "forward" span.
nlohmann::json trace_json(const ProfileReport& report);
// The matrix in long form: one line per (layer, kernel) with its time, bytes,
// FLOPs, achieved rates and fraction of the ceiling; a header line first.
std::string matrix_csv(const ProfileReport& report);
// Kernel kinds, layers, the slowest ops and the per-step metrics, for a terminal.
void print_profile_table(std::FILE* out, const ProfileReport& report);
void print_overflow(std::FILE* out, const std::optional<OverflowFinding>& finding);

}  // namespace hearth::cli
