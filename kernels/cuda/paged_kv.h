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

// Element types: f16; fp8 E4M3 codes (kernels/fp8.h: value = code * k_scale
// or v_scale, one scale per tensor); q8_0: int8 codes in k / v with one f16
// scale per 32 consecutive elements of a row in k_d / v_d
// ([n_blocks][block_size][n_kv_heads][head_dim / 32]: the scale of element i
// of k is k_d[i / 32]), value = code * scale, as the CPU's Q8_0 blocks.
struct PagedKvCache {
  void* k = nullptr;                      // [n_blocks][block_size][n_kv_heads][head_dim], 16-byte aligned
  void* v = nullptr;                      // same layout as k
  KvPrecision dtype = KvPrecision::kF16;  // kF16, kFp8E4M3 or kQ8_0
  float k_scale = 1.0f;                   // fp8 only: value = stored * scale (ignored otherwise)
  float v_scale = 1.0f;
  int64_t n_blocks = 0;
  int block_size = 16;  // tokens per block
  int n_kv_heads = 0;
  int head_dim = 0;
  void* k_d = nullptr;  // q8_0 only: the f16 scales of k's groups of 32 (above)
  void* v_d = nullptr;
};

}  // namespace hearth::kernels::cuda
