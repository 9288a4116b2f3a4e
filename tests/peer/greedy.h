// Greedy generation straight on a Model (no engine runtime): the prompt in one
// forward step, then one token per step, each the arg-max of the logits. Used
// by the llama.cpp parity test, which also needs the top logits of every step
// to tell a near-tie from a real divergence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/model.h"
#include "hearth/result.h"

namespace hearth::peer {

struct TopLogit {
  std::int32_t id = 0;
  float logit = 0;
};

struct GreedyStep {
  std::int32_t token = 0;     // the arg-max (lowest id on an exact tie)
  std::vector<TopLogit> top;  // the `report_top` largest logits, descending
};

struct GreedyOptions {
  std::int32_t max_new_tokens = 64;
  std::vector<std::int32_t> stop_tokens;  // generation ends after emitting one of these
  std::int32_t report_top = 5;
  std::int32_t block_size = 16;  // tokens per KV block
};

// (Re)allocates the model's KV storage for prompt + max_new_tokens tokens.
// Errors: kInvalidArgument for an empty prompt, the model's own errors.
Result<std::vector<GreedyStep>> greedy_generate(Model& model, std::span<const std::int32_t> prompt,
                                                const GreedyOptions& options);

// The k largest entries of `logits`, descending (ties: lower id first).
std::vector<TopLogit> top_logits(std::span<const float> logits, std::int32_t k);

}  // namespace hearth::peer
