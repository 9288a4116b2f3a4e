#include "engine/advice/latency_advice.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace hearth::advice {
namespace {

struct Format {
  const char* name;
  double bits;
};
// Bits per weight, scales included (the K mixtures: their usual average).
constexpr std::array<Format, 13> kFormats{{{"F32", 32},
                                           {"F16", 16},
                                           {"BF16", 16},
                                           {"Q8_0", 8.5},
                                           {"Q6_K", 6.5625},
                                           {"Q5_1", 6},
                                           {"Q5_K_M", 5.7},
                                           {"Q5_K", 5.5},
                                           {"Q5_0", 5.5},
                                           {"Q4_1", 5},
                                           {"Q4_K_M", 4.85},
                                           {"Q4_K", 4.5},
                                           {"Q4_0", 4.5}}};
constexpr std::array<const char*, 6> kLadder{"F32", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M"};

Suggestion make(std::string change, std::string from, std::string to, double factor, double measured, double target,
                std::string reason) {
  Suggestion s;
  s.change = std::move(change);
  s.from = std::move(from);
  s.to = std::move(to);
  s.factor = std::clamp(factor, 0.0, 1.0);
  s.predicted_ms = measured * s.factor;
  s.gain_ms = measured - s.predicted_ms;
  s.meets_target = s.predicted_ms <= target;
  s.reason = std::move(reason);
  return s;
}

std::vector<Suggestion> candidates(const LatencyTarget& t, double measured, const CurrentSetup& c,
                                   const AdviceOptions& o) {
  const bool itl = t.metric == LatencyMetric::kInterTokenP99;
  const double w = std::clamp(c.weight_share, 0.0, 1.0), a = std::clamp(c.attention_share, 0.0, 1.0);
  std::vector<Suggestion> out;
  if (c.kv_precision == "f16") {
    // fp8 on CUDA, q8_0 on the CPU (34 bytes per 32 values): about half the bytes either way.
    out.push_back(make("kv_precision", "f16", c.cuda ? "fp8" : "q8_0", itl ? 1 - a / 2 : 1 - a / 4, measured,
                       t.target_ms, "half the KV cache bytes read per token"));
  }
  if (const std::string to = coarser_format(c.weight_format); !to.empty()) {
    const double ratio = bits_per_weight(to) / bits_per_weight(c.weight_format);
    const double share = itl ? w : w * o.prefill_weight_sensitivity;
    out.push_back(make("weight_format", c.weight_format, to, 1 - share * (1 - ratio), measured, t.target_ms,
                       "fewer weight bytes read per token"));
  }
  if (c.streams > 1) {
    out.push_back(make("streams", std::to_string(c.streams), std::to_string(std::max(1, c.streams / 2)),
                       1 - (1 - w) / 2, measured, t.target_ms, "fewer sequences share each step"));
  }
  if (c.context_length / 2 >= o.min_context) {
    out.push_back(make("context_length", std::to_string(c.context_length), std::to_string(c.context_length / 2),
                       itl ? 1 - a / 2 : 0.5, measured, t.target_ms,
                       itl ? "long sequences read half the cache" : "prompts that fill the context are cut to it"));
  }
  return out;
}

}  // namespace

double bits_per_weight(const std::string& format) {
  for (const Format& f : kFormats) {
    if (format == f.name) return f.bits;
  }
  return 0;
}

std::string coarser_format(const std::string& format) {
  const double bits = bits_per_weight(format);
  if (bits == 0) return "";
  for (const char* next : kLadder) {
    if (bits_per_weight(next) < bits - 0.25) return next;  // the first rung clearly lighter
  }
  return "";
}

double percentile(std::span<const double> v, double p) {
  if (v.empty()) return 0;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
  return s[std::clamp<std::size_t>(rank, 1, s.size()) - 1];
}

Advice advise(const LatencyTarget& target, std::span<const double> window, const CurrentSetup& setup,
              const AdviceOptions& options) {
  Advice a;
  a.samples = window.size();
  if (window.size() < std::max<std::size_t>(options.min_samples, 2) || target.target_ms <= 0) return a;
  a.measured_ms = percentile(window, 0.99);
  a.recent_ms = percentile(window.subspan(window.size() / 2), 0.99);
  if (a.measured_ms <= target.target_ms) {
    a.verdict = Advice::Verdict::kMeetsTarget;
    return a;
  }
  if (a.recent_ms <= target.target_ms) {
    a.verdict = Advice::Verdict::kTransient;  // the slow part has passed
    return a;
  }
  a.verdict = Advice::Verdict::kOverTarget;
  a.suggestions = candidates(target, a.measured_ms, setup, options);
  for (const Suggestion& s : a.suggestions) {
    if (s.available && s.meets_target) {
      a.recommended = s;
      return a;
    }
  }
  // None meets it alone: the available one that gains most.
  for (const Suggestion& s : a.suggestions) {
    if (s.available && (!a.recommended || s.gain_ms > a.recommended->gain_ms)) a.recommended = s;
  }
  return a;
}

}  // namespace hearth::advice
