// Causal grouped-query attention over the paged KV cache, for prefill (many
// query tokens, with a cached prefix) and decode (one token per sequence) alike.
//
// Split-KV ("flash-decoding"): each query token's context 0..p is cut into
// chunks of split_len positions; one thread block per (token, kv head, group of
// up to 4 query heads, chunk) runs an online softmax over its chunk and leaves
// (max, sum, unnormalised output); a combine kernel merges the chunks. With a
// single chunk the first kernel writes the output directly. The default (wide,
// v13) kernels read K/V rows with 16-byte loads, several rows a warp
// instruction and 4 a worker in flight, and merge the chunks with the threads
// of a block split over them; AttentionKernel selects the older ones.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/paged_kv.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// The query tokens of one call; they may belong to different sequences.
struct AttentionBatch {
  const float* q = nullptr;               // [n_tokens][n_heads][head_dim] f32
  const int32_t* positions = nullptr;     // [n_tokens] position of each token in its sequence
  const int32_t* token_seq = nullptr;     // [n_tokens] row of block_tables per token; null: all row 0
  const int32_t* block_tables = nullptr;  // [n_seqs][max_blocks_per_seq] pool block ids
  int max_blocks_per_seq = 0;
  int n_tokens = 0;
  int max_context = 0;  // host-known bound: every positions[t] < max_context
  // [n_tokens] rows of q / positions / token_seq / out that the call covers;
  // null: rows 0..n_tokens-1. The other rows' out is not written (the prompt
  // tiles of the same step take them: attention_prefill.h).
  const int32_t* token_index = nullptr;
};

// Which kernels run: kAuto is kWide unless HEARTH_CUDA_ATTN_WIDE=0 (A/B
// runs; then kV12), and kStream where a chunk is more than two of its tiles
// (HEARTH_CUDA_ATTN_STREAM=1 always, =0 never); kWide falls back to kV12 for
// head sizes other than 32/64/128/256. kV12: one 8-byte K/V load a lane and
// one position a warp at a time, chunks merged one after another per thread.
// kWide (v13): 16-byte loads, 2-8 rows a warp instruction, 4 rows a worker in
// flight, a combine whose threads split the chunks among them. kStream (v20):
// kWide's blocks and arithmetic with the K/V rows staged in shared memory by
// cp.async, 2 tiles of a block in flight while it works on a third (f16 and
// fp8 caches; q8_0 takes kWide); the same bits as kWide for the same
// split_len. All compute the same function.
enum class AttentionKernel { kAuto, kV12, kWide, kStream };

struct PagedAttentionParams {
  int n_heads = 0;     // query heads, a multiple of the cache's n_kv_heads
  float scale = 1.0f;  // applied to q.k, usually 1/sqrt(head_dim)
  int window = 0;      // 0: positions 0..p; else only p-window+1..p (sliding window)
  int split_len = 0;   // positions per chunk, > 0; choose_split_len gives a good one
  AttentionKernel kernel = AttentionKernel::kAuto;
};

// A chunk length that gives the device about one full wave of thread blocks
// (sm_count: multiprocessors of the device). Always a multiple of 16.
int choose_split_len(int n_tokens, int n_heads, int n_kv_heads, int max_context, int sm_count);

// Workspace the call needs for these sizes (0 when a single chunk covers max_context).
size_t paged_attention_workspace_bytes(int n_tokens, int n_heads, int head_dim, int max_context, int split_len);

// out: [n_tokens][n_heads][head_dim] f32. Token t (query heads h) attends to
// positions first..positions[t] of its sequence through its block table; the
// caller has stored the batch's own K/V (store_kv) before the call. Every
// block-table entry below positions[t] / block_size must be a valid pool block.
Status paged_attention(const PagedKvCache& kv, const AttentionBatch& batch, const PagedAttentionParams& params,
                       float* out, void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
