#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_q8.h"
#include "kernels/cuda/gemv_q8_common.cuh"

namespace hearth::kernels::cuda {
namespace {

// Work split: a thread block of 4 warps computes R rows. Lane l of warp w
// takes the 4 consecutive elements 4 (l % 8) .. 4 (l % 8) + 3 of the units
// u = 4 w + l / 8 + 16 k, k = 0, 1, ... (a unit is 32 elements). So 8 lanes
// cover one unit and a block step covers 16 consecutive units: its
// activation loads are 2 KB contiguous per token (coalesced, each used for R
// rows), its weight loads the 16 units' bytes of each row. Each warp reduces
// its partial dots per (row, token), then the 4 warps' sums are added in a
// fixed order.
//
// Per unit, a lane dots the 4 weight codes (small integers, exact in f32)
// with its 4 activations and applies the unit's scale and offset once (see
// Quad), instead of dequantizing each element: about half the instructions
// per weight, which is what bounds this kernel on Hopper.
//
// A row's arithmetic (which lanes take which elements, the order of its fmas,
// the reduction tree) depends neither on R nor on the token count: a token's
// output is the same whichever batch it is in.
constexpr int kWarpsPerBlock = 4;
constexpr int kQuad = 4;
constexpr int kUnitsPerStep = 4 * kWarpsPerBlock;
static_assert(kWarpsPerBlock == 4, "the final sum adds 4 warps' partials");

// A 32-bit word at a 4-byte aligned p (the Q4_K / Q5_K fields: their blocks
// are whole words and validate_matrix requires word-aligned rows).
__device__ __forceinline__ uint32_t load_u32(const uint8_t* p) {
  return __ldg(reinterpret_cast<const uint32_t*>(p));
}

// Quad<T>::load(row, u, m, v, &scale, &offset): the elements 32 u + 4 m + i
// (i < 4, m < 8) of the row are scale * v[i] + offset, with v[i] small
// integers (exact in f32): the kernel dots v with the activations and applies
// scale and offset once per unit (Q4_0: d (q - 8) = d q - 8 d). kOffset false:
// no offset; the float types (kFactored false) give the elements in v.
template <GgmlType T>
struct Quad;

// Byte k of w as a float, exactly: the bit pattern 2^23 + byte minus 2^23
// (a byte permute and an add; no int-to-float conversion, which runs at a
// quarter of the FMA rate).
__device__ __forceinline__ float byte_float(uint32_t w, int k) {
  return __int_as_float(static_cast<int>(__byte_perm(w, 0x4b000000u, 0x7650u + static_cast<unsigned>(k)))) - 8388608.0f;
}

// The 4 low bits of each byte of (q >> shift), with bit 4 of byte i set from
// bit i of the 4-bit value five.
__device__ __forceinline__ uint32_t nibbles(uint32_t q, int shift, uint32_t five) {
  const uint32_t spread = ((five & 15u) * 0x00204081u) & 0x01010101u;  // bit i -> bit 8 i
  return ((q >> shift) & 0x0f0f0f0fu) | (spread << 4);
}

template <bool kOff>
struct Factored {
  static constexpr bool kFactored = true;
  static constexpr bool kOffset = kOff;
};

struct Direct {
  static constexpr bool kFactored = false;
};

template <>
struct Quad<GgmlType::kF32> : Direct {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float*, float*) {
    const float4 x = __ldg(reinterpret_cast<const float4*>(row) + 8 * u + m);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  }
};

template <bool kBf16>
__device__ __forceinline__ void load_half_quad(const uint8_t* row, int64_t u, int m, float (&v)[kQuad]) {
  const uint2 x = __ldg(reinterpret_cast<const uint2*>(row) + 8 * u + m);
  const uint16_t h[4] = {static_cast<uint16_t>(x.x & 0xffffu), static_cast<uint16_t>(x.x >> 16),
                         static_cast<uint16_t>(x.y & 0xffffu), static_cast<uint16_t>(x.y >> 16)};
#pragma unroll
  for (int i = 0; i < kQuad; ++i) v[i] = kBf16 ? bf16_bits_to_float(h[i]) : half_bits_to_float(h[i]);
}

template <>
struct Quad<GgmlType::kF16> : Direct {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float*, float*) {
    load_half_quad<false>(row, u, m, v);
  }
};

template <>
struct Quad<GgmlType::kBF16> : Direct {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float*, float*) {
    load_half_quad<true>(row, u, m, v);
  }
};

// Legacy 4/5-bit blocks: elements 4m..4m+3 are the low nibbles of qs[4m..]
// (m < 4) or the high nibbles of qs[4(m-4)..]; the 5th bit of element e is
// bit e of qh.
__device__ __forceinline__ void legacy_codes(const uint8_t* qs, uint32_t qh, int m, float (&v)[kQuad]) {
  const uint32_t q = nibbles(load_u32_a2(qs + 4 * (m % 4)), 4 * (m / 4), qh >> (4 * m));
#pragma unroll
  for (int i = 0; i < kQuad; ++i) v[i] = byte_float(q, i);
}

template <>
struct Quad<GgmlType::kQ4_0> : Factored<true> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float* sc,
                                              float* off) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row) + u;
    *sc = half_bits_to_float(__ldg(&b->d));
    *off = -8.0f * *sc;
    legacy_codes(b->qs, 0u, m, v);
  }
};

template <>
struct Quad<GgmlType::kQ4_1> : Factored<true> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float* sc,
                                              float* off) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(row) + u;
    const uint32_t dm = load_u32_a2(reinterpret_cast<const uint8_t*>(b));
    *sc = half_bits_to_float(static_cast<uint16_t>(dm & 0xffffu));
    *off = half_bits_to_float(static_cast<uint16_t>(dm >> 16));
    legacy_codes(b->qs, 0u, m, v);
  }
};

template <>
struct Quad<GgmlType::kQ5_0> : Factored<true> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float* sc,
                                              float* off) {
    const auto* b = reinterpret_cast<const BlockQ5_0*>(row) + u;
    *sc = half_bits_to_float(__ldg(&b->d));
    *off = -16.0f * *sc;
    legacy_codes(b->qs, load_u32_a2(b->qh), m, v);
  }
};

template <>
struct Quad<GgmlType::kQ5_1> : Factored<true> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float* sc,
                                              float* off) {
    const auto* b = reinterpret_cast<const BlockQ5_1*>(row) + u;
    const uint32_t dm = load_u32_a2(reinterpret_cast<const uint8_t*>(b));
    *sc = half_bits_to_float(static_cast<uint16_t>(dm & 0xffffu));
    *off = half_bits_to_float(static_cast<uint16_t>(dm >> 16));
    legacy_codes(b->qs, load_u32_a2(b->qh), m, v);
  }
};

template <>
struct Quad<GgmlType::kQ8_0> : Factored<false> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, int m, float (&v)[kQuad], float* sc,
                                              float*) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + u;
    *sc = half_bits_to_float(__ldg(&b->d));
    // Signed bytes + 128 are 0..255: 2^23 + q + 128 minus (2^23 + 128).
    const uint32_t q = load_u32_a2(reinterpret_cast<const uint8_t*>(b->qs) + 4 * m) ^ 0x80808080u;
#pragma unroll
    for (int i = 0; i < kQuad; ++i) {
      v[i] = __int_as_float(static_cast<int>(__byte_perm(q, 0x4b000000u, 0x7650u + static_cast<unsigned>(i)))) -
             8388736.0f;
    }
  }
};

// Row row0 + r of a block's R rows as blocks of type Block (a row past the
// end repeats row0: computed, never stored).
template <typename Block>
__device__ __forceinline__ const Block* row_of(const uint8_t* w, size_t stride, int64_t rows, int64_t row0, int r) {
  return reinterpret_cast<const Block*>(w + (row0 + r < rows ? row0 + r : row0) * stride);
}

// Token t's 4 activations at quad m from element `first` (a unit's start;
// zeros for t >= n_tokens),
// and their sum (the offset terms' factor).
__device__ __forceinline__ float4 x_quad(const float* __restrict__ x, int64_t cols, int t, int n_tokens, int64_t first,
                                         int m) {
  return t < n_tokens ? __ldg(reinterpret_cast<const float4*>(x + t * cols + first) + m)
                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ float quad_sum(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}

// The dot of 4 weight codes with 4 activations, in a fixed order.
__device__ __forceinline__ float dot4(const float (&v)[kQuad], float4 x) {
  float dot = v[0] * x.x;
  dot = fmaf(v[1], x.y, dot);
  dot = fmaf(v[2], x.z, dot);
  return fmaf(v[3], x.w, dot);
}

// Each warp's sums per (row, token) into partial (inline in each kernel: as
// a function taking acc, it changed the GEMV's register allocation and cost
// Q6_K a third of its speed).
#define HEARTH_GEMV_WARP_SUMS(acc, partial, lane, warp) \
  _Pragma("unroll") for (int r = 0; r < R; ++r) {       \
    _Pragma("unroll") for (int t = 0; t < NT; ++t) {    \
      const float s = warp_sum(acc[r][t]);              \
      if (lane == 0) partial[warp][r][t] = s;           \
    }                                                   \
  }

// The end of both kernels, after HEARTH_GEMV_WARP_SUMS: the 4 warps' sums
// added in a fixed order, the epilogue terms, the store.
template <int NT, int R>
__device__ __forceinline__ void store_rows(const float (&partial)[kWarpsPerBlock][R][NT], int64_t row0, int64_t rows,
                                           int n_tokens, const float* __restrict__ bias, const float* residual,
                                           float* y) {
  __syncthreads();
  if (threadIdx.x < R * NT) {
    const int r = static_cast<int>(threadIdx.x) / NT, t = static_cast<int>(threadIdx.x) % NT;
    const int64_t row = row0 + r;
    if (row < rows && t < n_tokens) {
      float s = (partial[0][r][t] + partial[1][r][t]) + (partial[2][r][t] + partial[3][r][t]);
      if (bias != nullptr) s += bias[row];
      if (residual != nullptr) s += residual[t * rows + row];
      y[t * rows + row] = s;
    }
  }
}

// Q4_K / Q5_K: lane l of warp w takes elements 4 (l % 8) .. + 3 of all 8
// sub-blocks of the super-blocks 4 w + l / 8 + 16 k: it decodes the
// super-block's 8 scales and mins once, and each qs word it loads holds 4
// codes of sub-block 2c (low nibbles) and 4 of sub-block 2c + 1 (high). Per
// sub-block: the codes dotted with the activations, then the scale and the
// min applied once, as in gemv_kernel. Fixed per-row order (super-blocks in
// k order, sub-blocks 0..7), whatever R and the token count.
template <GgmlType T, int NT, int R>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    gemv_k_kernel(const uint8_t* __restrict__ w, size_t stride, int64_t rows, int64_t units,
                  const float* __restrict__ x, int n_tokens, const float* __restrict__ bias, const float* residual,
                  float* y) {
  constexpr bool kFiveBit = T == GgmlType::kQ5_K;
  using Block = std::conditional_t<kFiveBit, BlockQ5_K, BlockQ4_K>;
  __shared__ float partial[kWarpsPerBlock][R][NT];
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const int m = lane % 8;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * R;
  const Block* wr[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wr[r] = row_of<Block>(w, stride, rows, row0, r);
  const int64_t cols = units * kUnit, supers = units / 8;
  float acc[R][NT] = {};
  for (int64_t sb = 4 * warp + lane / 8; sb < supers; sb += 4 * kWarpsPerBlock) {
    float sc[R][8], off[R][8];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const Block* b = wr[r] + sb;
      const uint32_t dd = load_u32(reinterpret_cast<const uint8_t*>(b));
      const float d = half_bits_to_float(static_cast<uint16_t>(dd & 0xffffu));
      const float dmin = half_bits_to_float(static_cast<uint16_t>(dd >> 16));
      const uint32_t s0 = load_u32(b->scales), s1 = load_u32(b->scales + 4), s2 = load_u32(b->scales + 8);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        uint32_t isc = 0, imn = 0;
        k_scale_min_words(s0, s1, s2, j, &isc, &imn);
        sc[r][j] = __fmul_rn(d, static_cast<float>(isc));
        off[r][j] = -__fmul_rn(dmin, static_cast<float>(imn));
      }
    }
    uint32_t qh[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      qh[r] = kFiveBit ? load_u32(reinterpret_cast<const uint8_t*>(wr[r] + sb) + offsetof(BlockQ5_K, qh) + 4 * m) : 0u;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      float4 xv[2][NT];
      float xs[2][NT];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          xv[h][t] = x_quad(x, cols, t, n_tokens, sb * 256 + (2 * c + h) * kUnit, m);
          xs[h][t] = quad_sum(xv[h][t]);
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const uint32_t q = load_u32(wr[r][sb].qs + 32 * c + 4 * m);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = 2 * c + h;
          uint32_t codes = (q >> (4 * h)) & 0x0f0f0f0fu;
          if constexpr (kFiveBit) codes |= ((qh[r] >> j) & 0x01010101u) << 4;
          float v[kQuad];
#pragma unroll
          for (int i = 0; i < kQuad; ++i) v[i] = byte_float(codes, i);
#pragma unroll
          for (int t = 0; t < NT; ++t) {
            acc[r][t] = fmaf(sc[r][j], dot4(v, xv[h][t]), acc[r][t]);
            acc[r][t] = fmaf(off[r][j], xs[h][t], acc[r][t]);
          }
        }
      }
    }
  }
  HEARTH_GEMV_WARP_SUMS(acc, partial, lane, warp)
  store_rows<NT, R>(partial, row0, rows, n_tokens, bias, residual, y);
}

// Q6_K, laid out like gemv_k_kernel: lane l of warp w takes elements
// 4 (l % 8) .. + 3 of all 8 units of the super-blocks 4 w + l / 8 + 16 k.
// Unit 4 h + k, element e: low bits nibble k / 2 of ql[64 h + 32 (k & 1) + e],
// high bits 2k.. of qh[32 h + e], scale d scales[8 h + 2 k + e / 16]; so one
// ql word serves units 4h + p and 4h + p + 2 (low and high nibbles) and one
// qh word all four units of a half. Per unit: the 6-bit codes dotted with the
// activations, then d sc and -32 d sc applied once.
template <int NT, int R>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    gemv_q6k_kernel(const uint8_t* __restrict__ w, size_t stride, int64_t rows, int64_t units,
                    const float* __restrict__ x, int n_tokens, const float* __restrict__ bias, const float* residual,
                    float* y) {
  __shared__ float partial[kWarpsPerBlock][R][NT];
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const int m = lane % 8;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * R;
  const BlockQ6_K* wr[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wr[r] = row_of<BlockQ6_K>(w, stride, rows, row0, r);
  const int64_t cols = units * kUnit, supers = units / 8;
  float acc[R][NT] = {};
  for (int64_t sb = 4 * warp + lane / 8; sb < supers; sb += 4 * kWarpsPerBlock) {
    float sc[R][8];  // d * scale of this lane's 4 elements in unit j
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const BlockQ6_K* b = wr[r] + sb;
      const float d = half_bits_to_float(__ldg(&b->d));
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int h = j / 4, k = j % 4;
        sc[r][j] = __fmul_rn(d, static_cast<float>(__ldg(b->scales + 8 * h + 2 * k + m / 4)));
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t qh[R];
#pragma unroll
      for (int r = 0; r < R; ++r) qh[r] = load_u32_a2(wr[r][sb].qh + 32 * h + 4 * m);
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        float4 xv[2][NT];
        float xs[2][NT];
#pragma unroll
        for (int n = 0; n < 2; ++n) {  // units 4h + p (n = 0) and 4h + p + 2 (n = 1)
#pragma unroll
          for (int t = 0; t < NT; ++t) {
            xv[n][t] = x_quad(x, cols, t, n_tokens, sb * 256 + (4 * h + p + 2 * n) * kUnit, m);
            xs[n][t] = quad_sum(xv[n][t]);
          }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const uint32_t ql = load_u32_a2(wr[r][sb].ql + 64 * h + 32 * p + 4 * m);
#pragma unroll
          for (int n = 0; n < 2; ++n) {
            const int k = p + 2 * n, j = 4 * h + k;
            const uint32_t codes = ((ql >> (4 * n)) & 0x0f0f0f0fu) | (((qh[r] >> (2 * k)) & 0x03030303u) << 4);
            float v[kQuad];
#pragma unroll
            for (int i = 0; i < kQuad; ++i) v[i] = byte_float(codes, i);
            const float off = -32.0f * sc[r][j];
#pragma unroll
            for (int t = 0; t < NT; ++t) {
              acc[r][t] = fmaf(sc[r][j], dot4(v, xv[n][t]), acc[r][t]);
              acc[r][t] = fmaf(off, xs[n][t], acc[r][t]);
            }
          }
        }
      }
    }
  }
  HEARTH_GEMV_WARP_SUMS(acc, partial, lane, warp)
  store_rows<NT, R>(partial, row0, rows, n_tokens, bias, residual, y);
}

// The matrices of one gemv_kernel launch: up to kMaxFused of one type and
// width, each taking the blocks from first_block on (R rows a block), so a
// block's rows are all of one matrix. q, k and v (gate and up) of one token
// as one launch; a plain gemv is a set of one.
struct SetMat : q8::Q8Mat {
  int64_t first_block;
};

struct GemvSet {
  SetMat m[kMaxFused];
  int count;
  int64_t blocks;  // row blocks of all the matrices; a launch's blocks take them grid-stride
  int64_t units;
  const float* x;
  int n_tokens;
  const float* norm_w;  // kNorm: the RMSNorm's weight [cols]
  float eps;
  float* norm_out;  // kNorm: block 0 writes the normed row here
};

constexpr int kNormPer = 8;  // float4s per virtual thread of the fused norm: rows <= 8192

// kNorm: the block's input row is rmsnorm(x) * norm_w, computed into shared
// memory with rmsnorm4_kernel's arithmetic (rmsnorm.cu) so that every bit
// equals rmsnorm then this GEMV: that kernel's 256 threads are emulated by
// this block's 128, thread t playing t and t + 128 (each holds the float4s
// vt + 256 k, summed in k order), their warp sums placed as block_sum places
// them (virtual warp t / 32 + 4 h) and added by the same xor tree.
__device__ __forceinline__ void normed_row(const GemvSet& s, float4* xs) {
  constexpr int kBlock = kWarpsPerBlock * kWarp;
  __shared__ float scratch[2 * kWarpsPerBlock];
  const int t = static_cast<int>(threadIdx.x), lane = t % kWarp, warp = t / kWarp;
  const int64_t dim4 = s.units * (kUnit / 4);
  const float4* xv = reinterpret_cast<const float4*>(s.x);
  float4 v[2][kNormPer];
  float sum[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int k = 0; k < kNormPer; ++k) {
      const int64_t i = t + h * kBlock + static_cast<int64_t>(k) * 2 * kBlock;
      v[h][k] = i < dim4 ? __ldg(xv + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    sum[h] = 0.0f;
#pragma unroll
    for (int k = 0; k < kNormPer; ++k)
      sum[h] += (v[h][k].x * v[h][k].x + v[h][k].y * v[h][k].y) + (v[h][k].z * v[h][k].z + v[h][k].w * v[h][k].w);
  }
  const float w0 = warp_sum(sum[0]), w1 = warp_sum(sum[1]);
  if (lane == 0) scratch[warp] = w0, scratch[warp + kWarpsPerBlock] = w1;
  __syncthreads();
  const float total = warp_sum(lane < 2 * kWarpsPerBlock ? scratch[lane] : 0.0f);
  const float scale = 1.0f / sqrtf(total / static_cast<float>(4 * dim4) + s.eps);
  const float4* wr = reinterpret_cast<const float4*>(s.norm_w);
  float4* out = blockIdx.x == 0 ? reinterpret_cast<float4*>(s.norm_out) : nullptr;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int k = 0; k < kNormPer; ++k) {
      const int64_t i = t + h * kBlock + static_cast<int64_t>(k) * 2 * kBlock;
      if (i >= dim4) continue;
      const float4 g = __ldg(wr + i);
      float4 o = make_float4(__fmul_rn(v[h][k].x, scale), __fmul_rn(v[h][k].y, scale), __fmul_rn(v[h][k].z, scale),
                             __fmul_rn(v[h][k].w, scale));
      o = make_float4(__fmul_rn(o.x, g.x), __fmul_rn(o.y, g.y), __fmul_rn(o.z, g.z), __fmul_rn(o.w, g.w));
      xs[i] = o;
      if (out != nullptr) out[i] = o;
    }
  }
  __syncthreads();
}

// NT: tokens the kernel is compiled for (n_tokens <= NT; the others read as
// zero and are not stored). R: rows per block. kNorm (NT == 1): the input
// row is normed first (normed_row; dynamic shared memory of cols floats).
// Launched with programmatic serialization where pdl_on(): waits before it
// reads x or a residual. Row blocks grid-stride (one each where the grid
// covers them all; the fused norm's grid is smaller, so each block norms
// once for several row blocks).
template <GgmlType T, int NT, int R, bool kNorm>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp) gemv_kernel(const GemvSet s) {
  extern __shared__ float4 normed[];
  __shared__ float partial[kWarpsPerBlock][R][NT];
  static_assert(!kNorm || NT == 1, "the fused norm is for one token");
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const int m = lane % 8;
  const int64_t units = s.units, cols = units * kUnit;
  pdl_wait();
  if constexpr (kNorm) normed_row(s, normed);
  for (int64_t blk = blockIdx.x; blk < s.blocks; blk += gridDim.x) {
    SetMat mat = s.m[0];
    if (s.count > 1 && blk >= s.m[1].first_block) mat = s.m[1];
    if (s.count > 2 && blk >= s.m[2].first_block) mat = s.m[2];
    const int64_t row0 = (blk - mat.first_block) * R;
    const uint8_t* wr[R];
#pragma unroll
    for (int r = 0; r < R; ++r) wr[r] = row_of<uint8_t>(mat.w, mat.stride, mat.rows, row0, r);
    float acc[R][NT] = {};
#pragma unroll 2
    for (int64_t u = 4 * warp + lane / 8; u < units; u += kUnitsPerStep) {
      float4 xv[NT];
      float xs[NT];  // the 4 activations' sum, for the offset term
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        xv[t] = kNorm ? normed[8 * u + m] : x_quad(s.x, cols, t, s.n_tokens, u * kUnit, m);
        xs[t] = quad_sum(xv[t]);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v[kQuad], sc = 1.0f, off = 0.0f;
        Quad<T>::load(wr[r], u, m, v, &sc, &off);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          if constexpr (Quad<T>::kFactored) {
            acc[r][t] = fmaf(sc, dot4(v, xv[t]), acc[r][t]);
            if constexpr (Quad<T>::kOffset) acc[r][t] = fmaf(off, xs[t], acc[r][t]);
          } else {
            acc[r][t] = fmaf(v[0], xv[t].x, acc[r][t]);
            acc[r][t] = fmaf(v[1], xv[t].y, acc[r][t]);
            acc[r][t] = fmaf(v[2], xv[t].z, acc[r][t]);
            acc[r][t] = fmaf(v[3], xv[t].w, acc[r][t]);
          }
        }
      }
    }
    HEARTH_GEMV_WARP_SUMS(acc, partial, lane, warp)
    store_rows<NT, R>(partial, row0, mat.rows, s.n_tokens, mat.bias, mat.residual, mat.y);
    if constexpr (!kNorm) break;                      // the grid covers the row blocks: one each
    if (blk + gridDim.x < s.blocks) __syncthreads();  // partial is read before the next row block writes it
  }
}

#undef HEARTH_GEMV_WARP_SUMS

struct GemvArgs {
  cudaStream_t stream;
  const uint8_t* w;
  size_t stride;
  int64_t rows, units;
  const float* x;
  int n_tokens;
  GemvEpilogue epilogue;
  float* y;
};

// gemv_kernel's launch over a set (blocks of R rows per matrix, in order).
template <GgmlType T, int NT, int R, bool kNorm>
cudaError_t launch_set(GemvSet s, cudaStream_t stream) {
  s.blocks = 0;
  for (int i = 0; i < s.count; ++i) {
    s.m[i].first_block = s.blocks;
    s.blocks += (s.m[i].rows + R - 1) / R;
  }
  const size_t smem = kNorm ? static_cast<size_t>(s.units) * kUnit * sizeof(float) : 0;
  // The fused norm: 4 blocks an SM (the register limit is 5), each norming once.
  const int64_t slots = kNorm && device_limits().sms > 0 ? int64_t{4} * device_limits().sms : s.blocks;
  const auto grid = static_cast<unsigned>(std::min(s.blocks, slots));
  return launch_pdl(gemv_kernel<T, NT, R, kNorm>, dim3(grid), kWarpsPerBlock * kWarp, smem, stream, s);
}

template <GgmlType T, int NT, int R>
cudaError_t launch(const GemvArgs& a) {
  const dim3 grid(static_cast<unsigned>((a.rows + R - 1) / R));
  if constexpr (T == GgmlType::kQ4_K || T == GgmlType::kQ5_K) {
    gemv_k_kernel<T, NT, R><<<grid, kWarpsPerBlock * kWarp, 0, a.stream>>>(
        a.w, a.stride, a.rows, a.units, a.x, a.n_tokens, a.epilogue.bias, a.epilogue.residual, a.y);
    return cudaSuccess;
  } else if constexpr (T == GgmlType::kQ6_K) {
    gemv_q6k_kernel<NT, R><<<grid, kWarpsPerBlock * kWarp, 0, a.stream>>>(
        a.w, a.stride, a.rows, a.units, a.x, a.n_tokens, a.epilogue.bias, a.epilogue.residual, a.y);
    return cudaSuccess;
  } else {
    GemvSet s{};
    s.m[0] = SetMat{{a.w, a.stride, a.rows, a.epilogue.bias, a.epilogue.residual, a.y}, 0};
    s.count = 1;
    s.units = a.units;
    s.x = a.x;
    s.n_tokens = a.n_tokens;
    return launch_set<T, NT, R, false>(s, a.stream);
  }
}

// Tokens rounded up to 1, 2, 4 or 8; more rows per block for fewer tokens
// (each activation load serves R rows; the accumulators are R x NT).
template <GgmlType T>
struct GemvLaunch {
  static void run(const GemvArgs& a, cudaError_t* err) {
    if (a.n_tokens == 1) {
      *err = launch<T, 1, 4>(a);
    } else if (a.n_tokens == 2) {
      *err = launch<T, 2, 4>(a);
    } else if (a.n_tokens <= 4) {
      *err = launch<T, 4, 2>(a);
    } else {
      *err = launch < T, 8, T == GgmlType::kQ6_K ? 1 : 2 > (a);  // Q6_K's kernel would spill at 2 rows
    }
  }
};

// One token over a set of gemv_kernel's types, the norm fused or not: the
// same instantiation a lone one-token gemv takes (NT 1, R 4), so every row
// is bit-identical to its own gemv.
template <GgmlType T>
struct SetLaunch {
  static void run(const GemvSet& s, bool norm, cudaStream_t stream, cudaError_t* err) {
    if constexpr (T == GgmlType::kQ4_K || T == GgmlType::kQ5_K || T == GgmlType::kQ6_K) {
      static_cast<void>(s), static_cast<void>(norm), static_cast<void>(stream);  // set_applies excludes them
      *err = cudaErrorInvalidValue;
    } else {
      *err = norm ? launch_set<T, 1, 4, true>(s, stream) : launch_set<T, 1, 4, false>(s, stream);
    }
  }
};

GemvActivations environment_activations() {
  // q8 by default: multi-token products run on rows rounded the same way
  // (quantize_q8.h, done by the CUDA backend), so a sequence's logits no
  // longer depend on how many others share its step beyond f32/f16 rounding.
  // HEARTH_CUDA_GEMV=f32 selects the f32 path (A/B runs).
  const char* v = std::getenv("HEARTH_CUDA_GEMV");
  return v != nullptr && std::strcmp(v, "f32") == 0 ? GemvActivations::kF32 : GemvActivations::kQ8;
}

std::atomic<GemvActivations>& process_activations() {
  static std::atomic<GemvActivations> a{environment_activations()};
  return a;
}

}  // namespace

GemvActivations default_gemv_activations() {
  return process_activations().load(std::memory_order_relaxed);
}

void set_default_gemv_activations(GemvActivations a) {
  process_activations().store(a == GemvActivations::kProcessDefault ? environment_activations() : a,
                              std::memory_order_relaxed);
}

namespace {

GemvActivations activations_of(const GemvOptions& options) {
  return options.activations == GemvActivations::kProcessDefault ? default_gemv_activations() : options.activations;
}

}  // namespace

Status gemv(const GemvOptions& options, const DeviceMatrix& w, const float* x, int n_tokens, float* y,
            cudaStream_t stream, const GemvEpilogue& epilogue) {
  HEARTH_CUDA_TRY(validate_matrix(w));
  HEARTH_CUDA_REQUIRE(n_tokens >= 1 && n_tokens <= kMaxGemvTokens);
  HEARTH_CUDA_REQUIRE(x != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(x) % 16 == 0);
  if (activations_of(options) == GemvActivations::kQ8 && gemv_q8_applies(w, n_tokens)) {
    const GemvOutput out{&w, y, epilogue};
    return gemv_q8(&out, 1, x, stream, options);
  }
  const GemvArgs args{
      stream, static_cast<const uint8_t*>(w.data), w.row_stride, w.rows, w.cols / kUnit, x, n_tokens, epilogue, y};
  cudaError_t e = cudaSuccess;
  dispatch_type<GemvLaunch>(w.type, args, &e);
  HEARTH_CUDA_CHECK(e);
  return check_launch("gemv_kernel");
}

namespace {

bool aligned16(const void* p) {
  return p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// gemv_kernel's types (the K-quants have kernels of their own).
bool set_type(GgmlType t) {
  return t == GgmlType::kF32 || t == GgmlType::kF16 || t == GgmlType::kBF16 || t == GgmlType::kQ4_0 ||
         t == GgmlType::kQ4_1 || t == GgmlType::kQ5_0 || t == GgmlType::kQ5_1 || t == GgmlType::kQ8_0;
}

// One token where every matrix would take gemv_kernel on its own (one type
// and width, not the 8-bit path): they run as one gemv_kernel launch, each
// row bit-identical to its own gemv (widths the 8-bit path does not take:
// SmolLM2's 576, Qwen2.5-0.5B's 896, Gemma 3 1B's 1152).
// HEARTH_CUDA_GEMV_SET=0: one gemv per matrix there, the norm its own launch (A/B runs).
bool set_on() {
  static const bool on = [] {
    const char* v = std::getenv("HEARTH_CUDA_GEMV_SET");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

bool set_applies(const GemvOptions& options, const GemvOutput* outs, int n, const float* x, int n_tokens) {
  if (!set_on() || outs == nullptr || n < 1 || n > kMaxFused || n_tokens != 1 || !aligned16(x)) return false;
  const bool q8 = activations_of(options) == GemvActivations::kQ8;
  for (int i = 0; i < n; ++i) {
    if (outs[i].w == nullptr || outs[i].y == nullptr || !validate_matrix(*outs[i].w).ok()) return false;
    const DeviceMatrix& w = *outs[i].w;
    if (!set_type(w.type) || w.type != outs[0].w->type || w.cols != outs[0].w->cols) return false;
    if (q8 && gemv_q8_applies(w, 1)) return false;
  }
  return true;
}

Status run_set(const GemvOutput* outs, int n, const float* x, const GemvInputNorm* norm, cudaStream_t stream) {
  GemvSet s{};
  for (int i = 0; i < n; ++i) {
    const DeviceMatrix& w = *outs[i].w;
    const q8::Q8Mat mat{static_cast<const uint8_t*>(w.data), w.row_stride, w.rows, outs[i].epilogue.bias,
                        outs[i].epilogue.residual,           outs[i].y};
    s.m[i] = SetMat{mat, 0};
  }
  s.count = n;
  s.units = outs[0].w->cols / kUnit;
  s.x = x;
  s.n_tokens = 1;
  if (norm != nullptr) {
    s.norm_w = norm->weight;
    s.eps = norm->eps;
    s.norm_out = norm->out;
  }
  cudaError_t e = cudaSuccess;
  dispatch_type<SetLaunch>(outs[0].w->type, s, norm != nullptr, stream, &e);
  HEARTH_CUDA_CHECK(e);
  return check_launch("gemv_kernel (set)");
}

}  // namespace

Status gemv_fused(const GemvOptions& options, const GemvOutput* outs, int n, const float* x, int n_tokens,
                  cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(outs != nullptr && n >= 1 && n <= kMaxFused);
  bool one_launch = n > 1 && n_tokens == 1 && x != nullptr && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  one_launch = one_launch && activations_of(options) == GemvActivations::kQ8;
  for (int i = 0; i < n; ++i) {
    HEARTH_CUDA_REQUIRE(outs[i].w != nullptr && outs[i].y != nullptr);
    HEARTH_CUDA_TRY(validate_matrix(*outs[i].w));
    one_launch = one_launch && gemv_q8_applies(*outs[i].w, 1) && outs[i].w->type == outs[0].w->type &&
                 outs[i].w->cols == outs[0].w->cols;
  }
  if (one_launch) return gemv_q8(outs, n, x, stream, options);
  if (n > 1 && set_applies(options, outs, n, x, n_tokens)) return run_set(outs, n, x, nullptr, stream);
  for (int i = 0; i < n; ++i)
    HEARTH_CUDA_TRY(gemv(options, *outs[i].w, x, n_tokens, outs[i].y, stream, outs[i].epilogue));
  return {};
}

namespace {

// One token through gemv_q8 in one launch: the fused prologues' condition.
bool q8_one_launch(const GemvOptions& options, const GemvOutput* outs, int n, int n_tokens) {
  if (outs == nullptr || n < 1 || n > kMaxFused || n_tokens != 1) return false;
  if (activations_of(options) != GemvActivations::kQ8) return false;
  for (int i = 0; i < n; ++i) {
    if (outs[i].w == nullptr || outs[i].y == nullptr || !validate_matrix(*outs[i].w).ok()) return false;
    if (!gemv_q8_applies(*outs[i].w, 1) || outs[i].w->type != outs[0].w->type || outs[i].w->cols != outs[0].w->cols) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool gemv_norm_fuses(const GemvOptions& options, const GemvOutput* outs, int n, const float* x, int n_tokens,
                     const GemvInputNorm& norm) {
  return aligned16(x) && aligned16(norm.weight) && aligned16(norm.out) && norm.out != x &&
         (q8_one_launch(options, outs, n, n_tokens) || set_applies(options, outs, n, x, n_tokens)) &&
         outs[0].w->cols <= 4 * 2 * kWarpsPerBlock * kWarp * kNormPer;
}

bool gemv_glu_fuses(const GemvOptions& options, const GemvOutput* outs, int n, const float* gate, int n_tokens,
                    const GemvInputGlu& glu) {
  return aligned16(gate) && aligned16(glu.up) &&
         (glu.kind == GluInputKind::kSwiGlu || glu.kind == GluInputKind::kGeGluTanh) &&
         q8_one_launch(options, outs, n, n_tokens);
}

Status gemv_fused_glu(const GemvOptions& options, const GemvOutput* outs, int n, const float* gate,
                      const GemvInputGlu& glu, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(gemv_glu_fuses(options, outs, n, gate, 1, glu));
  return gemv_q8(outs, n, gate, stream, options, nullptr, &glu);
}

Status gemv_fused_norm(const GemvOptions& options, const GemvOutput* outs, int n, const float* x,
                       const GemvInputNorm& norm, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(gemv_norm_fuses(options, outs, n, x, 1, norm));
  if (!q8_one_launch(options, outs, n, 1)) return run_set(outs, n, x, &norm, stream);
  return gemv_q8(outs, n, x, stream, options, &norm);
}

Status gemv(const DeviceMatrix& w, const float* x, int n_tokens, float* y, cudaStream_t stream,
            const GemvEpilogue& epilogue) {
  return gemv(GemvOptions{}, w, x, n_tokens, y, stream, epilogue);
}

}  // namespace hearth::kernels::cuda
