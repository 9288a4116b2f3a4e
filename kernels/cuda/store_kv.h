// Writes the K/V rows of new tokens into their cache slots (f16 or fp8).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/paged_kv.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// cache.k[slots[t]][h][d] = k[t][h][d] (and v alike), converted to the cache
// dtype: f16 rounds to nearest even; fp8 stores round(x / scale) (x times the
// f32 reciprocal of the scale), saturated to +-448.
// k, v: [n_tokens][n_kv_heads][head_dim] f32; slots: [n_tokens] device int32
// slot ids (block * block_size + offset); a negative or out-of-pool slot skips
// the token (padding).
Status store_kv(const PagedKvCache& cache, const float* k, const float* v, const int32_t* slots, int64_t n_tokens,
                cudaStream_t stream);

// rope(q, n_q_heads), rope(k, cache.n_kv_heads) (rope.h) and store_kv(cache,
// k, v, slots) in one launch, bit-identical to the three calls: q and k are
// rotated in place, then K (rotated) and V written into each token's slot.
// p.head_dim must be cache.head_dim. HEARTH_CUDA_FUSE_ROPE_KV=0 makes the
// CUDA backend call the three instead (A/B runs).
Status rope_store_kv(const PagedKvCache& cache, float* q, int n_q_heads, float* k, const float* v,
                     const int32_t* positions, const int32_t* slots, int64_t n_tokens, const RopeParams& p,
                     cudaStream_t stream);

}  // namespace hearth::kernels::cuda
