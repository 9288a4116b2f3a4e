#include "tests/peer/greedy.h"

#include <algorithm>
#include <numeric>

namespace hearth::peer {

std::vector<TopLogit> top_logits(std::span<const float> logits, std::int32_t k) {
  std::vector<std::int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(std::max(k, 1)), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](std::int32_t a, std::int32_t b) {
                      const float la = logits[static_cast<std::size_t>(a)];
                      const float lb = logits[static_cast<std::size_t>(b)];
                      return la > lb || (la == lb && a < b);
                    });
  std::vector<TopLogit> top;
  for (std::size_t i = 0; i < n; ++i) top.push_back({ids[i], logits[static_cast<std::size_t>(ids[i])]});
  return top;
}

Result<std::vector<GreedyStep>> greedy_generate(Model& model, std::span<const std::int32_t> prompt,
                                                const GreedyOptions& options) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "greedy_generate: the prompt is empty");
  const std::int32_t total = static_cast<std::int32_t>(prompt.size()) + options.max_new_tokens;
  const std::int32_t n_blocks = (total + options.block_size - 1) / options.block_size;
  HEARTH_TRY(model.allocate_kv(KvLayout{n_blocks, options.block_size}));
  std::vector<std::int32_t> table(static_cast<std::size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);

  std::vector<float> logits(model.hparams().n_vocab);
  std::vector<GreedyStep> out;
  std::vector<std::int32_t> next(prompt.begin(), prompt.end());  // this step's new tokens
  std::int32_t pos = 0;
  while (static_cast<std::int32_t>(out.size()) < options.max_new_tokens) {
    const SequenceStep step{next, pos, table, true};
    HEARTH_TRY(model.forward(std::span(&step, 1), logits));
    pos += static_cast<std::int32_t>(next.size());
    GreedyStep g{0, top_logits(logits, options.report_top)};
    g.token = g.top.front().id;
    out.push_back(g);
    const auto& stops = options.stop_tokens;
    if (std::find(stops.begin(), stops.end(), g.token) != stops.end()) break;
    next.assign(1, g.token);
  }
  return out;
}

}  // namespace hearth::peer
