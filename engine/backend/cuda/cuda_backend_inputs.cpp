// CudaBackend: a step's inputs staged for the device (token ids, positions,
// KV slots, block tables, the prompt tiles of the tensor-core attention) and
// the step's sizes.
#include <algorithm>
#include <cstring>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/env_switch.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/mmq.h"

namespace hearth::cuda {
namespace kc = hearth::kernels::cuda;

namespace {

// Greedy steps return their rows' arg-maxes, not the logits
// (HEARTH_CUDA_DEVICE_ARGMAX=0: the logits, and the host's arg-max; A/B runs).
bool device_argmax_on() {
  static const bool on = env_switch_on("HEARTH_CUDA_DEVICE_ARGMAX");
  return on;
}

}  // namespace

// Fills host_ints_ (see StepSizes) and logit_rows_, and returns the step's sizes.
CudaBackend::StepSizes CudaBackend::stage_inputs(std::span<const SequenceStep> steps) {
  StepSizes sz;
  std::size_t max_blocks = 1;
  logit_rows_.clear();
  sz.decode = !steps.empty() && static_cast<std::int64_t>(steps.size()) <= graph_max_sequences(steps.size());
  for (const auto& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    max_blocks = std::max(max_blocks, s.block_table.size());
    sz.max_context = std::max(sz.max_context, static_cast<int>(s.start_pos + count));
    sz.decode = sz.decode && count == 1 && s.want_logits && !s.all_logits;
    if (s.want_logits) {
      const std::int64_t rows = s.all_logits ? count : 1;
      const std::int64_t row = sz.n_tokens + count - rows;
      if (!logit_rows_.empty() && logit_rows_.back().row + logit_rows_.back().count == row) {
        logit_rows_.back().count += rows;  // contiguous rows: one norm launch
      } else {
        logit_rows_.push_back(LogitRows{row, rows});
      }
      sz.n_logit_rows += rows;
    }
    sz.n_tokens += count;
  }
  const std::int32_t bs = kv_layout_.block_size;
  if (sz.decode) {
    // Padded rows point at block 0 and are never read (past every position).
    constexpr int kBucket = StepGraphs::kContextBucket;
    sz.max_context = (sz.max_context + kBucket - 1) / kBucket * kBucket;
    max_blocks = std::max(max_blocks, static_cast<std::size_t>((sz.max_context + bs - 1) / bs));
  }
  sz.max_blocks = static_cast<int>(max_blocks);
  const auto n = static_cast<std::size_t>(sz.n_tokens);
  sz.n_ints = 4 * n + steps.size() * max_blocks;
  const int tile_tokens = prefill_tile_tokens_;
  std::vector<kc::PrefillTile>& tiles = prefill_tiles_;
  tiles.clear();
  split_rows_.clear();
  std::int32_t row = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& s = steps[i];
    const auto count = static_cast<std::int32_t>(s.tokens.size());
    if (tile_tokens > 0 && count >= std::max(tile_tokens, kPrefillMinTokens)) {
      for (std::int32_t j = 0; j < count; j += tile_tokens) {
        tiles.push_back(
            kc::PrefillTile{row + j, std::min(tile_tokens, count - j), static_cast<std::int32_t>(i), s.start_pos + j});
      }
    } else {
      for (std::int32_t j = 0; j < count; ++j) split_rows_.push_back(row + j);
    }
    row += count;
  }
  sz.n_tiles = static_cast<int>(tiles.size());
  sz.n_split_rows = static_cast<int>(split_rows_.size());
  if (sz.n_tiles > 0) {
    sz.tiles_at = sz.n_ints;
    sz.split_rows_at = sz.tiles_at + 4 * tiles.size();
    sz.n_ints = sz.split_rows_at + split_rows_.size();
  }
  sz.argmax = device_argmax_on() && sz.n_logit_rows > 0 &&
              std::all_of(steps.begin(), steps.end(),
                          [](const SequenceStep& s) { return !s.want_logits || (s.greedy && !s.all_logits); });
  if (sz.argmax) {  // room for the arg-maxes after the inputs
    sz.argmax_at = sz.n_ints;
    sz.n_ints += static_cast<std::size_t>(sz.n_logit_rows);
  }
  host_ints_.assign(sz.n_ints, 0);
  std::int32_t* ids = host_ints_.data();
  std::int32_t* positions = ids + n;
  std::int32_t* slots = positions + n;
  std::int32_t* token_seq = slots + n;
  std::int32_t* tables = token_seq + n;
  std::size_t t = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& s = steps[i];
    std::copy(s.block_table.begin(), s.block_table.end(), tables + i * max_blocks);
    for (std::size_t j = 0; j < s.tokens.size(); ++j, ++t) {
      const std::int32_t pos = s.start_pos + static_cast<std::int32_t>(j);
      ids[t] = s.tokens[j];
      positions[t] = pos;
      slots[t] = s.block_table[static_cast<std::size_t>(pos / bs)] * bs + pos % bs;
      token_seq[t] = static_cast<std::int32_t>(i);
    }
  }
  if (sz.n_tiles > 0) {
    std::memcpy(ids + sz.tiles_at, tiles.data(), tiles.size() * sizeof(kc::PrefillTile));
    std::copy(split_rows_.begin(), split_rows_.end(), ids + sz.split_rows_at);
  }
  return sz;
}

std::int64_t CudaBackend::graph_max_sequences(std::size_t n) const {
  // Up to kMaxGemvTokens every product runs a GEMV or mmq; past it, only
  // where mmq takes every matrix (else the f16 path's cuBLAS call, kept out
  // of graphs).
  // HEARTH_CUDA_GRAPH_WIDE=0: graphs for up to kMaxGemvTokens sequences only (A/B runs).
  static const bool wide = env_switch_on("HEARTH_CUDA_GRAPH_WIDE");
  if (!wide || n <= static_cast<std::size_t>(kc::kMaxGemvTokens)) return kc::kMaxGemvTokens;
  const auto rows = static_cast<std::int64_t>(n);
  if (!use_mmq(device_matrix(output_), rows)) return kc::kMaxGemvTokens;
  for (const backend::Matrix& m : linear_matrices_) {
    if (!use_mmq(device_matrix(m), rows)) return kc::kMaxGemvTokens;
  }
  return kc::mmq_max_tokens();
}

}  // namespace hearth::cuda
