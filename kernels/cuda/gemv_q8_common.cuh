// One-token GEMV with 8-bit activations and integer dot products.
//
// Shape of the work. A thread's item is a "chunk": 256 consecutive elements of
// one row, i.e. 8 legacy blocks (Q4_0 144 bytes, Q4_1 160, Q5_0 176, Q5_1 192,
// Q8_0 272) or one K super-block (Q4_K 144, Q5_K 176): a whole number of
// 16-byte words, so a thread reads its chunk with 16-byte loads, all issued
// before it uses any (9-17 loads in flight per thread), and by default the
// next item's loads are issued before the current one is computed (Q6_K's
// 210-byte super-blocks: see Q8Type<kQ6_K>). L lanes (8, 16 or 32,
// from the chunks per row) share a row and take its chunks j, j + L, ...; a
// block of 256 threads covers 256 / L rows per group and loops over groups
// (grid-stride), so the activation prologue below is paid once per block.
//
// Activations. Each block first quantizes x (f32, from L2/L1) into shared
// memory: per unit of 32 values d = amax / 127, codes q = rint(x 127 / amax),
// and s = d sum(q). A unit's contribution is then
//   d_w (d_x sum(q_w q_x)) + off_w s_x
// with sum(q_w q_x) exact in int32 (dp4a) and off_w the weight value of
// code 0 (Q4_0 -8 d, Q5_0 -16 d, Q4_1/Q5_1 m, K-quants -dmin m_j, Q8_0 0):
// exactly the dequantized weights dotted with the quantized activations (up
// to f32 rounding). The first item's weight loads are issued before the
// prologue, so their latency overlaps it.
//
// Shared layout: chunk c's codes at word 68 c (272 bytes: 256 + 16 of pad, so
// 8 lanes reading 8 consecutive chunks hit 8 distinct 16-byte bank groups),
// unit u's (d, s) at float2 9 (u / 8) + u % 8 (likewise conflict-free).
//
// Order: a row's sum is each lane's chunks in order, then a fixed xor tree
// over its L lanes: the result depends neither on the grid size, nor on
// prefetching, nor on which other matrices share the launch (gemv_fused runs
// up to 3 matrices of one type and width as one set of concatenated rows).
//
// PDL: the kernels wait (pdl_wait) after issuing their first weight loads
// but do not trigger their dependents early: measured, the next GEMV's
// blocks starting beside this one cost 6% of the 8B decode (docs/perf-notes.md v12).
//
// Files: this header (the types' chunk arithmetic, the activation prologue,
// the matrix sets, the launchers' shared declarations), gemv_q8_direct.cu
// (each lane loads its chunks itself), gemv_q8_staged.cu (row groups bulk-
// copied into shared memory, sm_90+, and the plan that sizes the stages),
// gemv_q8.cu (what the path takes, and the choice between the two).
// Internal to kernels/cuda; include only from .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/gemv_q8.h"
#include "kernels/cuda/glu.cuh"
#include "kernels/cuda/q8_chunk.cuh"

namespace hearth::kernels::cuda::q8 {

constexpr int kThreads = 256;
constexpr int kChunkElems = 256;
constexpr int kXWordsPerChunk = 68;  // 256 code bytes + 16 bytes of pad, in words
constexpr int kDsPerChunk = 9;       // 8 units' (d, s) + 1 of pad
constexpr int kSmemPerChunk = 4 * kXWordsPerChunk + 8 * kDsPerChunk;
constexpr int kMaxChunks = 112;  // 28672 columns: <= 46 KB of shared memory (48 KB without opt-in)

// Unit b of a chunk: its 8 code words and (d, s).
struct XUnit {
  int w[8];
  float2 ds;
};

__device__ __forceinline__ XUnit x_unit(const uint32_t* xq, const float2* ds, int b) {
  const uint4* p = reinterpret_cast<const uint4*>(xq + 8 * b);
  const uint4 lo = p[0], hi = p[1];
  XUnit u;
  u.w[0] = static_cast<int>(lo.x), u.w[1] = static_cast<int>(lo.y), u.w[2] = static_cast<int>(lo.z);
  u.w[3] = static_cast<int>(lo.w), u.w[4] = static_cast<int>(hi.x), u.w[5] = static_cast<int>(hi.y);
  u.w[6] = static_cast<int>(hi.z), u.w[7] = static_cast<int>(hi.w);
  u.ds = ds[b];
  return u;
}

// Legacy types: a block's byte layout and its contribution given the dot of
// its 32 codes (0..15 / 0..31 unsigned, Q8_0 signed) with the activation codes.
template <GgmlType T>
struct Legacy;

template <>
struct Legacy<GgmlType::kQ4_0> {
  static constexpr int kBytes = 18, kQs = 2, kQh = -1;
  template <int NV>
  static __device__ __forceinline__ float term(const Chunk<NV>& c, int o, int sumi, float2 ds) {
    return c.half_at(o) * fmaf(ds.x, static_cast<float>(sumi), -8.0f * ds.y);
  }
};

template <>
struct Legacy<GgmlType::kQ4_1> {
  static constexpr int kBytes = 20, kQs = 4, kQh = -1;
  template <int NV>
  static __device__ __forceinline__ float term(const Chunk<NV>& c, int o, int sumi, float2 ds) {
    return fmaf(c.half_at(o) * ds.x, static_cast<float>(sumi), c.half_at(o + 2) * ds.y);
  }
};

template <>
struct Legacy<GgmlType::kQ5_0> {
  static constexpr int kBytes = 22, kQs = 6, kQh = 2;
  template <int NV>
  static __device__ __forceinline__ float term(const Chunk<NV>& c, int o, int sumi, float2 ds) {
    return c.half_at(o) * fmaf(ds.x, static_cast<float>(sumi), -16.0f * ds.y);
  }
};

template <>
struct Legacy<GgmlType::kQ5_1> {
  static constexpr int kBytes = 24, kQs = 8, kQh = 4;
  template <int NV>
  static __device__ __forceinline__ float term(const Chunk<NV>& c, int o, int sumi, float2 ds) {
    return fmaf(c.half_at(o) * ds.x, static_cast<float>(sumi), c.half_at(o + 2) * ds.y);
  }
};

template <>
struct Legacy<GgmlType::kQ8_0> {
  static constexpr int kBytes = 34, kQs = 2;  // signed codes, no 5th bits
  template <int NV>
  static __device__ __forceinline__ float term(const Chunk<NV>& c, int o, int sumi, float2 ds) {
    return c.half_at(o) * (ds.x * static_cast<float>(sumi));
  }
};

// The 8 blocks of a legacy chunk, in order.
template <GgmlType T, int NV>
__device__ __forceinline__ float legacy_chunk_dot(const Chunk<NV>& c, const uint32_t* xq, const float2* ds) {
  using B = Legacy<T>;
  float acc = 0.0f;
#pragma unroll
  for (int b = 0; b < 8; ++b) {
    const XUnit x = x_unit(xq, ds, b);
    const int o = B::kBytes * b;
    int sumi = 0;
    if constexpr (T == GgmlType::kQ8_0) {
#pragma unroll
      for (int i = 0; i < 8; ++i) sumi = __dp4a(static_cast<int>(c.at(o + B::kQs + 4 * i)), x.w[i], sumi);
    } else {
      const uint32_t qh = B::kQh >= 0 ? c.at(o + (B::kQh >= 0 ? B::kQh : 0)) : 0u;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = c.at(o + B::kQs + 4 * i);
        uint32_t lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;  // elements 4i.., 16 + 4i..
        if constexpr (B::kQh >= 0) {
          lo |= fifth_bits(qh >> (4 * i));
          hi |= fifth_bits(qh >> (16 + 4 * i));
        }
        sumi = __dp4a(static_cast<int>(lo), x.w[i], sumi);
        sumi = __dp4a(static_cast<int>(hi), x.w[4 + i], sumi);
      }
    }
    acc += B::term(c, o, sumi, x.ds);
  }
  return acc;
}

// Q4_K / Q5_K super-block: d, dmin (word 0), 12 scale bytes (words 1-3),
// Q5_K's qh (words 4-11), qs. Sub-block j: codes of word i are nibble j & 1
// of qs word 8 (j / 2) + i (elements 4i..4i+3), Q5_K's 5th bits bit j of
// each byte of qh word i. Contribution d sum_j sc_j d_x sumi_j - dmin sum_j m_j s_x.
template <bool kFive, int NV>
__device__ __forceinline__ float k_chunk_dot(const Chunk<NV>& c, const uint32_t* xq, const float2* ds) {
  constexpr int kQsWord = kFive ? 12 : 4;
  const uint32_t dd = c.word(0);
  const uint32_t s0 = c.word(1), s1 = c.word(2), s2 = c.word(3);
  float a = 0.0f, m = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    uint32_t isc = 0, imn = 0;
    k_scale_min_words(s0, s1, s2, j, &isc, &imn);
    const XUnit x = x_unit(xq, ds, j);
    int sumi = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      uint32_t q = (c.word(kQsWord + 8 * (j / 2) + i) >> (4 * (j & 1))) & 0x0f0f0f0fu;
      if constexpr (kFive) q |= ((c.word(4 + i) >> j) & 0x01010101u) << 4;
      sumi = __dp4a(static_cast<int>(q), x.w[i], sumi);
    }
    a = fmaf(x.ds.x, static_cast<float>(sumi * static_cast<int>(isc)), a);  // exact: |sumi sc| < 2^23
    m = fmaf(x.ds.y, static_cast<float>(imn), m);
  }
  const float d = half_bits_to_float(static_cast<uint16_t>(dd & 0xffffu));
  const float dmin = half_bits_to_float(static_cast<uint16_t>(dd >> 16));
  return fmaf(d, a, -dmin * m);
}

template <GgmlType T>
constexpr int chunk_bytes() {
  if constexpr (T == GgmlType::kQ4_K) {
    return 144;
  } else if constexpr (T == GgmlType::kQ5_K) {
    return 176;
  } else {
    return 8 * Legacy<T>::kBytes;
  }
}

// Q8Type<T>: a thread's item (Item), its load from a row (load), its dot
// with the chunk's activations (dot); kHalves: the dot needs the code sums
// per 16 values (hs); kItemRegs: the item's registers (the kernel's
// occupancy target without prefetch depends on it).
template <GgmlType T>
struct Q8Type {
  static constexpr bool kK = T == GgmlType::kQ4_K || T == GgmlType::kQ5_K;
  static constexpr int kChunkBytes = chunk_bytes<T>();
  static constexpr int kNV = kChunkBytes / 16;
  static constexpr bool kHalves = false;
  static constexpr int kItemRegs = 4 * kNV;
  static_assert(kChunkBytes % 16 == 0, "a chunk is whole 16-byte words");
  using Item = Chunk<kNV>;

  static __device__ __forceinline__ Item load(const uint8_t* row, int c, int, bool) {
    return load_chunk<kNV>(row + static_cast<size_t>(c) * kChunkBytes);
  }
  // The same chunk from a row staged in shared memory (16-byte aligned).
  static __device__ __forceinline__ Item load_shared(const uint8_t* row, int c) {
    Item it;
    const uint4* q = reinterpret_cast<const uint4*>(row + c * kChunkBytes);
#pragma unroll
    for (int i = 0; i < kNV; ++i) it.v[i] = q[i];
    return it;
  }
  static __device__ __forceinline__ float dot(const Item& c, const uint32_t* xq, const float2* ds, const int2*) {
    if constexpr (kK) {
      return k_chunk_dot<T == GgmlType::kQ5_K>(c, xq, ds);
    } else {
      return legacy_chunk_dot<T>(c, xq, ds);
    }
  }
};

// Q6_K: 210-byte super-blocks, so a chunk (one super-block) starts at byte
// 210 c = 2 c (mod 16) of a 16-byte aligned row. The thread loads the 14
// aligned words of 16 bytes around it (224 bytes) and shifts the window by
// o = 2 c mod 16 bytes in registers (two word selects and a byte permute per
// word). The window never leaves the row: gemv_q8_applies requires 16-byte
// rows, i.e. super-blocks per row a multiple of 8, so the last one has o = 14
// and its window ends with it.
// Layout (Unit<kQ6_K>): unit j = 4 h + k, element l: low 4 bits nibble k / 2
// of ql[64 h + 32 (k & 1) + l], high 2 bits 2k.. of qh[32 h + l], int8 scale
// scales[8 h + 2 k + l / 16], y = d sc (q - 32): per 16 values
// sc (sum(q q_x) - 32 sum(q_x)), the code sums coming from hs.
struct Q6Item {
  uint4 raw[14];
  int o;  // the super-block's first byte in raw
};

template <>
struct Q8Type<GgmlType::kQ6_K> {
  static constexpr int kChunkBytes = 210;
  static constexpr bool kHalves = true;
  static constexpr int kItemRegs = 57;
  using Item = Q6Item;

  static __device__ __forceinline__ Item load(const uint8_t* row, int c, int, bool) {
    Item it;
    it.o = (2 * c) & 15;
    const uint8_t* a = row + static_cast<size_t>(c) * kChunkBytes - it.o;
    const uint4* p = reinterpret_cast<const uint4*>(a);
#pragma unroll
    for (int i = 0; i < 13; ++i) it.raw[i] = __ldg(p + i);
    it.raw[13] = __ldg(p + 13);
    return it;
  }
  static __device__ __forceinline__ Item load_shared(const uint8_t* row, int c) {
    Item it;
    it.o = (2 * c) & 15;
    const uint4* p = reinterpret_cast<const uint4*>(row + c * kChunkBytes - it.o);
#pragma unroll
    for (int i = 0; i < 14; ++i) it.raw[i] = p[i];
    return it;
  }

  static __device__ __forceinline__ float dot(const Item& it, const uint32_t* xq, const float2* ds, const int2* hs) {
    uint32_t u[56];
#pragma unroll
    for (int i = 0; i < 14; ++i) {
      u[4 * i] = it.raw[i].x, u[4 * i + 1] = it.raw[i].y, u[4 * i + 2] = it.raw[i].z, u[4 * i + 3] = it.raw[i].w;
    }
    const bool by8 = (it.o & 8) != 0, by4 = (it.o & 4) != 0;
    const unsigned sel = (it.o & 2) != 0 ? 0x5432u : 0x3210u;
#pragma unroll
    for (int i = 0; i < 54; ++i) u[i] = by8 ? u[i + 2] : u[i];
#pragma unroll
    for (int i = 0; i < 53; ++i) u[i] = by4 ? u[i + 1] : u[i];
#pragma unroll
    for (int i = 0; i < 53; ++i) u[i] = __byte_perm(u[i], u[i + 1], sel);
    // u[0..31] ql, u[32..47] qh, u[48..51] scales, u[52] & 0xffff d.
    float a = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int h = j / 4, k = j % 4;
      const XUnit x = x_unit(xq, ds, j);
      int sumi[2] = {0, 0};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const uint32_t lo = (u[16 * h + 8 * (k & 1) + i] >> (4 * (k / 2))) & 0x0f0f0f0fu;
        const uint32_t hi = (u[32 + 8 * h + i] >> (2 * k)) & 0x03030303u;
        sumi[i / 4] = __dp4a(static_cast<int>(lo | (hi << 4)), x.w[i], sumi[i / 4]);
      }
      const int2 qs = hs[j];
      const int sb = 8 * h + 2 * k;  // scale byte of the first 16 values
      const int sc0 = static_cast<int8_t>(u[48 + sb / 4] >> (8 * (sb % 4)));
      const int sc1 = static_cast<int8_t>(u[48 + sb / 4] >> (8 * (sb % 4 + 1)));
      // exact in f32: |sc (sumi - 32 qs)| <= 128 * 16 * 127 * 32 per half, < 2^24 for the two
      a = fmaf(x.ds.x, static_cast<float>(sc0 * (sumi[0] - 32 * qs.x) + sc1 * (sumi[1] - 32 * qs.y)), a);
    }
    return half_bits_to_float(static_cast<uint16_t>(u[52] & 0xffffu)) * a;
  }
};

// One unit's 4 values of this lane (8 lanes per unit) to codes in xq and,
// from lane m == 0, (d, d * sum of the unit's codes) in ds. The sum is of the
// codes, not of x: the unit's term is then exactly the dot of the weights
// with the quantized values, so a weight offset beta (Q4_0's -8 d) adds
// beta * sum(x - xhat), a zero-mean error, instead of the coherent
// (w - beta) * (x - xhat) that exact sums would leave (measured: 2-4% vs 0.7%
// relative error on random rows).
template <bool kHalves>
__device__ __forceinline__ void quantize_unit(float4 v, int u, int m, uint32_t* xq, float2* ds, int2* hs) {
  float amax = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
  for (int off = 1; off < 8; off *= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
  const int q0 = __float2int_rn(v.x * id), q1 = __float2int_rn(v.y * id);
  const int q2 = __float2int_rn(v.z * id), q3 = __float2int_rn(v.w * id);
  int qsum = (q0 + q1) + (q2 + q3);
  qsum += __shfl_xor_sync(0xffffffffu, qsum, 1);
  qsum += __shfl_xor_sync(0xffffffffu, qsum, 2);
  const int half = qsum;  // lanes 0-3: values 0..15, lanes 4-7: 16..31
  qsum += __shfl_xor_sync(0xffffffffu, qsum, 4);
  xq[(u / 8) * kXWordsPerChunk + (u % 8) * 8 + m] =
      (static_cast<uint32_t>(q0) & 0xffu) | ((static_cast<uint32_t>(q1) & 0xffu) << 8) |
      ((static_cast<uint32_t>(q2) & 0xffu) << 16) | (static_cast<uint32_t>(q3) << 24);
  if (m == 0) {
    const float d = amax / 127.0f;
    ds[(u / 8) * kDsPerChunk + u % 8] = make_float2(d, d * static_cast<float>(qsum));
    if constexpr (kHalves) hs[(u / 8) * kDsPerChunk + u % 8] = make_int2(half, qsum - half);
  }
}

// x (chunks * 256 f32) to codes and (d, s) in shared memory. Thread t takes
// units t / 8 + 32 p (4 values each); the loads of up to 8 units are issued
// before any is used (one L2 round trip per 8 units, not per unit). Whole
// warps stay in each step (units is a multiple of 8, a warp spans 4 units).
template <bool kHalves>
__device__ __forceinline__ void quantize_x(const float* __restrict__ x, int chunks, uint32_t* xq, float2* ds,
                                           int2* hs) {
  constexpr int kStride = kThreads / 8, kBatch = 8;
  const int units = chunks * 8, m = static_cast<int>(threadIdx.x) % 8;
  const float4* xv = reinterpret_cast<const float4*>(x);
  for (int u0 = static_cast<int>(threadIdx.x) / 8; u0 < units; u0 += kBatch * kStride) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int u = u0 + b * kStride;
      v[b] = u < units ? __ldg(xv + 8 * u + m) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (u0 + b * kStride < units) quantize_unit<kHalves>(v[b], u0 + b * kStride, m, xq, ds, hs);
    }
  }
}

// The kernel's input row: x itself, or (norm_w != null) the RMSNorm of x,
// computed in the prologue with rmsnorm4_kernel's arithmetic (rmsnorm.cu):
// thread t holds float4s t + 256 k (k < 8: rows <= 8192), the same sum
// order, block_sum over the block's 256 threads, (x * scale) * w. Those
// float4s are exactly the ones quantize_x gives thread t (units t / 8 +
// 32 k, lane t % 8), so the codes are bit-identical to rmsnorm then this GEMV.
// Or (glu_up != null) the GLU of x (the gate) and glu_up, element by element
// with glu.cuh's arithmetic (the GLU kernels' own), so the codes are
// bit-identical to swiglu / geglu_tanh then this GEMV; the GLU's output is
// not written anywhere (gemv_fused_glu).
struct Q8Input {
  const float* x;
  const float* norm_w;  // [cols]; null: no norm
  float eps;
  float* norm_out;                // block 0 writes the normed row here (null: nowhere); never x
  const float* glu_up = nullptr;  // [cols]; null: no GLU
  int glu_kind = 0;               // 0: SwiGLU, 1: GeGLU (tanh)
};

constexpr int kNormPer = 8;  // float4s per thread in the fused norm: rows <= 8192

template <bool kHalves>
__device__ __forceinline__ void quantize_normed_x(const Q8Input& in, int chunks, uint32_t* xq, float2* ds, int2* hs) {
  const int dim4 = chunks * (kChunkElems / 4), t = static_cast<int>(threadIdx.x);
  const float4* xv = reinterpret_cast<const float4*>(in.x);
  float4 v[kNormPer];
#pragma unroll
  for (int k = 0; k < kNormPer; ++k) {
    const int i = t + k * kThreads;
    v[k] = i < dim4 ? __ldg(xv + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kNormPer; ++k) sum += (v[k].x * v[k].x + v[k].y * v[k].y) + (v[k].z * v[k].z + v[k].w * v[k].w);
  sum = block_sum(sum, reinterpret_cast<float*>(xq));  // xq's first words as scratch
  __syncthreads();                                     // every warp has read the scratch before xq is written
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(4 * dim4) + in.eps);
  const float4* wr = reinterpret_cast<const float4*>(in.norm_w);
  float4* out = blockIdx.x == 0 ? reinterpret_cast<float4*>(in.norm_out) : nullptr;
#pragma unroll
  for (int k = 0; k < kNormPer; ++k) {
    const int i = t + k * kThreads;
    if (i >= dim4) continue;  // whole warps: dim4 is a multiple of 64
    const float4 g = __ldg(wr + i);
    float4 o = make_float4(__fmul_rn(v[k].x, scale), __fmul_rn(v[k].y, scale), __fmul_rn(v[k].z, scale),
                           __fmul_rn(v[k].w, scale));
    o = make_float4(__fmul_rn(o.x, g.x), __fmul_rn(o.y, g.y), __fmul_rn(o.z, g.z), __fmul_rn(o.w, g.w));
    if (out != nullptr) out[i] = o;
    quantize_unit<kHalves>(o, i / 8, t % 8, xq, ds, hs);
  }
}

// quantize_x over glu(x, up): the same units per thread in the same order,
// 4 units' gate and up loads issued before any is used.
template <bool kHalves>
__device__ __forceinline__ void quantize_glu_x(const Q8Input& in, int chunks, uint32_t* xq, float2* ds, int2* hs) {
  constexpr int kStride = kThreads / 8, kBatch = 4;
  const int units = chunks * 8, m = static_cast<int>(threadIdx.x) % 8;
  const float4* gv = reinterpret_cast<const float4*>(in.x);
  const float4* uv = reinterpret_cast<const float4*>(in.glu_up);
  for (int u0 = static_cast<int>(threadIdx.x) / 8; u0 < units; u0 += kBatch * kStride) {
    float4 g[kBatch], u[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int unit = u0 + b * kStride;
      g[b] = unit < units ? __ldg(gv + 8 * unit + m) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      u[b] = unit < units ? __ldg(uv + 8 * unit + m) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (u0 + b * kStride < units)
        quantize_unit<kHalves>(glu4(g[b], u[b], in.glu_kind), u0 + b * kStride, m, xq, ds, hs);
    }
  }
}

template <bool kHalves>
__device__ __forceinline__ void quantize_input(const Q8Input& in, int chunks, uint32_t* xq, float2* ds, int2* hs) {
  if (in.glu_up != nullptr) {
    quantize_glu_x<kHalves>(in, chunks, xq, ds, hs);
  } else if (in.norm_w != nullptr) {
    quantize_normed_x<kHalves>(in, chunks, xq, ds, hs);
  } else {
    quantize_x<kHalves>(in.x, chunks, xq, ds, hs);
  }
}

// Up to kMaxFused matrices of one type and width, their rows concatenated
// (q, k and v of one token; gate and up): one launch, one activation prologue.
struct Q8Mat {
  const uint8_t* w;
  size_t stride;
  int64_t rows;
  const float* bias;
  const float* residual;
  float* y;
};

struct Q8Mats {
  Q8Mat m[kMaxFused];
  int count;
  int64_t rows;  // all matrices' rows
};

// Matrix k and its row for concatenated row r (< mats.rows).
__device__ __forceinline__ int matrix_of(const Q8Mats& mats, int64_t* r) {
  int k = 0;
#pragma unroll
  for (int i = 0; i + 1 < kMaxFused; ++i) {
    if (k + 1 < mats.count && *r >= mats.m[k].rows) *r -= mats.m[k++].rows;
  }
  return k;
}

inline int lanes_for(const GemvOptions& opt, int64_t chunks) {
  return opt.q8_lanes > 0 ? opt.q8_lanes : chunks > 16 ? 32 : chunks > 8 ? 16 : 8;
}

// Runs f(std::integral_constant<GgmlType, T>) for the q8 type t (gemv_q8_applies' types).
template <typename F>
Status with_q8_type(GgmlType t, F&& f) {
  switch (t) {
    case GgmlType::kQ4_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_0>{});
    case GgmlType::kQ4_1:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_1>{});
    case GgmlType::kQ5_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_0>{});
    case GgmlType::kQ5_1:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_1>{});
    case GgmlType::kQ8_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ8_0>{});
    case GgmlType::kQ4_K:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_K>{});
    case GgmlType::kQ6_K:
      return f(std::integral_constant<GgmlType, GgmlType::kQ6_K>{});
    default:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_K>{});
  }
}

// Runs f(std::integral_constant<int, L>) for L = lanes rounded down to 32, 16 or 8.
template <typename F>
Status with_lanes(int lanes, F&& f) {
  if (lanes >= 32) return f(std::integral_constant<int, 32>{});
  if (lanes >= 16) return f(std::integral_constant<int, 16>{});
  return f(std::integral_constant<int, 8>{});
}

// gemv_q8_staged.cu: the stages a launch streams its row groups through
// (stages 0: staging does not apply), and that launch.
struct StagedPlan {
  int stages = 0;  // 0: staging does not apply
  int per_sm = 1;
  uint32_t stage_bytes = 0;
  size_t smem = 0;
};
StagedPlan staged_plan_for(const Q8Mats& mats, GgmlType type, int64_t cols, const GemvOptions& opt);
Status launch_staged(const Q8Mats& mats, GgmlType type, int64_t cols, const Q8Input& x, cudaStream_t stream,
                     const GemvOptions& opt, const StagedPlan& plan);

// gemv_q8_direct.cu: the direct loads.
Status launch_direct(const Q8Mats& mats, GgmlType type, int64_t cols, const Q8Input& x, cudaStream_t stream,
                     const GemvOptions& opt);

}  // namespace hearth::kernels::cuda::q8
