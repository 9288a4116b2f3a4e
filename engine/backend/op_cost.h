// What one op call reads, writes and computes, from its shapes and types
// alone: the numbers a profile divides by the op's time (achieved GB/s,
// FLOP/s). They are the op's minimum traffic as the math needs it (each
// weight byte once, each K/V byte of the visible context once per sequence),
// not what a kernel's caching makes of it.
//
// FLOP conventions (a multiply-add counts 2): product 2 n rows cols; RMSNorm
// 4 per element (square, sum, scale, weight); RoPE 3 per element (a 2x2
// rotation per pair, the sines excluded); attention 4 head_dim per (query
// head, visible position) (QK and PV), plus 5 per score (max, exp, sum,
// divide, the scale); SwiGLU / GeGLU 5 / 10 per element; add and scale 1;
// the embedding's dequantization 1 per element.
#pragma once

#include <cstdint>
#include <span>

#include "engine/backend/handles.h"

namespace hearth::backend {

struct OpCost {
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t flops = 0;
};

// Bytes of a weight matrix in its block layout.
std::uint64_t matrix_bytes(const Matrix& w);

OpCost embed_cost(const Matrix& table, std::int64_t n_tokens);
OpCost rms_norm_cost(std::int64_t rows, std::int64_t width);
OpCost elementwise_cost(std::int64_t n_elements, int inputs, std::uint64_t flops_per_element);
// y = W x (+ bias) over n rows; with `residual`, the output is also read (residual += W x).
OpCost linear_cost(const Matrix& w, std::int64_t n, bool bias, bool residual);
OpCost rope_cost(std::int64_t n_tokens, std::int64_t q_floats, std::int64_t k_floats);
// kv_token_bytes: K and V of one token in one layer, as the cache stores them.
OpCost store_kv_cost(std::int64_t n_tokens, std::int64_t kv_floats, std::uint64_t kv_token_bytes);

// One sequence of a step, as attention sees it.
struct SeqSpan {
  std::int32_t start_pos = 0;  // positions already cached
  std::int32_t count = 0;      // new tokens
};
// Positions token `pos` attends to (window > 0: a sliding window).
std::int64_t visible_positions(std::int32_t pos, std::int32_t window);
OpCost attention_cost(std::span<const SeqSpan> seqs, std::int32_t n_head, std::int32_t head_dim,
                      std::uint64_t kv_token_bytes, std::int32_t window);
// The final norm of `rows` rows and the output matrix over them (logits to host memory).
OpCost logits_cost(const Matrix& output, std::int64_t rows);

}  // namespace hearth::backend
