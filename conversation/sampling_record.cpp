#include "conversation/sampling_record.h"

#include <charconv>
#include <cstdint>

namespace hearth::conversation {

namespace {

// The shortest decimal that reads back as the same float.
double decimal(float f) {
  char buf[32];
  const auto written = std::to_chars(buf, buf + sizeof buf, f);
  double d = f;
  std::from_chars(buf, written.ptr, d);
  return d;
}

}  // namespace

store::SamplingRecord to_record(const SamplingParams& p) {
  return {decimal(p.temperature),
          p.top_k,
          decimal(p.top_p),
          decimal(p.min_p),
          decimal(p.repeat_penalty),
          decimal(p.frequency_penalty),
          decimal(p.presence_penalty),
          p.penalty_last_n,
          p.seed};
}

SamplingParams sampling_of(const store::SamplingRecord& r) {
  SamplingParams p;
  p.temperature = static_cast<float>(r.temperature);
  p.top_k = static_cast<std::int32_t>(r.top_k);
  p.top_p = static_cast<float>(r.top_p);
  p.min_p = static_cast<float>(r.min_p);
  p.repeat_penalty = static_cast<float>(r.repeat_penalty);
  p.frequency_penalty = static_cast<float>(r.frequency_penalty);
  p.presence_penalty = static_cast<float>(r.presence_penalty);
  p.penalty_last_n = static_cast<std::int32_t>(r.penalty_last_n);
  p.seed = r.seed;
  return p;
}

}  // namespace hearth::conversation
