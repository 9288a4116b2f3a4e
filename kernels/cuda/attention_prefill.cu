#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/mma.cuh"

#include <cuda_fp16.h>

#include <cmath>
#include <cstring>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_row.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int kRows = 64;  // query rows a block: a tile's tokens x the KV head's query heads
constexpr int kWarps = 4;  // 16 query rows each (one m16 row block)
constexpr int kThreads = kWarps * kWarp;
constexpr int kPad = 8;  // halves after each shared row: ldmatrix's 8 rows on distinct banks
constexpr float kLog2e = 1.4426950408889634f;

// Keys a step: 64, or 32 for head_dim 256 (the output accumulators already
// take 128 registers a thread there).
template <int kD>
inline constexpr int kKeysPerStep = kD > 128 ? 32 : 64;

// Shared memory: Q [kRows][kD + kPad], K and V [keys][kD + kPad], f16.
template <int kD>
constexpr size_t smem_bytes() {
  return static_cast<size_t>(kRows + 2 * kKeysPerStep<kD>) * (kD + kPad) * sizeof(uint16_t);
}

struct PrefillArgs {
  const float* q;
  const PrefillTile* tiles;
  int n_tiles;
  const int32_t* block_tables;
  int max_blocks_per_seq;
  const void* k;
  const void* v;
  const void* k_d;  // q8_0 scales (paged_kv.h)
  const void* v_d;
  int block_size, n_kv_heads, n_heads, group;
  float q_scale;  // scale * k_scale * log2(e): the scores come out in base 2
  float v_scale;
  int window;
  float* out;
};

// The block's tile, scaled to f16: row r is token r / group of the tile and
// query head kvh * group + r % group; rows past the tile are zero.
template <int kD>
__device__ void load_q(const PrefillArgs& a, const PrefillTile& tile, int kvh, uint16_t* qs) {
  constexpr int kChunks = kD / 8;  // 8 values, one 16-byte shared store
  const int rows = tile.n_tokens * a.group;
  for (int idx = threadIdx.x; idx < kRows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    uint4 w = make_uint4(0, 0, 0, 0);
    if (r < rows) {
      const int64_t token = tile.first_token + r / a.group, head = kvh * a.group + r % a.group;
      const float4* src = reinterpret_cast<const float4*>(a.q + (token * a.n_heads + head) * kD + c * 8);
      const float4 x0 = src[0], x1 = src[1];
      const float s = a.q_scale;
      w = make_uint4(pack_half2(x0.x * s, x0.y * s), pack_half2(x0.z * s, x0.w * s), pack_half2(x1.x * s, x1.y * s),
                     pack_half2(x1.z * s, x1.w * s));
    }
    *reinterpret_cast<uint4*>(qs + r * (kD + kPad) + c * 8) = w;
  }
}

// Positions key0 .. key0 + kN - 1 of the KV head as f16; those outside
// [first, last] are zero (their scores are masked; zeros keep P V finite).
template <KvPrecision kDtype, int kD, int kN>
__device__ void load_kv(const PrefillArgs& a, const int32_t* table, int kvh, int key0, int first, int last,
                        uint16_t* ks, uint16_t* vs) {
  constexpr int kChunks = kD / 8;
  for (int idx = threadIdx.x; idx < kN * kChunks; idx += kThreads) {
    const int j = idx / kChunks, c = idx % kChunks;
    const int pos = key0 + j;
    uint4 kw = make_uint4(0, 0, 0, 0), vw = kw;
    if (pos >= first && pos <= last) {
      const int64_t block = __ldg(table + pos / a.block_size);
      const int64_t off = ((block * a.block_size + pos % a.block_size) * a.n_kv_heads + kvh) * kD + c * 8;
      kw = wide_to_half8<kDtype>(wide_load<kDtype>(a.k, a.k_d, off));
      vw = wide_to_half8<kDtype>(wide_load<kDtype>(a.v, a.v_d, off));
    }
    *reinterpret_cast<uint4*>(ks + j * (kD + kPad) + c * 8) = kw;
    *reinterpret_cast<uint4*>(vs + j * (kD + kPad) + c * 8) = vw;
  }
}

// grid: (tile, KV head); block: kWarps warps, warp w owning query rows
// 16w .. 16w + 15. In the mma layouts a lane holds rows g = lane / 4 and
// g + 8 of its warp's 16, columns 2 (lane % 4) and + 1 of each n8 tile.
template <KvPrecision kDtype, int kD>
__global__ void __launch_bounds__(kThreads) attn_prefill_kernel(PrefillArgs a) {
  constexpr int kN = kKeysPerStep<kD>;
  constexpr int kStride = kD + kPad;
  extern __shared__ uint4 smem_words[];
  uint16_t* qs = reinterpret_cast<uint16_t*>(smem_words);
  uint16_t* ks = qs + kRows * kStride;
  uint16_t* vs = ks + kN * kStride;
  pdl_launch_dependents();
  pdl_wait();  // q and the new K/V come from the kernels before
  // The tiles latest in their sequences (the most keys) first.
  const PrefillTile tile = a.tiles[a.n_tiles - 1 - static_cast<int>(blockIdx.x)];
  const int kvh = static_cast<int>(blockIdx.y);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int g = lane / 4, c2 = 2 * (lane % 4);
  const int rows = tile.n_tokens * a.group;
  const int r0 = warp * 16;  // the warp's first row
  const bool live = r0 < rows;
  const int last = tile.first_pos + tile.n_tokens - 1;  // the block's last key
  const int first = a.window > 0 ? max(0, tile.first_pos - a.window + 1) : 0;
  // The warp's first and last row positions bound the keys it must visit.
  const int p_lo = tile.first_pos + r0 / a.group;
  const int p_hi = tile.first_pos + (min(r0 + 15, rows - 1)) / a.group;
  int row_pos[2];
  bool row_live[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = r0 + g + 8 * i;
    row_live[i] = r < rows;
    row_pos[i] = tile.first_pos + r / a.group;
  }
  const int32_t* table = a.block_tables + static_cast<int64_t>(tile.seq) * a.max_blocks_per_seq;
  load_q<kD>(a, tile, kvh, qs);

  float o[kD / 8][4];
#pragma unroll
  for (int d = 0; d < kD / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  for (int key0 = first / kN * kN; key0 <= last; key0 += kN) {
    __syncthreads();  // the previous keys are no longer read (and, the first time, Q is stored)
    load_kv<kDtype, kD, kN>(a, table, kvh, key0, first, last, ks, vs);
    __syncthreads();
    if (!live || key0 > p_hi || (a.window > 0 && key0 + kN - 1 <= p_lo - a.window)) continue;

    // S = Q K^T for the warp's 16 rows and kN keys (base-2 scores).
    float s[kN / 8][4];
#pragma unroll
    for (int n = 0; n < kN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      uint32_t qf[4];
      ldmatrix_x4<false>(qf, shared_addr(qs + (r0 + lane % 16) * kStride + kk * 16 + 8 * (lane / 16)));
#pragma unroll
      for (int np = 0; np < kN / 16; ++np) {
        uint32_t kf[4];  // keys np*16 + 0..7 then + 8..15, each k 0..7 then 8..15 of this slice
        ldmatrix_x4<false>(
            kf, shared_addr(ks + (np * 16 + lane % 8 + 8 * (lane / 16)) * kStride + kk * 16 + 8 * ((lane / 8) % 2)));
        mma_f16(s[2 * np], qf, kf[0], kf[1]);
        mma_f16(s[2 * np + 1], qf, kf[2], kf[3]);
      }
    }
    // Causal (and window) mask, then the online softmax of rows g and g + 8.
#pragma unroll
    for (int n = 0; n < kN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e / 2, key = key0 + n * 8 + c2 + e % 2;
        const bool ok =
            row_live[i] && key <= row_pos[i] && (a.window == 0 || key > row_pos[i] - a.window) && key >= first;
        if (!ok) s[n][e] = -INFINITY;
      }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < kN / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[i], mx);
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // a row with no key yet stays empty
      const float alpha = exp2f(m[i] - base);
      m[i] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < kN / 8; ++n) {
        s[n][2 * i] = exp2f(s[n][2 * i] - base);
        s[n][2 * i + 1] = exp2f(s[n][2 * i + 1] - base);
        sum += s[n][2 * i] + s[n][2 * i + 1];
      }
      l[i] = l[i] * alpha + sum;
#pragma unroll
      for (int d = 0; d < kD / 8; ++d) o[d][2 * i] *= alpha, o[d][2 * i + 1] *= alpha;
    }
    // O += P V: P's accumulator layout is the A fragment of the next product.
#pragma unroll
    for (int kk = 0; kk < kN / 16; ++kk) {
      const uint32_t pf[4] = {pack_half2(s[2 * kk][0], s[2 * kk][1]), pack_half2(s[2 * kk][2], s[2 * kk][3]),
                              pack_half2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_half2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        uint32_t vf[4];  // keys kk*16 + 0..15, dims dp*16 + 0..7 then + 8..15, transposed
        ldmatrix_x4<true>(vf, shared_addr(vs + (kk * 16 + lane % 16) * kStride + dp * 16 + 8 * (lane / 16)));
        mma_f16(o[2 * dp], pf, vf[0], vf[1]);
        mma_f16(o[2 * dp + 1], pf, vf[2], vf[3]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    if (!row_live[i]) continue;
    const int r = r0 + g + 8 * i;
    const int64_t token = tile.first_token + r / a.group, head = kvh * a.group + r % a.group;
    const float inv = l[i] > 0.0f ? a.v_scale / l[i] : 0.0f;
    float* dst = a.out + (token * a.n_heads + head) * kD + c2;
#pragma unroll
    for (int d = 0; d < kD / 8; ++d) {
      *reinterpret_cast<float2*>(dst + d * 8) = make_float2(o[d][2 * i] * inv, o[d][2 * i + 1] * inv);
    }
  }
}

template <KvPrecision kDtype, int kD>
Status launch(const PrefillArgs& a, cudaStream_t stream) {
  void (*kernel)(PrefillArgs) = attn_prefill_kernel<kDtype, kD>;
  constexpr size_t kSmem = smem_bytes<kD>();
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem));
  HEARTH_CUDA_CHECK(attr);
  const dim3 grid(static_cast<unsigned>(a.n_tiles), static_cast<unsigned>(a.n_kv_heads));
  HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), kernel, grid, kThreads, kSmem, stream, a));
  return check_launch("attn_prefill_kernel");
}

template <int kD>
Status launch_for(KvPrecision dtype, const PrefillArgs& a, cudaStream_t stream) {
  switch (dtype) {
    case KvPrecision::kFp8E4M3:
      return launch<KvPrecision::kFp8E4M3, kD>(a, stream);
    case KvPrecision::kQ8_0:
      return launch<KvPrecision::kQ8_0, kD>(a, stream);
    case KvPrecision::kF16:
      break;
  }
  return launch<KvPrecision::kF16, kD>(a, stream);
}

}  // namespace

int prefill_tile_tokens(int head_dim, int n_heads, int n_kv_heads) {
  if (n_kv_heads <= 0 || n_heads <= 0 || n_heads % n_kv_heads != 0 || device_cc_major() < 8) return 0;
  const int group = n_heads / n_kv_heads;
  if (group > kRows) return 0;
  switch (head_dim) {
    case 64:
    case 96:
    case 128:
    case 256:
      return kRows / group;
    default:
      return 0;
  }
}

Status paged_attention_prefill(const PagedKvCache& kv, const PrefillBatch& batch, const PagedAttentionParams& params,
                               float* out, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(kv.k != nullptr && kv.v != nullptr && kv.block_size > 0 && kv.n_kv_heads > 0);
  HEARTH_CUDA_REQUIRE(kv.dtype == KvPrecision::kF16 ||
                      (kv.dtype == KvPrecision::kFp8E4M3 && kv.k_scale > 0.0f && kv.v_scale > 0.0f) ||
                      (kv.dtype == KvPrecision::kQ8_0 && kv.k_d != nullptr && kv.v_d != nullptr));
  HEARTH_CUDA_REQUIRE(params.n_heads > 0 && params.window >= 0);
  const int tile_tokens = prefill_tile_tokens(kv.head_dim, params.n_heads, kv.n_kv_heads);
  HEARTH_CUDA_REQUIRE(tile_tokens > 0);
  HEARTH_CUDA_REQUIRE(batch.q != nullptr && batch.block_tables != nullptr && out != nullptr && batch.n_tiles >= 0);
  HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(batch.q) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 8 == 0);
  HEARTH_CUDA_REQUIRE(kv.n_kv_heads <= 65535);
  if (batch.n_tiles == 0) return {};
  HEARTH_CUDA_REQUIRE(batch.tiles != nullptr);
  PrefillArgs a{};
  a.q = batch.q, a.tiles = batch.tiles, a.n_tiles = batch.n_tiles;
  a.block_tables = batch.block_tables, a.max_blocks_per_seq = batch.max_blocks_per_seq;
  a.k = kv.k, a.v = kv.v, a.k_d = kv.k_d, a.v_d = kv.v_d;
  a.block_size = kv.block_size, a.n_kv_heads = kv.n_kv_heads, a.n_heads = params.n_heads;
  a.group = params.n_heads / kv.n_kv_heads;
  const bool fp8 = kv.dtype == KvPrecision::kFp8E4M3;
  a.q_scale = params.scale * (fp8 ? kv.k_scale : 1.0f) * kLog2e;
  a.v_scale = fp8 ? kv.v_scale : 1.0f;
  a.window = params.window;
  a.out = out;
  switch (kv.head_dim) {
    case 64:
      return launch_for<64>(kv.dtype, a, stream);
    case 96:
      return launch_for<96>(kv.dtype, a, stream);
    case 128:
      return launch_for<128>(kv.dtype, a, stream);
    default:
      return launch_for<256>(kv.dtype, a, stream);
  }
}

}  // namespace hearth::kernels::cuda
