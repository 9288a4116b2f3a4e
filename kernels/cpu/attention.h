// Causal grouped-query attention of a batch of query tokens of one sequence,
// reading K/V through the sequence's block table (paged KV cache).
//
// KV storage layout, per layer and for K and V alike:
//   [n_pool_blocks][block_size][n_kv_heads][head_dim]   (F32, F16 or FP8 E4M3)
// or, for Q8_0, each [head_dim] row as head_dim / 32 Q8_0 blocks (an f16
// scale and 32 int8 codes: 34 bytes), rows in the same order. FP8 codes
// (kernels/fp8.h) hold value / scale, one scale for all of K (k_scale) and
// one for all of V (v_scale).
// Position p of the sequence lives in pool block block_table[p / block_size],
// slot p % block_size. The caller writes the batch's own K/V there before
// calling, so a query at position p reads positions 0..p (or the last `window`
// of them) including itself.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu/thread_pool.h"

namespace hearth::kernels {

enum class KvDtype { kF32, kF16, kQ8_0, kFp8E4M3 };

inline constexpr int kKvQ8Block = 32;  // values per Q8_0 block; head_dim must be a multiple
// Bytes of one [head_dim] row of K or V.
inline int64_t kv_row_bytes(KvDtype dtype, int64_t head_dim) {
  switch (dtype) {
    case KvDtype::kF32:
      return head_dim * 4;
    case KvDtype::kF16:
      return head_dim * 2;
    case KvDtype::kQ8_0:
      return head_dim / kKvQ8Block * 34;
    case KvDtype::kFp8E4M3:
      return head_dim;
  }
  return 0;
}

struct PagedKv {
  const void* k = nullptr;  // [n_pool_blocks][block_size][n_kv_heads][head_dim]
  const void* v = nullptr;  // same layout as k
  KvDtype dtype = KvDtype::kF32;
  int block_size = 16;  // tokens per block, <= kMaxAttnBlockSize
  int n_kv_heads = 0;
  int head_dim = 0;      // <= kMaxAttnHeadDim; a multiple of 32 for kQ8_0
  float k_scale = 1.0f;  // kFp8E4M3 only: value = code * scale
  float v_scale = 1.0f;
};

struct AttentionParams {
  int n_heads = 0;     // query heads, a multiple of n_kv_heads (head h reads kv head h / (n_heads / n_kv_heads))
  float scale = 1.0f;  // applied to q.k, usually 1/sqrt(head_dim)
  int window = 0;      // 0: all of 0..p; else only positions p-window+1..p (sliding window)
};

inline constexpr int kMaxAttnHeadDim = 512;
inline constexpr int kMaxAttnBlockSize = 256;

// q: [n_tokens][n_heads][head_dim]; positions: [n_tokens] (each < n_table * block_size);
// block_table: [n_table] pool block ids; out: [n_tokens][n_heads][head_dim].
// Online softmax one KV block at a time (running max and sum, rescaled
// accumulator). pool may be null.
void paged_attention(const float* q, const int32_t* positions, int64_t n_tokens, const PagedKv& kv,
                     const int32_t* block_table, int64_t n_table, const AttentionParams& params, float* out,
                     ThreadPool* pool);

// One sequence of a paged_attention_batch call: the arguments of
// paged_attention that differ between sequences.
struct AttentionSeq {
  const float* q = nullptr;
  const int32_t* positions = nullptr;
  int64_t n_tokens = 0;
  const int32_t* block_table = nullptr;
  int64_t n_table = 0;
  float* out = nullptr;
};

// paged_attention of several sequences in one parallel pass over the pool
// (one barrier instead of one per sequence; the tasks of all sequences
// balance each other). Each sequence's output is bit-identical to its own
// paged_attention call.
void paged_attention_batch(std::span<const AttentionSeq> seqs, const PagedKv& kv, const AttentionParams& params,
                           ThreadPool* pool);

// Reference: plain softmax over contiguous F32 K/V [n_ctx][n_kv_heads][head_dim]
// (position p at row p), in double. For tests.
void attention_reference(const float* q, const int32_t* positions, int64_t n_tokens, const float* k, const float* v,
                         int64_t n_ctx, int n_kv_heads, int head_dim, const AttentionParams& params, float* out);

}  // namespace hearth::kernels
