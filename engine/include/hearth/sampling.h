// Sampling parameters of one request (public: front ends fill them in).
// Defaults match llama.cpp's defaults.
#pragma once

#include <cstdint>

#include "hearth/result.h"

namespace hearth {

struct SamplingParams {
  float temperature = 0.8f;        // <= 0: greedy (argmax after penalties, ties to the lowest id)
  int32_t top_k = 40;              // 0: off
  float top_p = 0.95f;             // (0, 1]; 1: off
  float min_p = 0.05f;             // [0, 1]; 0: off
  float repeat_penalty = 1.0f;     // > 0; 1: off
  float frequency_penalty = 0.0f;  // subtracted per occurrence
  float presence_penalty = 0.0f;   // subtracted once per token present
  int32_t penalty_last_n = 64;     // tokens of history the penalties look at; 0: off
  uint64_t seed = 0;               // same seed, same logits, same draws
};

// kInvalidArgument naming the first bad field: a NaN or infinite value,
// negative temperature, top_k < 0, top_p outside (0, 1], min_p outside [0, 1],
// repeat_penalty <= 0, penalty_last_n < 0.
Result<void> validate(const SamplingParams& params);

// True when the penalty stage changes anything.
bool penalties_active(const SamplingParams& params);

}  // namespace hearth
