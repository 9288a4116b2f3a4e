#include "engine/backend/op_cost.h"

#include <algorithm>

namespace hearth::backend {
namespace {

std::uint64_t u(std::int64_t v) {
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

constexpr std::uint64_t kF32 = sizeof(float);

}  // namespace

std::uint64_t matrix_bytes(const Matrix& w) {
  return u(w.rows) * w.row_stride;
}

OpCost embed_cost(const Matrix& table, std::int64_t n_tokens) {
  // One row of the table per token, plus the token ids.
  return OpCost{u(n_tokens) * (table.row_stride + sizeof(std::int32_t)), u(n_tokens) * u(table.cols) * kF32,
                u(n_tokens) * u(table.cols)};
}

OpCost rms_norm_cost(std::int64_t rows, std::int64_t width) {
  const std::uint64_t n = u(rows) * u(width);
  return OpCost{(n + u(width)) * kF32, n * kF32, 4 * n};
}

OpCost elementwise_cost(std::int64_t n_elements, int inputs, std::uint64_t flops_per_element) {
  const std::uint64_t n = u(n_elements);
  return OpCost{n * static_cast<std::uint64_t>(inputs) * kF32, n * kF32, n * flops_per_element};
}

OpCost linear_cost(const Matrix& w, std::int64_t n, bool bias, bool residual) {
  OpCost c;
  c.input_bytes = matrix_bytes(w) + u(n) * u(w.cols) * kF32 + (bias ? u(w.rows) * kF32 : 0) +
                  (residual ? u(n) * u(w.rows) * kF32 : 0);
  c.output_bytes = u(n) * u(w.rows) * kF32;
  c.flops = 2 * u(n) * u(w.rows) * u(w.cols) + (bias || residual ? u(n) * u(w.rows) : 0);
  return c;
}

OpCost rope_cost(std::int64_t n_tokens, std::int64_t q_floats, std::int64_t k_floats) {
  const std::uint64_t n = u(n_tokens) * (u(q_floats) + u(k_floats));
  return OpCost{n * kF32 + u(n_tokens) * sizeof(std::int32_t), n * kF32, 3 * n};
}

OpCost store_kv_cost(std::int64_t n_tokens, std::int64_t kv_floats, std::uint64_t kv_token_bytes) {
  return OpCost{2 * u(n_tokens) * u(kv_floats) * kF32, u(n_tokens) * kv_token_bytes, 0};
}

std::int64_t visible_positions(std::int32_t pos, std::int32_t window) {
  const std::int64_t all = std::int64_t{pos} + 1;
  return window > 0 ? std::min<std::int64_t>(all, window) : all;
}

OpCost attention_cost(std::span<const SeqSpan> seqs, std::int32_t n_head, std::int32_t head_dim,
                      std::uint64_t kv_token_bytes, std::int32_t window) {
  OpCost c;
  std::uint64_t scores = 0;  // (token, visible position) pairs, per query head
  std::uint64_t tokens = 0;
  for (const SeqSpan& s : seqs) {
    tokens += u(s.count);
    for (std::int32_t i = 0; i < s.count; ++i) scores += u(visible_positions(s.start_pos + i, window));
    // The cached positions any of its tokens sees, each read once.
    const std::int64_t last = std::int64_t{s.start_pos} + s.count;  // positions 0 .. last - 1
    const std::int64_t first = window > 0 ? std::max<std::int64_t>(0, s.start_pos - window + 1) : 0;
    c.input_bytes += u(last - first) * kv_token_bytes;
  }
  const std::uint64_t q = tokens * u(n_head) * u(head_dim) * kF32;
  c.input_bytes += q;
  c.output_bytes = q;
  c.flops = scores * u(n_head) * (4 * u(head_dim) + 5);
  return c;
}

OpCost logits_cost(const Matrix& output, std::int64_t rows) {
  const OpCost norm = rms_norm_cost(rows, output.cols);
  const OpCost product = linear_cost(output, rows, false, false);
  return OpCost{norm.input_bytes + product.input_bytes - u(rows) * u(output.cols) * kF32, product.output_bytes,
                norm.flops + product.flops};
}

}  // namespace hearth::backend
