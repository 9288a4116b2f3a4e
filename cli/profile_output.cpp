#include "cli/profile_output.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/metrics/roofline.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

KernelKind kind_at(std::size_t k) {
  return static_cast<KernelKind>(k);
}

json entry_json(const OpProfileEntry& e, const DeviceCeilings& ceilings) {
  const metrics::AchievedRate rate = metrics::achieved_rate(static_cast<double>(e.input_bytes + e.output_bytes),
                                                            static_cast<double>(e.flops), e.duration_us, ceilings);
  return {{"name", e.name},
          {"layer", e.layer},
          {"kind", kernel_kind_name(e.kind)},
          {"step", e.step},
          {"start_us", e.start_us},
          {"duration_us", e.duration_us},
          {"input_bytes", e.input_bytes},
          {"output_bytes", e.output_bytes},
          {"flops", e.flops},
          {"is_fused", e.is_fused},
          {"achieved_bytes_per_s", rate.bytes_per_s},
          {"achieved_flops_per_s", rate.flops_per_s},
          {"ceiling_fraction", rate.ceiling_fraction}};
}

metrics::AchievedRate cell_rate(const ProfileReport& r, std::int32_t l, std::size_t k) {
  return metrics::achieved_rate(r.cell_bytes(l, kind_at(k)), r.cell_flops(l, kind_at(k)), r.cell(l, kind_at(k)),
                                r.ceilings);
}

// Each kind summed over the layers: its achieved rates over the run.
json kernel_rates_json(const ProfileReport& r) {
  json out = json::object();
  for (std::size_t k = 0; k < kKernelKinds; ++k) {
    double us = 0, bytes = 0, flops = 0;
    for (std::int32_t l = 0; l < r.n_layer; ++l) {
      us += r.cell(l, kind_at(k));
      bytes += r.cell_bytes(l, kind_at(k));
      flops += r.cell_flops(l, kind_at(k));
    }
    if (us <= 0) continue;
    const metrics::AchievedRate rate = metrics::achieved_rate(bytes, flops, us, r.ceilings);
    out[kernel_kind_name(kind_at(k))] = {{"duration_us", us},
                                         {"bytes", bytes},
                                         {"flops", flops},
                                         {"achieved_bytes_per_s", rate.bytes_per_s},
                                         {"achieved_flops_per_s", rate.flops_per_s},
                                         {"bandwidth_fraction", rate.bandwidth_fraction},
                                         {"compute_fraction", rate.compute_fraction},
                                         {"ceiling_fraction", rate.ceiling_fraction}};
  }
  return out;
}

double layer_total(const ProfileReport& r, std::int32_t l) {
  double s = 0;
  for (std::size_t k = 0; k < kKernelKinds; ++k) s += r.cell(l, kind_at(k));
  return s;
}

double kind_total(const ProfileReport& r, std::size_t k) {
  double s = r.outside_layers_us[k];
  for (std::int32_t l = 0; l < r.n_layer; ++l) s += r.cell(l, kind_at(k));
  return s;
}

}  // namespace

json profile_json(const ProfileReport& r) {
  json layers = json::array(), kernels = json::array(), matrix = json::array(), outside = json::object();
  for (std::int32_t l = 0; l < r.n_layer; ++l) layers.push_back(l);
  for (std::size_t k = 0; k < kKernelKinds; ++k) {
    kernels.push_back(kernel_kind_name(kind_at(k)));
    outside[kernel_kind_name(kind_at(k))] = r.outside_layers_us[k];
  }
  json matrix_bytes = json::array(), matrix_flops = json::array(), matrix_fraction = json::array();
  const bool sized = r.matrix_bytes.size() == r.matrix_us.size() && r.matrix_flops.size() == r.matrix_us.size();
  for (std::int32_t l = 0; l < r.n_layer; ++l) {
    json row = json::array(), bytes = json::array(), flops = json::array(), fraction = json::array();
    for (std::size_t k = 0; k < kKernelKinds; ++k) {
      row.push_back(r.cell(l, kind_at(k)));
      if (!sized) continue;
      bytes.push_back(r.cell_bytes(l, kind_at(k)));
      flops.push_back(r.cell_flops(l, kind_at(k)));
      fraction.push_back(cell_rate(r, l, k).ceiling_fraction);
    }
    matrix.push_back(std::move(row));
    matrix_bytes.push_back(std::move(bytes));
    matrix_flops.push_back(std::move(flops));
    matrix_fraction.push_back(std::move(fraction));
  }
  json steps = json::array(), entries = json::array();
  for (const StepProfile& s : r.recent) {
    steps.push_back({{"step", s.step},
                     {"tokens", s.tokens},
                     {"forward_us", s.forward_us},
                     {"host_wait_us", s.host_wait_us},
                     {"gpu_idle_us", s.gpu_idle_us},
                     {"gpu_busy_us", s.gpu_busy_us},
                     {"sampling_us", s.sampling_us},
                     {"scheduling_us", s.scheduling_us}});
    for (const OpProfileEntry& e : s.ops) entries.push_back(entry_json(e, r.ceilings));
  }
  return {{"layers", std::move(layers)},
          {"kernels", std::move(kernels)},
          {"matrix_us", std::move(matrix)},
          {"outside_layers_us", std::move(outside)},
          {"forward_us", r.forward_us},
          {"host_wait_us", r.host_wait_us},
          {"gpu_idle_us", r.gpu_idle_us},
          {"sampling_us", r.sampling_us},
          {"scheduling_us", r.scheduling_us},
          {"n_steps", r.steps},
          {"matrix_bytes", std::move(matrix_bytes)},
          {"matrix_flops", std::move(matrix_flops)},
          {"matrix_ceiling_fraction", std::move(matrix_fraction)},
          {"kernel_rates", kernel_rates_json(r)},
          {"ceilings",
           {{"bytes_per_s", r.ceilings.bytes_per_s},
            {"flops_per_s", r.ceilings.flops_per_s},
            {"source", r.ceilings.source}}},
          {"steps", std::move(steps)},
          {"entries", std::move(entries)}};
}

json overflow_json(const std::optional<OverflowFinding>& f) {
  if (!f) return nullptr;
  return {{"layer", f->layer},       {"op", f->op},    {"what", f->what}, {"max_abs", f->max_abs},
          {"position", f->position}, {"step", f->step}};
}

json trace_json(const ProfileReport& r) {
  json events = json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "hearth"}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "ops"}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 2}, {"args", {{"name", "host"}}}});
  for (const StepProfile& s : r.recent) {
    events.push_back(
        {{"name", "forward"},
         {"cat", "step"},
         {"ph", "X"},
         {"pid", 1},
         {"tid", 2},
         {"ts", s.start_us},
         {"dur", s.forward_us},
         {"args",
          {{"step", s.step}, {"tokens", s.tokens}, {"host_wait_us", s.host_wait_us}, {"gpu_idle_us", s.gpu_idle_us}}}});
    for (const OpProfileEntry& e : s.ops) {
      const std::string name = e.layer >= 0 ? e.name + "." + std::to_string(e.layer) : e.name;
      events.push_back({{"name", name},
                        {"cat", kernel_kind_name(e.kind)},
                        {"ph", "X"},
                        {"pid", 1},
                        {"tid", e.kind == KernelKind::kSampling ? 2 : 1},
                        {"ts", e.start_us},
                        {"dur", e.duration_us},
                        {"args",
                         {{"layer", e.layer},
                          {"step", e.step},
                          {"input_bytes", e.input_bytes},
                          {"output_bytes", e.output_bytes},
                          {"flops", e.flops},
                          {"is_fused", e.is_fused}}}});
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

std::string matrix_csv(const ProfileReport& r) {
  std::string out = "layer,kernel,duration_us,bytes,flops,achieved_bytes_per_s,achieved_flops_per_s,ceiling_fraction\n";
  const bool sized = r.matrix_bytes.size() == r.matrix_us.size() && r.matrix_flops.size() == r.matrix_us.size();
  char line[256];
  for (std::int32_t l = 0; l < r.n_layer; ++l) {
    for (std::size_t k = 0; k < kKernelKinds; ++k) {
      const double us = r.cell(l, kind_at(k));
      const double bytes = sized ? r.cell_bytes(l, kind_at(k)) : 0, flops = sized ? r.cell_flops(l, kind_at(k)) : 0;
      const metrics::AchievedRate rate = metrics::achieved_rate(bytes, flops, us, r.ceilings);
      std::snprintf(line, sizeof line, "%d,%s,%.3f,%.0f,%.0f,%.6g,%.6g,%.6g\n", l, kernel_kind_name(kind_at(k)), us,
                    bytes, flops, rate.bytes_per_s, rate.flops_per_s, rate.ceiling_fraction);
      out += line;
    }
  }
  return out;
}

void print_profile_table(std::FILE* out, const ProfileReport& r) {
  const double fwd = std::max(r.forward_us, 1e-9);
  std::fprintf(out, "%lld steps, forward %.1f ms, host wait %.1f ms, GPU idle %.1f ms, sampling %.1f ms\n\n",
               static_cast<long long>(r.steps), r.forward_us / 1e3, r.host_wait_us / 1e3, r.gpu_idle_us / 1e3,
               r.sampling_us / 1e3);
  if (r.ceilings.bytes_per_s > 0 || r.ceilings.flops_per_s > 0) {
    std::fprintf(out, "ceilings: %.1f GB/s, %.1f GFLOP/s (%s)\n\n", r.ceilings.bytes_per_s / 1e9,
                 r.ceilings.flops_per_s / 1e9, r.ceilings.source.c_str());
  }
  const json rates = kernel_rates_json(r);
  std::fprintf(out, "%-12s %12s %7s %10s %10s %7s\n", "kernel", "total ms", "% fwd", "GB/s", "GFLOP/s", "% roof");
  for (std::size_t k = 0; k < kKernelKinds; ++k) {
    const double t = kind_total(r, k);
    if (t <= 0) continue;
    const char* name = kernel_kind_name(kind_at(k));
    const json rate = rates.contains(name) ? rates[name] : json::object();
    std::fprintf(out, "%-12s %12.3f %6.1f%% %10.2f %10.2f %6.1f%%\n", name, t / 1e3, 100.0 * t / fwd,
                 rate.value("achieved_bytes_per_s", 0.0) / 1e9, rate.value("achieved_flops_per_s", 0.0) / 1e9,
                 100.0 * rate.value("ceiling_fraction", 0.0));
  }
  std::fprintf(out, "\n%-6s %12s %7s\n", "layer", "total ms", "% fwd");
  for (std::int32_t l = 0; l < r.n_layer; ++l) {
    const double t = layer_total(r, l);
    std::fprintf(out, "%-6d %12.3f %6.1f%%\n", l, t / 1e3, 100.0 * t / fwd);
  }
  // The slowest ops by name over the kept steps (every layer together).
  std::map<std::string, std::pair<double, std::uint64_t>> by_name;  // us, bytes
  for (const StepProfile& s : r.recent) {
    for (const OpProfileEntry& e : s.ops) {
      auto& v = by_name[e.name];
      v.first += e.duration_us;
      v.second += e.input_bytes + e.output_bytes;
    }
  }
  std::vector<std::pair<std::string, std::pair<double, std::uint64_t>>> ops(by_name.begin(), by_name.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::fprintf(out, "\n%-20s %12s %10s\n", "op", "total ms", "GB/s");
  for (const auto& [name, v] : ops) {
    const double gbs = v.first > 0 ? static_cast<double>(v.second) / (v.first * 1e3) : 0.0;
    std::fprintf(out, "%-20s %12.3f %10.2f\n", name.c_str(), v.first / 1e3, gbs);
  }
}

void print_overflow(std::FILE* out, const std::optional<OverflowFinding>& f) {
  if (!f) {
    std::fprintf(out, "overflow check: clean (no NaN, Inf or |x| > %.0f)\n", kFp16OverflowThreshold);
    return;
  }
  std::fprintf(out, "overflow check: %s at layer %d, op %s, max |x| %.6g, token position %d (step %lld)\n",
               f->what.c_str(), f->layer, f->op.c_str(), f->max_abs, f->position, static_cast<long long>(f->step));
}

}  // namespace hearth::cli
