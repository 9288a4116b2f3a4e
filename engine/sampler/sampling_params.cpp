#include "hearth/sampling.h"

#include <cmath>
#include <string>

namespace hearth {
namespace {

Error bad(const char* field, const std::string& rule, double value) {
  return make_error(ErrorCode::kInvalidArgument,
                    std::string("sampling parameter ") + field + " " + rule + ", got " + std::to_string(value));
}

}  // namespace

Result<void> validate(const SamplingParams& p) {
  const struct {
    const char* name;
    float value;
  } floats[] = {{"temperature", p.temperature},
                {"top_p", p.top_p},
                {"min_p", p.min_p},
                {"repeat_penalty", p.repeat_penalty},
                {"frequency_penalty", p.frequency_penalty},
                {"presence_penalty", p.presence_penalty}};
  for (const auto& f : floats) {
    if (!std::isfinite(f.value)) return bad(f.name, "must be finite", static_cast<double>(f.value));
  }
  if (p.temperature < 0.0f) return bad("temperature", "must be >= 0", static_cast<double>(p.temperature));
  if (p.top_k < 0) return bad("top_k", "must be >= 0 (0 = off)", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return bad("top_p", "must be in (0, 1]", static_cast<double>(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return bad("min_p", "must be in [0, 1]", static_cast<double>(p.min_p));
  if (!(p.repeat_penalty > 0.0f)) return bad("repeat_penalty", "must be > 0", static_cast<double>(p.repeat_penalty));
  if (p.penalty_last_n < 0) return bad("penalty_last_n", "must be >= 0", p.penalty_last_n);
  return {};
}

bool penalties_active(const SamplingParams& p) {
  return p.penalty_last_n > 0 &&
         (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f);
}

}  // namespace hearth
