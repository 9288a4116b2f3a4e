#include "kernels/cuda/paged_attention.h"

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_row.cuh"
#include "kernels/cuda/paged_attention_wide.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hearth::kernels::cuda {
namespace {

using namespace attn_detail;

constexpr int kWarps = 4;                           // warps per block; they interleave the chunk's positions
constexpr int kMaxElems = kMaxAttnHeadDim / kWarp;  // head elements per lane

// e (< kMaxElems) elements of a K/V row starting at element `off` (a multiple of n).
template <KvPrecision kDtype>
__device__ __forceinline__ void load_row(const void* base, const void* dbase, int64_t off, int n,
                                         float (&out)[kMaxElems]) {
  if constexpr (kDtype == KvPrecision::kQ8_0) {
    const int8_t* p = static_cast<const int8_t*>(base) + off;
    const uint16_t* d = static_cast<const uint16_t*>(dbase);
#pragma unroll
    for (int i = 0; i < kMaxElems; ++i) {
      if (i < n) out[i] = static_cast<float>(__ldg(p + i)) * half_bits_to_float(__ldg(d + (off + i) / 32));
    }
  } else if constexpr (kDtype == KvPrecision::kF16) {
    const uint16_t* p = static_cast<const uint16_t*>(base) + off;
    if (n == 8) {
      const uint4 w = __ldg(reinterpret_cast<const uint4*>(p));
      const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        out[2 * i] = half_bits_to_float(static_cast<uint16_t>(words[i] & 0xffffu));
        out[2 * i + 1] = half_bits_to_float(static_cast<uint16_t>(words[i] >> 16));
      }
      return;
    }
    if (n == 4) {  // head_dim 128: one 8-byte load
      const uint2 w = __ldg(reinterpret_cast<const uint2*>(p));
      out[0] = half_bits_to_float(static_cast<uint16_t>(w.x & 0xffffu));
      out[1] = half_bits_to_float(static_cast<uint16_t>(w.x >> 16));
      out[2] = half_bits_to_float(static_cast<uint16_t>(w.y & 0xffffu));
      out[3] = half_bits_to_float(static_cast<uint16_t>(w.y >> 16));
      return;
    }
#pragma unroll
    for (int i = 0; i < kMaxElems; ++i) {
      if (i < n) out[i] = half_bits_to_float(__ldg(p + i));
    }
  } else {
    const uint8_t* p = static_cast<const uint8_t*>(base) + off;
    if (n == 8) {
      const uint2 w = __ldg(reinterpret_cast<const uint2*>(p));
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        out[i] = fp8_e4m3_to_float(static_cast<uint8_t>(byte_of(w.x, i)));
        out[4 + i] = fp8_e4m3_to_float(static_cast<uint8_t>(byte_of(w.y, i)));
      }
      return;
    }
    if (n == 4) {
      const uint32_t w = __ldg(reinterpret_cast<const uint32_t*>(p));
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = fp8_e4m3_to_float(static_cast<uint8_t>(byte_of(w, i)));
      return;
    }
#pragma unroll
    for (int i = 0; i < kMaxElems; ++i) {
      if (i < n) out[i] = fp8_e4m3_to_float(__ldg(p + i));
    }
  }
}

// Per-warp online-softmax state of up to kMaxGroup heads over kMaxElems elements per lane.
struct WarpState {
  float m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][kMaxElems];
};

// One position's K/V row (this lane's n elements) into the warp's state.
__device__ __forceinline__ void attend_position(const float (&qv)[kMaxGroup][kMaxElems], int gs, int n,
                                                const float (&kr)[kMaxElems], const float (&vr)[kMaxElems],
                                                WarpState& st) {
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    if (i >= gs) break;
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < kMaxElems; ++e) {
      if (e < n) s = fmaf(qv[i][e], kr[e], s);
    }
    s = warp_sum(s);
    const float m_new = fmaxf(st.m[i], s);
    const float corr = expf(st.m[i] - m_new);  // 0 on the first position (m = -inf)
    const float p = expf(s - m_new);
    st.l[i] = st.l[i] * corr + p;
#pragma unroll
    for (int e = 0; e < kMaxElems; ++e) {
      if (e < n) st.acc[i][e] = st.acc[i][e] * corr + p * vr[e];
    }
    st.m[i] = m_new;
  }
}

// Positions [lo, hi) of one chunk; warp w takes lo + w, lo + w + kWarps, ...,
// in that order, the K/V rows of kBatch of them loaded before the first is
// used (one memory round trip per kBatch positions instead of per position;
// the arithmetic and its order are the same as one position at a time).
constexpr int kBatch = 4;

template <KvPrecision kDtype>
__device__ void attend_chunk(const AttnArgs& a, const float (&qv)[kMaxGroup][kMaxElems], int gs, int g,
                             const int32_t* table, int lo, int hi, WarpState& st) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int n = a.head_dim / kWarp;
  for (int pos0 = lo + warp; pos0 < hi; pos0 += kBatch * kWarps) {
    float kb[kBatch][kMaxElems], vb[kBatch][kMaxElems];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int pos = pos0 + b * kWarps;
      if (pos >= hi) break;
      const int64_t block = table[pos / a.block_size];
      const int64_t off = ((block * a.block_size + pos % a.block_size) * a.n_kv_heads + g) * a.head_dim +
                          static_cast<int64_t>(lane) * n;
      load_row<kDtype>(a.k, a.k_d, off, n, kb[b]);
      load_row<kDtype>(a.v, a.v_d, off, n, vb[b]);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (pos0 + b * kWarps >= hi) break;
      attend_position(qv, gs, n, kb[b], vb[b], st);
    }
  }
}

// grid: (token, kv head * subgroups, chunk); block: kWarps warps.
template <KvPrecision kDtype>
__global__ void __launch_bounds__(kWarps* kWarp) attn_split_kernel(AttnArgs a) {
  __shared__ float s_ml[kWarps][kMaxGroup][2];
  __shared__ float s_acc[kWarps][kMaxGroup][kMaxAttnHeadDim];
  pdl_launch_dependents();  // the output GEMV may load its weights meanwhile
  pdl_wait();               // q and the new K/V come from the kernel before (launched with PDL: pdl_small_on)
  const int row = blockIdx.x, t = token_of(a.token_index, row), chunk = blockIdx.z;
  const int g = blockIdx.y / a.subgroups;
  const int h0 = g * a.group + (blockIdx.y % a.subgroups) * kMaxGroup;
  const int gs = min(kMaxGroup, g * a.group + a.group - h0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int n = a.head_dim / kWarp;
  const int p = a.positions[t];
  const int first = a.window > 0 ? max(0, p - a.window + 1) : 0;
  const int lo = max(chunk * a.split_len, first), hi = min((chunk + 1) * a.split_len, p + 1);

  float qv[kMaxGroup][kMaxElems];
  WarpState st;
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    st.m[i] = -INFINITY;
    st.l[i] = 0.0f;
#pragma unroll
    for (int e = 0; e < kMaxElems; ++e) {
      st.acc[i][e] = 0.0f;
      const bool live = i < gs && e < n;
      qv[i][e] =
          live ? a.q[(static_cast<int64_t>(t) * a.n_heads + h0 + i) * a.head_dim + lane * n + e] * a.qk_scale : 0.0f;
    }
  }
  const int seq = a.token_seq != nullptr ? a.token_seq[t] : 0;
  if (lo < hi) {
    attend_chunk<kDtype>(a, qv, gs, g, a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq, lo, hi, st);
  }
  // Merge the warps' states through shared memory.
#pragma unroll
  for (int i = 0; i < kMaxGroup; ++i) {
    if (lane == 0) s_ml[warp][i][0] = st.m[i], s_ml[warp][i][1] = st.l[i];
#pragma unroll
    for (int e = 0; e < kMaxElems; ++e) {
      if (e < n) s_acc[warp][i][lane * n + e] = st.acc[i][e];
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < gs * a.head_dim; idx += kWarps * kWarp) {
    const int i = idx / a.head_dim, d = idx % a.head_dim;
    float m = -INFINITY;
    for (int w = 0; w < kWarps; ++w) m = fmaxf(m, s_ml[w][i][0]);
    float l = 0.0f, acc = 0.0f;
    if (m != -INFINITY) {
      for (int w = 0; w < kWarps; ++w) {
        const float c = expf(s_ml[w][i][0] - m);
        l += s_ml[w][i][1] * c;
        acc += s_acc[w][i][d] * c;
      }
    }
    const int64_t th = static_cast<int64_t>(t) * a.n_heads + h0 + i;
    if (a.n_splits == 1) {
      a.out[th * a.head_dim + d] = l > 0.0f ? acc * a.v_scale / l : 0.0f;
    } else {
      const int64_t ts = (static_cast<int64_t>(row) * a.n_heads + h0 + i) * a.n_splits + chunk;
      a.part_acc[ts * a.head_dim + d] = acc * a.v_scale;
      if (d == 0) a.part_ml[2 * ts] = m, a.part_ml[2 * ts + 1] = l;
    }
  }
}

// grid: token * n_heads; block: head_dim threads. out = sum_c acc_c e^(m_c - M) / sum_c l_c e^(m_c - M).
__global__ void attn_combine_kernel(const float* __restrict__ part_acc, const float* __restrict__ part_ml, int n_splits,
                                    int head_dim, int n_heads, const int32_t* token_index, float* __restrict__ out) {
  pdl_launch_dependents();
  pdl_wait();                     // the chunks' partials come from attn_split_kernel
  const int64_t th = blockIdx.x;  // the call's row * n_heads + head
  const int64_t out_th =
      static_cast<int64_t>(token_of(token_index, static_cast<int>(th / n_heads))) * n_heads + th % n_heads;
  const float* ml = part_ml + 2 * th * n_splits;
  float m = -INFINITY;
  for (int c = 0; c < n_splits; ++c) {
    if (ml[2 * c + 1] > 0.0f) m = fmaxf(m, ml[2 * c]);
  }
  float l = 0.0f, acc = 0.0f;
  for (int c = 0; c < n_splits; ++c) {
    if (ml[2 * c + 1] > 0.0f) {  // empty chunks (past the position) wrote no output
      const float w = expf(ml[2 * c] - m);
      l += ml[2 * c + 1] * w;
      acc += part_acc[(th * n_splits + c) * head_dim + threadIdx.x] * w;
    }
  }
  out[out_th * head_dim + threadIdx.x] = l > 0.0f ? acc / l : 0.0f;
}

// grid: (token, kv head * subgroups, chunk); block: kWideWarps warps; the
// same outputs as attn_split_kernel (partials, or the output for one chunk).
template <KvPrecision kDtype, int kLanes>
__global__ void __launch_bounds__(kWideThreads, kWideMinBlocks) attn_wide_kernel(AttnArgs a) {
  using Shape = WideShape<kLanes>;
  constexpr int kD = Shape::kD, kPerWarp = Shape::kPerWarp, kWorkers = Shape::kWorkers, kStep = Shape::kStep;
  __shared__ float s_ml[kWorkers][kMaxGroup][2];
  __shared__ __align__(16) float s_acc[kWorkers][kMaxGroup][kD];
  pdl_launch_dependents();
  pdl_wait();
  const int row = blockIdx.x, t = token_of(a.token_index, row), chunk = blockIdx.z;
  const int g = blockIdx.y / a.subgroups;
  const int h0 = g * a.group + (blockIdx.y % a.subgroups) * kMaxGroup;
  const int gs = min(kMaxGroup, g * a.group + a.group - h0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int sub = lane % kLanes, worker = warp * kPerWarp + lane / kLanes;
  const int p = a.positions[t];
  const int first = a.window > 0 ? max(0, p - a.window + 1) : 0;
  const int lo = max(chunk * a.split_len, first), hi = min((chunk + 1) * a.split_len, p + 1);

  float qv[kMaxGroup][kWideElems], acc[kMaxGroup][kWideElems], m[kMaxGroup], l[kMaxGroup];
  wide_start<kLanes>(a, t, h0, gs, sub, qv, acc, m, l);
  const int seq = a.token_seq != nullptr ? a.token_seq[t] : 0;
  const int32_t* table = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;
  const int64_t head_off = static_cast<int64_t>(g) * kD + sub * kWideElems;
  // Pool blocks of this iteration's rows; the next iteration's are read while its K/V loads fly.
  int32_t blk[kWideRows];
#pragma unroll
  for (int j = 0; j < kWideRows; ++j) {
    const int pos = lo + j * kWorkers + worker;
    blk[j] = pos < hi ? __ldg(table + pos / a.block_size) : 0;
  }
  // The loop bound is the warp's first row, so all of a warp's lanes run every iteration (shuffles).
  for (int base = lo; base + warp * kPerWarp < hi; base += kStep) {
    WideRaw<kDtype> kr[kWideRows], vr[kWideRows];
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) {
      const int pos = base + j * kWorkers + worker;
      if (pos < hi) {
        const int64_t off =
            (static_cast<int64_t>(blk[j]) * a.block_size + pos % a.block_size) * a.n_kv_heads * kD + head_off;
        kr[j] = wide_load<kDtype>(a.k, a.k_d, off);
        vr[j] = wide_load<kDtype>(a.v, a.v_d, off);
      } else {
        kr[j] = wide_zero<kDtype>();
        vr[j] = wide_zero<kDtype>();
      }
    }
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) {
      const int pos = base + kStep + j * kWorkers + worker;
      blk[j] = pos < hi ? __ldg(table + pos / a.block_size) : 0;
    }
    wide_fold<kDtype, kLanes>(base, worker, hi, kr, vr, qv, acc, m, l);
  }
  wide_finish<kLanes>(a, row, t, chunk, h0, gs, sub, worker, acc, m, l, s_ml, s_acc);
}

// grid: (token * n_heads, parts); block: dims * slices threads (<= 1024),
// dims = head_dim / parts: block (th, p) writes dimensions [p * dims, (p + 1)
// * dims) of head th, so one sequence's 32 heads fill ~128 SMs instead of 32
// (v20). Slice k of the threads merges chunks k, k + slices, ... (independent
// loads, a few per thread), then the slices are summed through shared memory.
constexpr int kCombineThreads = 1024;

__global__ void __launch_bounds__(kCombineThreads)
    attn_combine_wide_kernel(const float* __restrict__ part_acc, const float* __restrict__ part_ml, int n_splits,
                             int head_dim, int dims, int n_heads, const int32_t* token_index, float* __restrict__ out) {
  __shared__ float s_red[kCombineThreads];
  __shared__ float s_l[kCombineThreads / kWarp];
  __shared__ float s_m[kWarp];
  pdl_launch_dependents();
  pdl_wait();
  const int64_t th = blockIdx.x;  // the call's row * n_heads + head
  const int64_t out_th =
      static_cast<int64_t>(token_of(token_index, static_cast<int>(th / n_heads))) * n_heads + th % n_heads;
  const int slices = static_cast<int>(blockDim.x) / dims;
  const int dl = static_cast<int>(threadIdx.x) % dims, sl = static_cast<int>(threadIdx.x) / dims;
  const int d = static_cast<int>(blockIdx.y) * dims + dl;
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const float* ml = part_ml + 2 * th * n_splits;
  float m = -INFINITY;
  for (int c = static_cast<int>(threadIdx.x); c < n_splits; c += static_cast<int>(blockDim.x)) {
    if (ml[2 * c + 1] > 0.0f) m = fmaxf(m, ml[2 * c]);
  }
  m = warp_max(m);
  if (lane == 0) s_m[warp] = m;
  __syncthreads();
  m = lane < static_cast<int>(blockDim.x) / kWarp ? s_m[lane] : -INFINITY;
  m = warp_max(m);
  float l = 0.0f, acc = 0.0f;
  if (m != -INFINITY) {
    const float* pa = part_acc + th * n_splits * head_dim + d;
#pragma unroll 4
    for (int c = sl; c < n_splits; c += slices) {
      const float lc = ml[2 * c + 1], mc = ml[2 * c];
      const float x = pa[static_cast<int64_t>(c) * head_dim];
      if (lc > 0.0f) {  // chunks past the position hold no positions
        const float w = expf(mc - m);
        l = fmaf(lc, w, l);
        acc = fmaf(x, w, acc);
      }
    }
  }
  s_red[threadIdx.x] = acc;
  if (dl == 0) s_l[sl] = l;
  __syncthreads();
  if (sl == 0) {
    float ls = 0.0f, as = 0.0f;
    for (int k = 0; k < slices; ++k) ls += s_l[k], as += s_red[k * dims + dl];
    out[out_th * head_dim + d] = ls > 0.0f ? as / ls : 0.0f;
  }
}

// Chunk lengths are multiples of this: 16 positions are one kBatch per warp,
// so a short context (decode graphs bound it at 256 positions) spreads over
// 16 chunks instead of 4 of 64 (measured: docs/perf-notes.md v12).
constexpr int kSplitQuantum = kBatch * kWarps;

int ceil_div(int64_t a, int64_t b) {
  return static_cast<int>((a + b - 1) / b);
}

}  // namespace

namespace {

bool attention_wide_default() {
  // HEARTH_CUDA_ATTN_WIDE=0: the v12 kernels (A/B runs).
  static const bool on = [] {
    const char* v = std::getenv("HEARTH_CUDA_ATTN_WIDE");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

// HEARTH_CUDA_ATTN_STREAM: unset, the stream kernel where a block's chunk
// is more than two tiles (kStreamStages - 1: what the wide kernel's blocks
// also load in one round; measured v20: +24% at 16 sequences x 4,096, -3%
// at one sequence's two-tile chunks); 1 always, 0 never (A/B runs).
int attention_stream_setting() {
  static const int v = [] {
    const char* e = std::getenv("HEARTH_CUDA_ATTN_STREAM");
    if (e == nullptr || *e == '\0') return -1;
    return std::strcmp(e, "0") == 0 ? 0 : 1;
  }();
  return v;
}

bool attention_stream_auto(int split_len, int head_dim) {
  const int setting = attention_stream_setting();
  if (setting >= 0) return setting == 1;
  return stream_pays(split_len, head_dim);
}

}  // namespace

int choose_split_len(int n_tokens, int n_heads, int n_kv_heads, int max_context, int sm_count) {
  const int group = n_kv_heads > 0 ? std::max(1, n_heads / n_kv_heads) : 1;
  const int64_t blocks =
      static_cast<int64_t>(std::max(1, n_tokens)) * std::max(1, n_kv_heads) * ceil_div(group, kMaxGroup);
  // Blocks wanted in all: per SM, 4 for the v12 kernel; for the wide one as
  // many as are resident at once (one full wave). HEARTH_CUDA_ATTN_BLOCKS_PER_SM: A/B runs.
  static const int per_sm = [] {
    const char* v = std::getenv("HEARTH_CUDA_ATTN_BLOCKS_PER_SM");
    const int n = v != nullptr ? std::atoi(v) : 0;
    if (n > 0 && n <= 64) return n;
    if (!attention_wide_default()) return 4;
    int resident = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, attn_wide_kernel<KvPrecision::kF16, 16>, kWideThreads,
                                                      0) != cudaSuccess ||
        resident <= 0) {
      static_cast<void>(cudaGetLastError());
      resident = kWideMinBlocks;
    }
    return resident;
  }();
  const int64_t want = static_cast<int64_t>(per_sm) * std::max(1, sm_count);
  const int splits = static_cast<int>(std::max<int64_t>(1, (want + blocks - 1) / blocks));
  const int len = ceil_div(std::max(1, max_context), splits);
  // HEARTH_CUDA_ATTN_SPLIT_QUANTUM (a multiple of 16; 64 was the quantum before v12): A/B runs.
  static const int quantum = [] {
    const char* v = std::getenv("HEARTH_CUDA_ATTN_SPLIT_QUANTUM");
    const int q = v != nullptr ? std::atoi(v) : 0;
    return q > 0 && q % kSplitQuantum == 0 ? q : kSplitQuantum;
  }();
  return std::max(quantum, ceil_div(len, quantum) * quantum);
}

namespace {

// The wide kernel for a head size (kLanes lanes a row) and a cache dtype.
template <int kLanes>
void (*wide_kernel_for(KvPrecision dtype))(AttnArgs) {
  switch (dtype) {
    case KvPrecision::kFp8E4M3:
      return attn_wide_kernel<KvPrecision::kFp8E4M3, kLanes>;
    case KvPrecision::kQ8_0:
      return attn_wide_kernel<KvPrecision::kQ8_0, kLanes>;
    case KvPrecision::kF16:
      break;
  }
  return attn_wide_kernel<KvPrecision::kF16, kLanes>;
}

// The wide family's kernel (kind kWide or kStream; kStream where it has no
// kernel for the cache takes kWide) for a head size; no kernel (the v12 one
// runs) for head sizes other than 32/64/128/256.
KernelChoice wide_family(AttentionKernel kind, int head_dim, KvPrecision dtype) {
  if (kind == AttentionKernel::kStream) {
    const KernelChoice k = stream_kernel_choice(dtype, head_dim);
    if (k.fn != nullptr) return k;
  }
  switch (head_dim) {
    case 32:
      return {wide_kernel_for<4>(dtype), 0};
    case 64:
      return {wide_kernel_for<8>(dtype), 0};
    case 128:
      return {wide_kernel_for<16>(dtype), 0};
    case 256:
      return {wide_kernel_for<32>(dtype), 0};
    default:
      return {};
  }
}

// The kernel a call runs: kAuto resolved by the environment; kStream where
// the cache is q8_0 falls back to kWide.
AttentionKernel resolve_kernel(AttentionKernel k, KvPrecision dtype, int split_len, int head_dim) {
  if (k == AttentionKernel::kAuto) {
    k = !attention_wide_default()                    ? AttentionKernel::kV12
        : attention_stream_auto(split_len, head_dim) ? AttentionKernel::kStream
                                                     : AttentionKernel::kWide;
  }
  if (k == AttentionKernel::kStream && dtype == KvPrecision::kQ8_0) k = AttentionKernel::kWide;
  return k;
}

// Pieces of head_dim the combine splits each head into: the fewest (powers of
// two, pieces of >= 32 dimensions) that give every SM a block. Few heads (one
// sequence's decode) take 4 at head_dim 128; batches take 1.
// HEARTH_CUDA_ATTN_COMBINE_PARTS=N forces N (1 = the v13 combine; A/B runs).
int combine_parts(int64_t heads, int head_dim) {
  static const int forced = [] {
    const char* v = std::getenv("HEARTH_CUDA_ATTN_COMBINE_PARTS");
    return v != nullptr ? std::atoi(v) : 0;
  }();
  if (forced > 0) {
    int p = 1;
    while (p * 2 <= forced && head_dim % (p * 2) == 0 && head_dim / (p * 2) >= kWarp) p *= 2;
    return p;
  }
  static const int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      return 0;
    }
    return n;
  }();
  int p = 1;
  while (heads * p < sms && head_dim % (p * 2) == 0 && head_dim / (p * 2) >= kWarp) p *= 2;
  return p;
}

}  // namespace

size_t paged_attention_workspace_bytes(int n_tokens, int n_heads, int head_dim, int max_context, int split_len) {
  if (split_len <= 0) return 0;
  const int n_splits = ceil_div(max_context, split_len);
  if (n_splits <= 1) return 0;
  return static_cast<size_t>(n_tokens) * n_heads * n_splits * (head_dim + 2) * sizeof(float);
}

Status paged_attention(const PagedKvCache& kv, const AttentionBatch& batch, const PagedAttentionParams& params,
                       float* out, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(kv.k != nullptr && kv.v != nullptr && kv.block_size > 0 && kv.n_kv_heads > 0);
  HEARTH_CUDA_REQUIRE(kv.head_dim > 0 && kv.head_dim % kWarp == 0 && kv.head_dim <= kMaxAttnHeadDim);
  HEARTH_CUDA_REQUIRE(kv.dtype == KvPrecision::kF16 ||
                      (kv.dtype == KvPrecision::kFp8E4M3 && kv.k_scale > 0.0f && kv.v_scale > 0.0f) ||
                      (kv.dtype == KvPrecision::kQ8_0 && kv.k_d != nullptr && kv.v_d != nullptr));
  HEARTH_CUDA_REQUIRE(params.n_heads > 0 && params.n_heads % kv.n_kv_heads == 0 && params.split_len > 0);
  HEARTH_CUDA_REQUIRE(batch.q != nullptr && batch.positions != nullptr && batch.block_tables != nullptr);
  HEARTH_CUDA_REQUIRE(batch.max_context > 0 && batch.max_blocks_per_seq * int64_t{kv.block_size} >= batch.max_context);
  HEARTH_CUDA_REQUIRE(batch.n_tokens >= 0 && out != nullptr);
  if (batch.n_tokens == 0) return {};
  const int n_splits = ceil_div(batch.max_context, params.split_len);
  HEARTH_CUDA_REQUIRE(n_splits <= 65535);
  const size_t need =
      paged_attention_workspace_bytes(batch.n_tokens, params.n_heads, kv.head_dim, batch.max_context, params.split_len);
  if (workspace_bytes < need || (need > 0 && workspace == nullptr)) {
    return invalid_argument("paged_attention workspace smaller than paged_attention_workspace_bytes()");
  }
  const int group = params.n_heads / kv.n_kv_heads;
  AttnArgs a{};
  a.q = batch.q, a.positions = batch.positions, a.token_seq = batch.token_seq, a.block_tables = batch.block_tables;
  a.token_index = batch.token_index;
  a.max_blocks_per_seq = batch.max_blocks_per_seq;
  a.k = kv.k, a.v = kv.v, a.k_d = kv.k_d, a.v_d = kv.v_d, a.block_size = kv.block_size, a.n_kv_heads = kv.n_kv_heads,
  a.head_dim = kv.head_dim;
  a.n_heads = params.n_heads, a.group = group, a.subgroups = ceil_div(group, kMaxGroup);
  const bool fp8 = kv.dtype == KvPrecision::kFp8E4M3;
  a.qk_scale = params.scale * (fp8 ? kv.k_scale : 1.0f);
  a.v_scale = fp8 ? kv.v_scale : 1.0f;
  a.window = params.window, a.split_len = params.split_len, a.n_splits = n_splits;
  a.out = out;
  const size_t parts = static_cast<size_t>(batch.n_tokens) * params.n_heads * n_splits;
  a.part_acc = static_cast<float*>(workspace);
  a.part_ml = need > 0 ? a.part_acc + parts * kv.head_dim : nullptr;
  const dim3 grid(static_cast<unsigned>(batch.n_tokens), static_cast<unsigned>(kv.n_kv_heads * a.subgroups),
                  static_cast<unsigned>(n_splits));
  HEARTH_CUDA_REQUIRE(grid.y <= 65535);
  const AttentionKernel kind = resolve_kernel(params.kernel, kv.dtype, params.split_len, kv.head_dim);
  const bool wide = kind == AttentionKernel::kWide || kind == AttentionKernel::kStream;
  const KernelChoice chosen = wide ? wide_family(kind, kv.head_dim, kv.dtype) : KernelChoice{};
  void (*split)(AttnArgs) = chosen.fn;
  const size_t split_smem = chosen.smem;
  const int split_threads = split != nullptr ? kWideThreads : kWarps * kWarp;
  if (split == nullptr) {
    split = kv.dtype == KvPrecision::kFp8E4M3 ? attn_split_kernel<KvPrecision::kFp8E4M3>
            : kv.dtype == KvPrecision::kQ8_0  ? attn_split_kernel<KvPrecision::kQ8_0>
                                              : attn_split_kernel<KvPrecision::kF16>;
  }
  HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), split, grid, split_threads, split_smem, stream, a));
  HEARTH_CUDA_TRY(check_launch("attn_split_kernel"));
  if (n_splits == 1) return {};
  const auto n_th = static_cast<unsigned>(batch.n_tokens * params.n_heads);
  const auto* pacc = static_cast<const float*>(a.part_acc);
  const auto* pml = static_cast<const float*>(a.part_ml);
  if (wide) {
    const int parts = combine_parts(static_cast<int64_t>(n_th), kv.head_dim);
    const int dims = kv.head_dim / parts;
    const int slices = std::max(1, std::min(n_splits, kCombineThreads / dims));
    HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), attn_combine_wide_kernel, dim3(n_th, parts), slices * dims, 0,
                                      stream, pacc, pml, n_splits, kv.head_dim, dims, params.n_heads, batch.token_index,
                                      out));
  } else {
    HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), attn_combine_kernel, dim3(n_th), kv.head_dim, 0, stream, pacc,
                                      pml, n_splits, kv.head_dim, params.n_heads, batch.token_index, out));
  }
  return check_launch("attn_combine_kernel");
}

}  // namespace hearth::kernels::cuda
