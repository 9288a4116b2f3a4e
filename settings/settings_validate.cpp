// Range checks: each bad value is reset to the default, with a warning naming it.
#include <cmath>
#include <set>
#include <string>

#include "settings/settings.h"

namespace hearth::settings {

namespace {

bool is_device(const std::string& d) {
  if (d == "auto" || d == "cpu") return true;
  if (d.rfind("cuda:", 0) != 0 || d.size() <= 5 || d.size() > 8) return false;
  for (std::size_t i = 5; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') return false;
  }
  return std::stoi(d.substr(5)) <= 255;
}

// Standard base64 (A-Z a-z 0-9 + /, '=' padding only at the end, length a multiple of 4).
bool is_base64(const std::string& s) {
  if (s.size() % 4 != 0) return false;
  std::size_t pad = 0;
  for (const char c : s) {
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '=') {
      ++pad;
    } else if (pad > 0 || !(alnum || c == '+' || c == '/')) {
      return false;
    }
  }
  return pad <= 2;
}

template <class T>
void reset(T& value, const T& fallback, const std::string& key, std::vector<std::string>& warnings) {
  warnings.push_back(key + " is out of range; using the default");
  value = fallback;
}

void validate_sampling(SamplingParams& p, std::vector<std::string>& w) {
  const SamplingParams d;
  auto finite = [](float x) { return std::isfinite(x); };
  if (!finite(p.temperature) || p.temperature < 0) reset(p.temperature, d.temperature, "sampling.temperature", w);
  if (p.top_k < 0) reset(p.top_k, d.top_k, "sampling.top_k", w);
  if (!finite(p.top_p) || p.top_p <= 0 || p.top_p > 1) reset(p.top_p, d.top_p, "sampling.top_p", w);
  if (!finite(p.min_p) || p.min_p < 0 || p.min_p > 1) reset(p.min_p, d.min_p, "sampling.min_p", w);
  if (!finite(p.repeat_penalty) || p.repeat_penalty <= 0) {
    reset(p.repeat_penalty, d.repeat_penalty, "sampling.repeat_penalty", w);
  }
  if (!finite(p.frequency_penalty)) reset(p.frequency_penalty, d.frequency_penalty, "sampling.frequency_penalty", w);
  if (!finite(p.presence_penalty)) reset(p.presence_penalty, d.presence_penalty, "sampling.presence_penalty", w);
  if (p.penalty_last_n < 0) reset(p.penalty_last_n, d.penalty_last_n, "sampling.penalty_last_n", w);
  // The engine's own check is the final word; anything it still rejects resets the group.
  if (!hearth::validate(p).ok()) reset(p, d, "sampling", w);
}

}  // namespace

std::vector<std::string> validate(Settings& s) {
  const Settings d;
  std::vector<std::string> w;
  if (!is_device(s.device)) reset(s.device, d.device, "device \"" + s.device + "\"", w);
  if (s.context_length < kMinContextLength || s.context_length > kMaxContextLength) {
    reset(s.context_length, d.context_length, "context_length " + std::to_string(s.context_length), w);
  }
  // The --quant spellings (models/weight_convert.h parse_weight_quant); the loader refuses a finer one.
  static const std::set<std::string> kFormats = {"",     "F32",  "F16",  "BF16", "Q8_0", "Q6_K",
                                                 "Q5_1", "Q5_0", "Q5_K", "Q4_1", "Q4_0", "Q4_K"};
  if (kFormats.count(s.weight_format) == 0) {
    reset(s.weight_format, d.weight_format, "weight_format \"" + s.weight_format + "\"", w);
  }
  validate_sampling(s.sampling, w);
  if (s.max_tokens < 1 || s.max_tokens > kMaxContextLength) {
    reset(s.max_tokens, d.max_tokens, "max_tokens " + std::to_string(s.max_tokens), w);
  }
  if (!is_base64(s.panel_layout)) reset(s.panel_layout, d.panel_layout, "panel_layout (not base64)", w);
  if (!is_base64(s.window_geometry)) reset(s.window_geometry, d.window_geometry, "window_geometry (not base64)", w);
  if (s.latency_metric != "itl_p99" && s.latency_metric != "ttft_p99") {
    reset(s.latency_metric, d.latency_metric, "latency_target.metric \"" + s.latency_metric + "\"", w);
  }
  // A finite target up to an hour; negative, NaN or absurd values mean no target.
  if (!(s.latency_target_ms >= 0 && s.latency_target_ms <= 3.6e6)) {
    reset(s.latency_target_ms, d.latency_target_ms, "latency_target.target_ms", w);
  }
  // Only an http(s) URL is kept (the endpoint parser has the final word when the app connects);
  // without one there is nothing to reconnect to.
  if (!s.remote_url.empty() && s.remote_url.rfind("http://", 0) != 0 && s.remote_url.rfind("https://", 0) != 0) {
    reset(s.remote_url, d.remote_url, "remote_endpoint.base_url (not an http:// or https:// URL)", w);
  }
  if (s.remote_url.empty()) s.remote_in_use = false;
  return w;
}

const char* to_string(Theme theme) {
  switch (theme) {
    case Theme::kSystem:
      return "system";
    case Theme::kLight:
      return "light";
    case Theme::kDark:
      return "dark";
  }
  return "system";
}

}  // namespace hearth::settings
