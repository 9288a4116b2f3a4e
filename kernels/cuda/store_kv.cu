#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/store_kv.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

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
    const int64_t dst = slot * row + i % row;
    if constexpr (kDtype == KvPrecision::kF16) {
      static_cast<uint16_t*>(k_cache)[dst] = float_to_half_bits(k[i]);
      static_cast<uint16_t*>(v_cache)[dst] = float_to_half_bits(v[i]);
    } else {
      static_cast<uint8_t*>(k_cache)[dst] = float_to_fp8_e4m3(k[i] * k_inv);
      static_cast<uint8_t*>(v_cache)[dst] = float_to_fp8_e4m3(v[i] * v_inv);
    }
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

}  // namespace hearth::kernels::cuda
