// The decode attention's shared parts (paged_attention.cu, paged_attention_stream.cu):
// the kernels' arguments and the wide kernels' arithmetic. Include only from
// those .cu files.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_row.cuh"
#include "kernels/kv_precision.h"

namespace hearth::kernels::cuda::attn_detail {

constexpr int kMaxGroup = 4;  // query heads per block (sharing one kv head)

struct AttnArgs {
  const float* q;
  const int32_t* positions;
  const int32_t* token_seq;
  const int32_t* block_tables;
  const int32_t* token_index;  // null: the call's row i is token i
  int max_blocks_per_seq;
  const void* k;
  const void* v;
  const void* k_d;  // q8_0: the f16 scales of k's groups of 32 (paged_kv.h)
  const void* v_d;
  int block_size, n_kv_heads, head_dim, n_heads, group, subgroups;
  float qk_scale;  // scale * k_scale
  float v_scale;
  int window, split_len, n_splits;
  float* out;       // final output (n_splits == 1)
  float* part_acc;  // [n_rows][n_heads][n_splits][head_dim] (row: the call's, not the token's)
  float* part_ml;   // [n_rows][n_heads][n_splits][2]: max, sum
};

// The token of the call's row i.
__device__ __forceinline__ int token_of(const int32_t* token_index, int i) {
  return token_index != nullptr ? token_index[i] : i;
}

// ---- The wide path (v13, the default): 16-byte K/V loads, many rows in flight ----
//
// A worker is kLanes consecutive lanes of a warp that own one K/V row at a
// time, kWideElems elements a lane (f16: one 16-byte load; fp8: 8 bytes), so
// a warp reads 32 / kLanes rows with one instruction; each worker loads the K
// and V rows of kWideRows positions before it uses the first, and keeps its own
// online-softmax state (one correction per kWideRows positions, not per
// position). head_dim = 8 * kLanes: 32, 64, 128 or 256 (others take the v12 path).
constexpr int kWideRows = 4;
constexpr int kWideWarps = 4;
constexpr int kWideThreads = kWideWarps * kWarp;
constexpr int kWideMinBlocks = 4;  // resident blocks per SM that the register budget allows

// Sum over the kLanes lanes of one worker (an aligned group of lanes).
template <int kLanes>
__device__ __forceinline__ float worker_sum(float v) {
#pragma unroll
  for (int off = kLanes / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// The wide kernels' shared parts. A worker's online-softmax state over
// kMaxGroup query heads, kWideElems dimensions a lane: qv (q, scaled), acc,
// m, l. wide_fold and wide_finish are all the arithmetic of the wide kernel
// and the stream kernel (v20), which differ only in how the rows arrive: given
// the same rows they give the same bits.
template <int kLanes>
struct WideShape {
  static constexpr int kD = kLanes * kWideElems;
  static constexpr int kPerWarp = kWarp / kLanes;
  static constexpr int kWorkers = kWideWarps * kPerWarp;
  static constexpr int kStep = kWideRows * kWorkers;  // positions a block covers per iteration
};

// The block's query heads' q (h0 .. h0 + gs - 1, lanes' elements at sub), scaled; the state cleared.
template <int kLanes>
__device__ __forceinline__ void wide_start(const AttnArgs& a, int t, int h0, int gs, int sub,
                                           float (&qv)[kMaxGroup][kWideElems], float (&acc)[kMaxGroup][kWideElems],
                                           float (&m)[kMaxGroup], float (&l)[kMaxGroup]) {
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
    const float* qr = a.q + (static_cast<int64_t>(t) * a.n_heads + h0 + i) * WideShape<kLanes>::kD + sub * kWideElems;
#pragma unroll
    for (int e = 0; e < kWideElems; ++e) {
      acc[i][e] = 0.0f;
      qv[i][e] = i < gs ? qr[e] * a.qk_scale : 0.0f;
    }
  }
}

// Folds a worker's kWideRows rows of the iteration at `base` (row j at
// position base + j * kWorkers + worker; rows at or past hi are masked) into
// its state.
template <KvPrecision kDtype, int kLanes>
__device__ __forceinline__ void wide_fold(int base, int worker, int hi, const WideRaw<kDtype> (&kr)[kWideRows],
                                          const WideRaw<kDtype> (&vr)[kWideRows],
                                          const float (&qv)[kMaxGroup][kWideElems], float (&acc)[kMaxGroup][kWideElems],
                                          float (&m)[kMaxGroup], float (&l)[kMaxGroup]) {
  constexpr int kWorkers = WideShape<kLanes>::kWorkers;
  float s[kMaxGroup][kWideRows];
#pragma unroll
  for (int j = 0; j < kWideRows; ++j) {
    float kf[kWideElems];
    wide_decode<kDtype>(kr[j], kf);
#pragma unroll
    for (int i = 0; i < kMaxGroup; ++i) {
      float d = 0.0f;
#pragma unroll
      for (int e = 0; e < kWideElems; ++e) d = fmaf(qv[i][e], kf[e], d);
      s[i][j] = d;
    }
  }
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) {
      s[i][j] = worker_sum<kLanes>(s[i][j]);
      if (base + j * kWorkers + worker >= hi) s[i][j] = -INFINITY;
    }
  }
  float pr[kMaxGroup][kWideRows];
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    float mx = m[i];
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) mx = fmaxf(mx, s[i][j]);
    // mx = -inf: this worker has no row this time (its state stays as it is).
    const float corr = mx == -INFINITY ? 1.0f : expf(m[i] - mx);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) {
      pr[i][j] = s[i][j] == -INFINITY ? 0.0f : expf(s[i][j] - mx);
      sum += pr[i][j];
    }
    l[i] = l[i] * corr + sum;
    m[i] = mx;
#pragma unroll
    for (int e = 0; e < kWideElems; ++e) acc[i][e] *= corr;
  }
#pragma unroll
  for (int j = 0; j < kWideRows; ++j) {
    float vf[kWideElems];
    wide_decode<kDtype>(vr[j], vf);
#pragma unroll
    for (int i = 0; i < kMaxGroup; ++i) {
#pragma unroll
      for (int e = 0; e < kWideElems; ++e) acc[i][e] = fmaf(pr[i][j], vf[e], acc[i][e]);
    }
  }
}

// Merges the workers' states through shared memory (s_ml: [kWorkers][kMaxGroup][2],
// s_acc: [kWorkers][kMaxGroup][kD], 16-byte aligned) and writes the output
// or this chunk's partials. Every thread of the block calls it.
template <int kLanes>
__device__ __forceinline__ void wide_finish(const AttnArgs& a, int row, int t, int chunk, int h0, int gs, int sub,
                                            int worker, const float (&acc)[kMaxGroup][kWideElems],
                                            const float (&m)[kMaxGroup], const float (&l)[kMaxGroup],
                                            float (*s_ml)[kMaxGroup][2],
                                            float (*s_acc)[kMaxGroup][WideShape<kLanes>::kD]) {
  constexpr int kD = WideShape<kLanes>::kD, kWorkers = WideShape<kLanes>::kWorkers;
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    if (sub == 0) s_ml[worker][i][0] = m[i], s_ml[worker][i][1] = l[i];
    float4* dst = reinterpret_cast<float4*>(&s_acc[worker][i][sub * kWideElems]);
    dst[0] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    dst[1] = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < gs * kD; idx += kWideThreads) {
    const int i = idx / kD, d = idx % kD;
    float mm = -INFINITY;
#pragma unroll 8
    for (int w = 0; w < kWorkers; ++w) mm = fmaxf(mm, s_ml[w][i][0]);
    float ll = 0.0f, aa = 0.0f;
    if (mm != -INFINITY) {
#pragma unroll 8
      for (int w = 0; w < kWorkers; ++w) {
        const float c = s_ml[w][i][1] > 0.0f ? expf(s_ml[w][i][0] - mm) : 0.0f;
        ll = fmaf(s_ml[w][i][1], c, ll);
        aa = fmaf(s_acc[w][i][d], c, aa);
      }
    }
    const int64_t th = static_cast<int64_t>(t) * a.n_heads + h0 + i;
    if (a.n_splits == 1) {
      a.out[th * kD + d] = ll > 0.0f ? aa * a.v_scale / ll : 0.0f;
    } else {
      const int64_t ts = (static_cast<int64_t>(row) * a.n_heads + h0 + i) * a.n_splits + chunk;
      a.part_acc[ts * kD + d] = aa * a.v_scale;
      if (d == 0) a.part_ml[2 * ts] = mm, a.part_ml[2 * ts + 1] = ll;
    }
  }
}

// A split kernel and its dynamic shared memory.
struct KernelChoice {
  void (*fn)(AttnArgs) = nullptr;
  size_t smem = 0;
};

// The stream kernel (v20) for an f16 or fp8 cache and head_dim 32, 64, 128
// or 256; no kernel (fn null) otherwise (paged_attention_stream.cu).
KernelChoice stream_kernel_choice(KvPrecision dtype, int head_dim);

// Whether a chunk of split_len positions is more than the tiles the stream
// kernel keeps in flight (it pays from there: v20).
bool stream_pays(int split_len, int head_dim);

}  // namespace hearth::kernels::cuda::attn_detail
