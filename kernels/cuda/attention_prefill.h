// Causal grouped-query attention of prompt tokens over the paged KV cache on
// the tensor cores (flash-attention style): the query tokens of one sequence
// come in tiles of consecutive positions; a thread block takes one tile and
// one KV head, its 64 query rows being the tile's tokens x the KV head's query
// heads, and walks the tile's keys 64 (head_dim 256: 32) positions at a time:
// S = Q K^T with mma.m16n8k16 (f16 in, f32 accumulate), an online softmax in
// registers, O += P V with P rounded to f16. Q is rounded to f16 after the
// scale; the cache's K/V are f16 as stored (fp8 codes exactly, the tensor
// scales applied outside the products; q8_0 as code * scale rounded to f16).
//
// Where it pays: a prompt chunk reads each KV head's keys once per tile
// instead of once per token (paged_attention.h), and its work is matrix
// products, not one dot per position and lane. Decode tokens (one per
// sequence) stay with paged_attention's split-KV kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/paged_kv.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// Consecutive query tokens of one sequence: token i of the tile is q / out row
// first_token + i, at position first_pos + i. Four int32s, in this order, so a
// step's tiles travel in its int buffer.
struct PrefillTile {
  int32_t first_token = 0;  // q / out row of the tile's first token
  int32_t n_tokens = 0;     // 1 .. prefill_tile_tokens()
  int32_t seq = 0;          // block_tables row
  int32_t first_pos = 0;    // position of the first token in its sequence
};
static_assert(sizeof(PrefillTile) == 4 * sizeof(int32_t));

struct PrefillBatch {
  const float* q = nullptr;            // [n_tokens][n_heads][head_dim] f32
  const PrefillTile* tiles = nullptr;  // [n_tiles], device memory
  int n_tiles = 0;
  const int32_t* block_tables = nullptr;  // [n_seqs][max_blocks_per_seq] pool block ids
  int max_blocks_per_seq = 0;
};

// Tokens per tile for this head layout (64 query rows / query heads per KV
// head), or 0 where the kernel does not apply: a head size other than 64, 96,
// 128 or 256, or more than 64 query heads per KV head.
int prefill_tile_tokens(int head_dim, int n_heads, int n_kv_heads);

// out: [n_tokens][n_heads][head_dim] f32, written for the tiles' tokens only.
// Token i of a tile attends to positions first..first_pos + i of its sequence
// (first = 0, or first_pos + i - window + 1 with a sliding window); the
// caller has stored the tokens' own K/V before the call. Uses params.n_heads,
// scale and window (split_len and kernel do not apply).
Status paged_attention_prefill(const PagedKvCache& kv, const PrefillBatch& batch, const PagedAttentionParams& params,
                               float* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
