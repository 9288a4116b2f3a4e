#include "engine/model/step_check.h"

#include <string>

namespace hearth {

Result<void> check_steps(std::span<const SequenceStep> steps, std::uint32_t n_vocab, const KvLayout& kv,
                         std::size_t logits_size) {
  if (steps.empty()) return make_error(ErrorCode::kInvalidArgument, "a forward step has no sequences");
  std::size_t want_logits = 0;  // rows
  for (const auto& s : steps) {
    if (s.tokens.empty()) return make_error(ErrorCode::kInvalidArgument, "a sequence step has no tokens");
    for (std::int32_t t : s.tokens) {
      if (t < 0 || static_cast<std::uint32_t>(t) >= n_vocab) {
        return make_error(ErrorCode::kInvalidArgument, "token id " + std::to_string(t) + " is outside the vocabulary");
      }
    }
    const std::int64_t end = static_cast<std::int64_t>(s.start_pos) + static_cast<std::int64_t>(s.tokens.size());
    if (s.start_pos < 0 || end > static_cast<std::int64_t>(s.block_table.size()) * kv.block_size) {
      return make_error(ErrorCode::kInvalidArgument, "the block table does not cover position " + std::to_string(end));
    }
    for (std::int32_t b : s.block_table) {
      if (b < 0 || b >= kv.num_blocks) {
        return make_error(ErrorCode::kInvalidArgument, "KV block id " + std::to_string(b) + " is out of range");
      }
    }
    if (s.want_logits) want_logits += s.all_logits ? s.tokens.size() : 1;
  }
  if (logits_size < want_logits * n_vocab) return make_error(ErrorCode::kInvalidArgument, "logits buffer too small");
  return {};
}

}  // namespace hearth
