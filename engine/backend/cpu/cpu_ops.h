// The CPU backend's operations, in the shapes the model forward passes use.
// Thin wrappers over kernels/cpu that fix the conventions (row-major
// activations [n_tokens][width], weights [rows][cols] of a ggml type, KV blocks
// [block][token-in-block][kv_head][head_dim] in f16, q8_0 or fp8) and run on the backend's
// thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/kv_precision.h"

namespace hearth::kernels {
class ThreadPool;
}

namespace hearth::cpu {

// A weight matrix in GGUF's layout: `rows` rows of `cols` elements of `type`.
struct Matrix {
  std::uint32_t type = 0;  // ggml type id
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  const void* data = nullptr;
};

// K and V of one layer in blocks: [n_blocks][block_size][n_kv_heads][head_dim],
// f16, or with q8_0 each [head_dim] row as head_dim / 32 Q8_0 blocks (34
// bytes each, read through unsigned char), or fp8 E4M3 codes (one byte a
// value: value = code * k_scale or v_scale), in the same 2-byte storage.
struct PagedKv {
  std::uint16_t* k = nullptr;
  std::uint16_t* v = nullptr;
  KvPrecision precision = KvPrecision::kF16;
  float k_scale = 1.0f;  // fp8 only
  float v_scale = 1.0f;
  std::int32_t block_size = 16;  // tokens per block
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
};

class CpuOps {
 public:
  // refine_outliers: the quantized matmuls give activation blocks with an
  // outlier a second, finer 8-bit block (kernels/cpu/outlier_refine.h);
  // false: plain 8-bit blocks, llama.cpp's arithmetic.
  explicit CpuOps(int n_threads, bool refine_outliers = true);
  ~CpuOps();
  CpuOps(const CpuOps&) = delete;
  CpuOps& operator=(const CpuOps&) = delete;

  int threads() const;
  // The pool the ops run on (the ceiling probes use it: engine/backend/cpu/cpu_ceilings.cpp).
  kernels::ThreadPool& pool();

  // y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens. x: [n_tokens][cols], y: [n_tokens][rows].
  void matmul(const Matrix& w, const float* x, std::int64_t n_tokens, float* y);

  // ys[i] = ws[i] x for matrices of the same cols (q/k/v, gate/up): one
  // activation quantization and one pass over the thread pool when their
  // types share an activation type, else one matmul each. Same results as
  // separate matmul calls, bit for bit. At most 4 matrices.
  void matmul_many(std::span<const Matrix> ws, const float* x, std::int64_t n_tokens, std::span<float* const> ys);

  // out[i] = dequantized row `row` of w (cols floats).
  void get_row(const Matrix& w, std::int64_t row, float* out);

  // out[t] = x[t] / rms(x[t]) * weight, rows of n floats. out may alias x.
  void rms_norm(const float* x, const float* weight, std::int64_t n_tokens, std::int64_t n, float eps, float* out);

  // Rotates x [n_tokens][n_heads][head_dim] in place by each token's position.
  void rope(float* x, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim,
            std::span<const std::int32_t> positions, float base, float scale, bool neox);

  // gate[i] = silu(gate[i]) * up[i], n floats.
  void swiglu(float* gate, const float* up, std::int64_t n);

  // gate[i] = gelu_tanh(gate[i]) * up[i], n floats.
  void geglu_tanh(float* gate, const float* up, std::int64_t n);

  // x[i] *= s, n floats.
  void scale(float* x, float s, std::int64_t n);

  // x[i] += y[i], n floats.
  void add(float* x, const float* y, std::int64_t n);

  // Writes k and v rows ([n_tokens][n_kv_heads * head_dim] f32) of tokens at
  // positions start_pos.. into their slots (block_table[pos / block_size]).
  void store_kv(const PagedKv& kv, std::span<const std::int32_t> block_table, std::int32_t start_pos, const float* k,
                const float* v, std::int64_t n_tokens);

  // One sequence of an attention call: n_tokens queries at positions
  // start_pos.., q and out: [n_tokens][n_heads][head_dim].
  struct AttentionSeq {
    std::span<const std::int32_t> block_table;
    std::int32_t start_pos = 0;
    const float* q = nullptr;
    std::int64_t n_tokens = 0;
    float* out = nullptr;
  };

  // Causal grouped-query attention of each sequence's queries over positions
  // 0..(own position) of its paged K/V, all sequences in one pass over the
  // thread pool (a sequence's output does not depend on the others).
  // n_heads: a multiple of n_kv_heads; scores scaled by `scale` (usually 1 / sqrt(head_dim)).
  // window > 0: each query sees only the last `window` positions up to its own.
  void attention(const PagedKv& kv, std::span<const AttentionSeq> seqs, std::int64_t n_heads, float scale,
                 std::int32_t window = 0);

 private:
  struct Impl;  // the thread pool and scratch buffers
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::cpu
