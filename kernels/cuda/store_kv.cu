#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/store_kv.h"

#include <algorithm>
#include <cmath>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRopeThreads = 128;  // rope.cu's block

// Where a store writes: the caches, q8_0's scale arrays, fp8's reciprocal scales.
struct KvDst {
  void* k;
  void* v;
  void* k_d;
  void* v_d;
  float k_inv, v_inv;
};

// One q8_0 element: the 32 lanes of the warp hold one group of 32 (dst of
// lane i is dst of lane 0 plus i, lane 0's a multiple of 32); the same
// arithmetic as the CPU's quantize_row_q8_0: d = amax / 127, code =
// round-to-nearest-even(x * (1 / d)), d kept as f16.
__device__ __forceinline__ void store_q8(void* codes, void* scales, int64_t dst, float x) {
  float amax = fabsf(x);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? __frcp_rn(d) : 0.0f;
  static_cast<int8_t*>(codes)[dst] = static_cast<int8_t>(__float2int_rn(x * id));
  if ((dst & 31) == 0) static_cast<uint16_t*>(scales)[dst / 32] = float_to_half_bits(d);
}

// Element dst of the K and V caches from k and v, in the cache's dtype. q8_0:
// called by all 32 lanes of a warp at once for one group (store_q8).
template <KvPrecision kDtype>
__device__ __forceinline__ void store_pair(const KvDst& o, int64_t dst, float k, float v) {
  if constexpr (kDtype == KvPrecision::kF16) {
    static_cast<uint16_t*>(o.k)[dst] = float_to_half_bits(k);
    static_cast<uint16_t*>(o.v)[dst] = float_to_half_bits(v);
  } else if constexpr (kDtype == KvPrecision::kQ8_0) {
    store_q8(o.k, o.k_d, dst, k);
    store_q8(o.v, o.v_d, dst, v);
  } else {
    static_cast<uint8_t*>(o.k)[dst] = float_to_fp8_e4m3(k * o.k_inv);
    static_cast<uint8_t*>(o.v)[dst] = float_to_fp8_e4m3(v * o.v_inv);
  }
}

// One thread per element of [n_tokens][row] (row = n_kv_heads * head_dim),
// K and V together. With row and head_dim multiples of 32 (q8_0 requires
// it) every condition below is the same for the 32 lanes of a warp.
template <KvPrecision kDtype>
__global__ void __launch_bounds__(kThreads)
    store_kv_kernel(KvDst o, int64_t n_slots, int64_t row, const float* __restrict__ k, const float* __restrict__ v,
                    const int32_t* __restrict__ slots, int64_t total) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t slot = slots[i / row];
    if (slot < 0 || slot >= n_slots) continue;
    store_pair<kDtype>(o, slot * row + i % row, k[i], v[i]);
  }
}

// rope(q), rope(k), then store_kv_kernel's stores of k (rotated) and v, in one
// launch. grid: (token, q heads + kv heads); a q-head block rotates its head;
// a kv-head block rotates its K head, then (after a barrier: the stores read
// elements other threads rotated) writes that K head and the V head into the
// token's slot. The same functions as the three kernels: the same bits.
template <KvPrecision kDtype>
__global__ void __launch_bounds__(kRopeThreads)
    rope_store_kv_kernel(float* q, int n_q_heads, float* k, const float* __restrict__ v, KvDst o, int64_t n_slots,
                         int n_kv_heads, const int32_t* __restrict__ positions, const int32_t* __restrict__ slots,
                         int head_dim, int half, bool neox, float freq_scale, float theta_scale) {
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
  // q8_0: warp w holds elements 32w.. of each 128 (head_dim a multiple of 32), one group.
  for (int d = threadIdx.x; d < head_dim; d += kRopeThreads) {
    store_pair<kDtype>(o, slot * row + kh * head_dim + d, k[base + d], v[base + d]);
  }
}

}  // namespace

namespace {

// The cache's arguments as the kernels take them, after checking them.
Status kv_dst(const PagedKvCache& cache, KvDst* o) {
  HEARTH_CUDA_REQUIRE(cache.k != nullptr && cache.v != nullptr);
  HEARTH_CUDA_REQUIRE(cache.n_blocks > 0 && cache.block_size > 0 && cache.n_kv_heads > 0 && cache.head_dim > 0);
  switch (cache.dtype) {
    case KvPrecision::kF16:
      break;
    case KvPrecision::kFp8E4M3:
      HEARTH_CUDA_REQUIRE(cache.k_scale > 0.0f && cache.v_scale > 0.0f);
      break;
    case KvPrecision::kQ8_0:
      HEARTH_CUDA_REQUIRE(cache.k_d != nullptr && cache.v_d != nullptr && cache.head_dim % 32 == 0);
      break;
  }
  const bool fp8 = cache.dtype == KvPrecision::kFp8E4M3;
  *o = KvDst{
      cache.k, cache.v, cache.k_d, cache.v_d, fp8 ? 1.0f / cache.k_scale : 1.0f, fp8 ? 1.0f / cache.v_scale : 1.0f};
  return {};
}

template <KvPrecision kDtype>
void launch_store(const KvDst& o, unsigned grid, int64_t n_slots, int64_t row, const float* k, const float* v,
                  const int32_t* slots, int64_t total, cudaStream_t stream) {
  store_kv_kernel<kDtype><<<grid, kThreads, 0, stream>>>(o, n_slots, row, k, v, slots, total);
}

}  // namespace

Status store_kv(const PagedKvCache& cache, const float* k, const float* v, const int32_t* slots, int64_t n_tokens,
                cudaStream_t stream) {
  KvDst o{};
  HEARTH_CUDA_TRY(kv_dst(cache, &o));
  HEARTH_CUDA_REQUIRE(k != nullptr && v != nullptr && slots != nullptr);
  HEARTH_CUDA_REQUIRE(n_tokens >= 0);
  if (n_tokens == 0) return {};
  const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * cache.head_dim;
  const int64_t total = n_tokens * row;
  const int64_t n_slots = cache.n_blocks * cache.block_size;
  const auto grid = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65536));
  switch (cache.dtype) {
    case KvPrecision::kF16:
      launch_store<KvPrecision::kF16>(o, grid, n_slots, row, k, v, slots, total, stream);
      break;
    case KvPrecision::kFp8E4M3:
      launch_store<KvPrecision::kFp8E4M3>(o, grid, n_slots, row, k, v, slots, total, stream);
      break;
    case KvPrecision::kQ8_0:
      launch_store<KvPrecision::kQ8_0>(o, grid, n_slots, row, k, v, slots, total, stream);
      break;
  }
  return check_launch("store_kv_kernel");
}

Status rope_store_kv(const PagedKvCache& cache, float* q, int n_q_heads, float* k, const float* v,
                     const int32_t* positions, const int32_t* slots, int64_t n_tokens, const RopeParams& p,
                     cudaStream_t stream) {
  KvDst o{};
  HEARTH_CUDA_TRY(kv_dst(cache, &o));
  HEARTH_CUDA_REQUIRE(q != nullptr && k != nullptr && v != nullptr);
  HEARTH_CUDA_REQUIRE(positions != nullptr && slots != nullptr);
  HEARTH_CUDA_REQUIRE(p.head_dim == cache.head_dim && p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  HEARTH_CUDA_REQUIRE(n_q_heads > 0 && n_q_heads + cache.n_kv_heads <= 65535);
  HEARTH_CUDA_REQUIRE(n_tokens >= 0 && n_tokens <= 0x7fffffff);
  if (n_tokens == 0) return {};
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(n_q_heads + cache.n_kv_heads));
  const int64_t n_slots = cache.n_blocks * cache.block_size;
  const bool neox = p.order == RopeOrder::kNeox;
  auto kernel = rope_store_kv_kernel<KvPrecision::kF16>;
  if (cache.dtype == KvPrecision::kFp8E4M3) kernel = rope_store_kv_kernel<KvPrecision::kFp8E4M3>;
  if (cache.dtype == KvPrecision::kQ8_0) kernel = rope_store_kv_kernel<KvPrecision::kQ8_0>;
  HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), kernel, grid, kRopeThreads, 0, stream, q, n_q_heads, k, v, o,
                                    n_slots, cache.n_kv_heads, positions, slots, p.head_dim, p.n_rot / 2, neox,
                                    p.freq_scale, theta_scale));
  return check_launch("rope_store_kv_kernel");
}

}  // namespace hearth::kernels::cuda
