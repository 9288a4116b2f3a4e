// Outlier refinement of 8-bit activation blocks.
//
// The quantized dots take activations as 8-bit blocks with one scale each
// (d = max|x| / 127 over 32 or 256 elements). Some models carry a few massive
// outlier channels in their hidden states (SmolLM2: one value up to ~900x the
// median of its block); one such value sets its block's scale so high that
// the block's other elements round to 0 or +-1, and those elements are lost.
// llama.cpp does the same rounding; on SmolLM2 it changes answers.
//
// Other models spread their outliers over every block: Gemma 3's GeGLU output
// (the down projection's input) has one or more values of 5-10x its block's
// RMS in most 256-element blocks, so no block stands out against the row's
// median, yet each loses its small values (measured on Gemma 3 270M: the
// down input's rounding alone makes 4.7% relative error in the logits,
// against 0.02% with every block refined).
//
// The fix keeps the fast 8-bit path and adds a second, finer 8-bit block for
// the blocks that need it: a block is an outlier block when its scale is
// more than `ratio` times the median block scale of its row, or when its
// largest magnitude is more than kOutlierCrest times its own RMS (a Gaussian
// block of 256 has a crest of about 3.3, of 32 about 2.5). For those, the
// residual r = x - dequant(block) is quantized again into a block of the same
// activation type, and the matmul adds the weight block's dot with it. The
// residual's scale is at most d / 254, so an outlier block ends up with about
// 15 bits of resolution; ordinary blocks are untouched.
//
// Per activation row, independent of other rows: batched and single-row
// matmuls give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels {

// The default ratio: blocks whose scale exceeds 4x the row's median scale
// are refined. (0 turns refinement off.)
inline constexpr float kDefaultOutlierRatio = 4.0f;
// A block whose max|x| exceeds this many times its RMS is refined too.
inline constexpr float kOutlierCrest = 5.0f;

// Refinement of n_tokens activation rows of blocks_per_row blocks each.
struct OutlierBlocks {
  int64_t blocks_per_row = 0;
  size_t block_bytes = 0;         // bytes of one activation block
  size_t row_bytes = 0;           // blocks_per_row * block_bytes
  std::vector<int32_t> count;     // [n_tokens] refined blocks of each row
  std::vector<int32_t> index;     // [n_tokens][blocks_per_row]: the first count[t] are row t's, ascending
  std::vector<uint8_t> residual;  // [n_tokens][row_bytes]: residual blocks at their block's position
                                  // (only refined positions are written)
  std::vector<uint8_t> mask;      // [ceil(n_tokens / 8)][blocks_per_row]: bit k of mask[c][b] set when
                                  // token 8c + k refines block b (finish_outlier_masks)

  const uint8_t* residual_row(int64_t t) const { return residual.data() + static_cast<size_t>(t) * row_bytes; }
  const uint8_t* residual_block(int64_t t, int64_t b) const {
    return residual_row(t) + static_cast<size_t>(b) * block_bytes;
  }
  const uint8_t* mask_of_chunk(int64_t c) const { return mask.data() + static_cast<size_t>(c * blocks_per_row); }
};

// Tokens per mask byte (one bit each): the matmul's multi-row dot takes at
// most this many rows at once.
inline constexpr int64_t kOutlierMaskTokens = 8;

// Sizes `out` for n_tokens rows of `cols` elements of activation type `act`.
// Must be called before refine_row.
void prepare_outlier_blocks(const QuantOps& act, int64_t n_tokens, int64_t cols, OutlierBlocks& out);

// Finds row t's outlier blocks (x: the f32 row, q: its quantized row of type
// act; by the median rule with `ratio`, and by the crest rule) and writes
// their residual blocks. Thread-safe for distinct t.
void refine_row(const QuantOps& act, const float* x, const uint8_t* q, int64_t cols, float ratio, int64_t t,
                OutlierBlocks& out);

// Builds `mask` from the rows' refined blocks, after every refine_row.
void finish_outlier_masks(int64_t n_tokens, OutlierBlocks& out);

}  // namespace hearth::kernels
