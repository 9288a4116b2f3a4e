#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/store_kv.h"

#include <algorithm>
#include <cmath>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRopeThreads = 128;  // rope.cu's block

// Element dst of the K and V caches from k and v, in the cache's dtype.
template <KvPrecision kDtype>
__device__ __forceinline__ void store_pair(void* k_cache, void* v_cache, int64_t dst, float k, float v, float k_inv,
                                           float v_inv) {
  if constexpr (kDtype == KvPrecision::kF16) {
    static_cast<uint16_t*>(k_cache)[dst] = float_to_half_bits(k);
    static_cast<uint16_t*>(v_cache)[dst] = float_to_half_bits(v);
  } else {
    static_cast<uint8_t*>(k_cache)[dst] = float_to_fp8_e4m3(k * k_inv);
    static_cast<uint8_t*>(v_cache)[dst] = float_to_fp8_e4m3(v * v_inv);
  }
}

// One thread per element of [n_tokens][row] (row = n_kv_heads * head_dim),
// K and V together.
template <KvPrecision kDtype>
__global__ void __launch_bounds__(kThreads)
    store_kv_kernel(void* k_cache, void* v_cache, int64_t n_slots, int64_t row, const float* __restrict__ k,
                    const float* __restrict__ v, const int32_t* __restrict__ slots, int64_t total, float k_inv,
                    float v_inv) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t slot = slots[i / row];
    if (slot < 0 || slot >= n_slots) continue;
    store_pair<kDtype>(k_cache, v_cache, slot * row + i % row, k[i], v[i], k_inv, v_inv);
  }
}

// rope(q), rope(k), then store_kv_kernel's stores of k (rotated) and v, in one
// launch. grid: (token, q heads + kv heads); a q-head block rotates its head;
// a kv-head block rotates its K head, then (after a barrier: the stores read
// elements other threads rotated) writes that K head and the V head into the
// token's slot. The same functions as the three kernels: the same bits.
template <KvPrecision kDtype>
__global__ void __launch_bounds__(kRopeThreads)
    rope_store_kv_kernel(float* q, int n_q_heads, float* k, const float* __restrict__ v, void* k_cache, void* v_cache,
                         int64_t n_slots, int n_kv_heads, const int32_t* __restrict__ positions,
                         const int32_t* __restrict__ slots, int head_dim, int half, bool neox, float freq_scale,
                         float theta_scale, float k_inv, float v_inv) {
  pdl_launch_dependents();  // attention may start (it waits for this kernel)
  pdl_wait();               // q, k and v come from the kernel before (launched with PDL: pdl_small_on)
  const int64_t t = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  const int32_t pos = positions[t];
  if (h < n_q_heads) {
    rope_head(q + (t * n_q_heads + h) * head_dim, pos, half, neox, freq_scale, theta_scale, kRopeThreads);
    return;
  }
  const int kh = h - n_q_heads;
  const int64_t row = static_cast<int64_t>(n_kv_heads) * head_dim, base = t * row + static_cast<int64_t>(kh) * head_dim;
  rope_head(k + base, pos, half, neox, freq_scale, theta_scale, kRopeThreads);
  __syncthreads();  // the block's rotated K head, visible to all its threads
  const int64_t slot = slots[t];
  if (slot < 0 || slot >= n_slots) return;
  for (int d = threadIdx.x; d < head_dim; d += kRopeThreads) {
    store_pair<kDtype>(k_cache, v_cache, slot * row + kh * head_dim + d, k[base + d], v[base + d], k_inv, v_inv);
  }
}

}  // namespace

Status store_kv(const PagedKvCache& cache, const float* k, const float* v, const int32_t* slots, int64_t n_tokens,
                cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(cache.k != nullptr && cache.v != nullptr && k != nullptr && v != nullptr && slots != nullptr);
  HEARTH_CUDA_REQUIRE(cache.n_blocks > 0 && cache.block_size > 0 && cache.n_kv_heads > 0 && cache.head_dim > 0);
  HEARTH_CUDA_REQUIRE(cache.dtype == KvPrecision::kF16 ||
                      (cache.dtype == KvPrecision::kFp8E4M3 && cache.k_scale > 0.0f && cache.v_scale > 0.0f));
  HEARTH_CUDA_REQUIRE(n_tokens >= 0);
  if (n_tokens == 0) return {};
  const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * cache.head_dim;
  const int64_t total = n_tokens * row;
  const int64_t n_slots = cache.n_blocks * cache.block_size;
  const auto grid = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65536));
  if (cache.dtype == KvPrecision::kF16) {
    store_kv_kernel<KvPrecision::kF16>
        <<<grid, kThreads, 0, stream>>>(cache.k, cache.v, n_slots, row, k, v, slots, total, 1.0f, 1.0f);
  } else {
    store_kv_kernel<KvPrecision::kFp8E4M3><<<grid, kThreads, 0, stream>>>(
        cache.k, cache.v, n_slots, row, k, v, slots, total, 1.0f / cache.k_scale, 1.0f / cache.v_scale);
  }
  return check_launch("store_kv_kernel");
}

Status rope_store_kv(const PagedKvCache& cache, float* q, int n_q_heads, float* k, const float* v,
                     const int32_t* positions, const int32_t* slots, int64_t n_tokens, const RopeParams& p,
                     cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(cache.k != nullptr && cache.v != nullptr && q != nullptr && k != nullptr && v != nullptr);
  HEARTH_CUDA_REQUIRE(positions != nullptr && slots != nullptr);
  HEARTH_CUDA_REQUIRE(cache.n_blocks > 0 && cache.block_size > 0 && cache.n_kv_heads > 0 && cache.head_dim > 0);
  HEARTH_CUDA_REQUIRE(cache.dtype == KvPrecision::kF16 ||
                      (cache.dtype == KvPrecision::kFp8E4M3 && cache.k_scale > 0.0f && cache.v_scale > 0.0f));
  HEARTH_CUDA_REQUIRE(p.head_dim == cache.head_dim && p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  HEARTH_CUDA_REQUIRE(n_q_heads > 0 && n_q_heads + cache.n_kv_heads <= 65535);
  HEARTH_CUDA_REQUIRE(n_tokens >= 0 && n_tokens <= 0x7fffffff);
  if (n_tokens == 0) return {};
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(n_q_heads + cache.n_kv_heads));
  const int64_t n_slots = cache.n_blocks * cache.block_size;
  const bool neox = p.order == RopeOrder::kNeox;
  if (cache.dtype == KvPrecision::kF16) {
    HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), rope_store_kv_kernel<KvPrecision::kF16>, grid, kRopeThreads, 0,
                                      stream, q, n_q_heads, k, v, cache.k, cache.v, n_slots, cache.n_kv_heads,
                                      positions, slots, p.head_dim, p.n_rot / 2, neox, p.freq_scale, theta_scale, 1.0f,
                                      1.0f));
  } else {
    HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), rope_store_kv_kernel<KvPrecision::kFp8E4M3>, grid, kRopeThreads,
                                      0, stream, q, n_q_heads, k, v, cache.k, cache.v, n_slots, cache.n_kv_heads,
                                      positions, slots, p.head_dim, p.n_rot / 2, neox, p.freq_scale, theta_scale,
                                      1.0f / cache.k_scale, 1.0f / cache.v_scale));
  }
  return check_launch("rope_store_kv_kernel");
}

}  // namespace hearth::kernels::cuda
