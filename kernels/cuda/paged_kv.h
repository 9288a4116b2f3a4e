// One layer's paged KV cache in device memory, as the attention and store-KV
// kernels see it. Same layout as the CPU path (kernels/cpu/attention.h):
//   [n_blocks][block_size][n_kv_heads][head_dim]   for K and V alike,
// position p of a sequence in pool block block_table[p / block_size], slot
// p % block_size; a "slot id" is block * block_size + slot.
#pragma once

#include <cstdint>

#include "kernels/kv_precision.h"

namespace hearth::kernels::cuda {

inline constexpr int kMaxAttnHeadDim = 256;  // head_dim: a multiple of 32, <= 256

struct PagedKvCache {
  void* k = nullptr;                      // [n_blocks][block_size][n_kv_heads][head_dim], 16-byte aligned
  void* v = nullptr;                      // same layout as k
  KvPrecision dtype = KvPrecision::kF16;  // kF16 or kFp8E4M3 (fp8.h: value = stored * scale); kQ8_0 is refused
  float k_scale = 1.0f;                   // fp8 only: value = stored * scale (ignored for f16)
  float v_scale = 1.0f;
  int64_t n_blocks = 0;
  int block_size = 16;  // tokens per block
  int n_kv_heads = 0;
  int head_dim = 0;
};

}  // namespace hearth::kernels::cuda
