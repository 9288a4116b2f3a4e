#include "engine/eval/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

namespace hearth::eval {
namespace {

// -log softmax(logits)[target], computed stably in double.
double nll(std::span<const float> logits, std::int32_t target) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - mx);
  return std::log(sum) - (static_cast<double>(logits[static_cast<std::size_t>(target)]) - mx);
}

}  // namespace

Result<PerplexityResult> perplexity(Model& model, std::span<const std::int32_t> tokens,
                                    const PerplexityOptions& options) {
  const std::int32_t ctx = options.context;
  const std::int32_t text_per_window = ctx - (options.bos ? 1 : 0);
  if (ctx < 4 || options.batch < 1) return make_error(ErrorCode::kInvalidArgument, "context must be at least 4");
  const auto windows = static_cast<std::int32_t>(tokens.size() / static_cast<std::size_t>(text_per_window));
  if (windows == 0) {
    return make_error(ErrorCode::kInvalidArgument, "the text has " + std::to_string(tokens.size()) +
                                                       " tokens, fewer than one window of " + std::to_string(ctx));
  }
  const std::int32_t block_size = 16;
  const std::int32_t n_blocks = (ctx + block_size - 1) / block_size;
  HEARTH_TRY(model.allocate_kv(KvLayout{n_blocks, block_size}));
  std::vector<std::int32_t> table(static_cast<std::size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);
  const std::size_t vocab = model.hparams().n_vocab;
  std::vector<float> logits;
  std::vector<double> nlls;
  const auto start = std::chrono::steady_clock::now();
  for (std::int32_t w = 0; w < windows; ++w) {
    std::vector<std::int32_t> window;
    if (options.bos) window.push_back(*options.bos);
    const auto first = tokens.begin() + static_cast<std::ptrdiff_t>(w) * text_per_window;
    window.insert(window.end(), first, first + text_per_window);
    for (std::int32_t pos = 0; pos < ctx; pos += options.batch) {
      const std::int32_t n = std::min(options.batch, ctx - pos);
      logits.resize(static_cast<std::size_t>(n) * vocab);
      const SequenceStep step{std::span(window).subspan(static_cast<std::size_t>(pos), static_cast<std::size_t>(n)),
                              pos, table, true, true};
      HEARTH_TRY(model.forward(std::span(&step, 1), logits));
      // Logits at position p predict token p + 1; score the second half.
      for (std::int32_t i = 0; i < n; ++i) {
        const std::int32_t p = pos + i;
        if (p < ctx / 2 || p + 1 >= ctx) continue;
        nlls.push_back(nll(std::span(logits).subspan(static_cast<std::size_t>(i) * vocab, vocab),
                           window[static_cast<std::size_t>(p + 1)]));
      }
    }
    if (options.progress) options.progress(w + 1, windows);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double n = static_cast<double>(nlls.size());
  const double mean = std::accumulate(nlls.begin(), nlls.end(), 0.0) / n;
  double var = 0;
  for (double x : nlls) var += (x - mean) * (x - mean);
  var /= std::max(1.0, n - 1);
  PerplexityResult r;
  r.perplexity = std::exp(mean);
  r.standard_error = r.perplexity * std::sqrt(var / n);
  r.scored_tokens = static_cast<std::int64_t>(nlls.size());
  r.windows = windows;
  r.tokens_per_second = static_cast<double>(windows) * ctx / seconds;
  return r;
}

}  // namespace hearth::eval
