// Perplexity of a model over a token sequence, the way llama.cpp's perplexity
// tool measures it, so the two can be compared on the same file:
// the tokens are cut into consecutive windows of `context` tokens; each window
// is evaluated from an empty cache (with BOS first when the model adds one),
// and only the second half of each window is scored (every scored token has
// at least context/2 tokens of history). Perplexity is exp(mean negative
// log-likelihood); its standard error comes from the spread of the per-token
// NLL (delta method: ppl x sd(nll) / sqrt(n)).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "engine/model/model.h"
#include "hearth/result.h"

namespace hearth::eval {

struct PerplexityOptions {
  std::int32_t context = 512;                                           // tokens per window (BOS included)
  std::optional<std::int32_t> bos;                                      // prepended to each window when set
  std::int32_t batch = 256;                                             // tokens per forward step
  std::function<void(std::int32_t done, std::int32_t total)> progress;  // windows
};

struct PerplexityResult {
  double perplexity = 0;
  double standard_error = 0;
  std::int64_t scored_tokens = 0;
  std::int32_t windows = 0;
  double tokens_per_second = 0;  // evaluated tokens / wall time
};

// kInvalidArgument when the text does not fill one window.
// The model's KV storage is (re)allocated for one window.
Result<PerplexityResult> perplexity(Model& model, std::span<const std::int32_t> tokens,
                                    const PerplexityOptions& options);

}  // namespace hearth::eval
