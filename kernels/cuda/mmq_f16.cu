// mmq with f16 activations (mmq.h, kF16): the weights stream through shared
// memory as stored, the f16 tensor cores multiply (sm_80 and later).
//
// Work split. A block of 4 warps computes 128 weight rows x NT tokens over a
// range of 256-column stages (one stored chunk per row); each warp owns 32
// rows (two m16 tiles) and all NT tokens (NT / 8 n8 tiles), so every weight
// is turned into f16 once per block and each A fragment feeds NT / 4 mma.
//
// Pipeline. A stage's bytes (the block's 128 row chunks as stored, padded to
// a conflict-free stride, and the NT tokens' 512 bytes of f16 activations)
// arrive by 16-byte cp.async copies, one commit group per stage, `depth`
// stages in flight (the plan picks the most, up to 4, with which two blocks
// fit per multiprocessor). Each thread copies its own row's chunk, and lane
// l of warp w piece l of tokens w, w + 4, ...: no address arithmetic beyond
// a stride per stage. (Bulk copies, one per row chunk, were tried first and
// measured the same, docs/perf-notes.md v18; these run on sm_80 too.) Per
// stage: wait for this thread's group;
// each thread turns its row's 8 units into (d, m) half pairs (MmqType::unit's,
// rounded to f16) in the stage's scale table; one __syncthreads; the refill of
// the stage before; then per unit each lane decodes its A fragments from the
// stored bytes (HalfCodes: byte permute into 1024 + code, subtract 1024 +
// offset: exact; times d plus m: one fused rounding) and runs 4 x NT / 8
// mma.m16n8k16 (f32 accumulation in the tensor cores).
//
// Activations. mmq_to_f16_kernel scales each token by a power of two (its
// largest magnitude into [128, 256): exact, no f16 overflow) and writes each
// unit of 32 in "pair order" (groups of 4 values 0, 4, 1, 5, 2, 6, 3, 7):
// lane t's 16 bytes of a unit are columns 4t .. 4t + 3 and 16 + 4t .. 16 +
// 4t + 3, the same columns as its A registers (k 2t, 2t + 1, 2t + 8, 2t + 9
// of two mma: which column is which k does not matter as long as A and B
// agree). Odd tokens' units are stored pairwise swapped (unit U at U ^ 1), so
// the 8 lanes of a quarter warp (tokens g, g + 1) read 8 distinct 16-byte
// bank groups with the tokens' rows packed 512 bytes apart.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <cuda_fp16.h>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/mmq_args.cuh"
#include "kernels/cuda/mmq_f16_common.cuh"
#include "kernels/cuda/mmq_units.cuh"
#include "kernels/cuda/q8_chunk.cuh"

namespace hearth::kernels::cuda::mmq_detail {
namespace {

using mmq_units::HalfCodes;
using mmq_units::MmqType;
using mmq_units::WUnit;
using namespace mmq_f16_common;

// x -> f16 halves per token: scaled by 2^(8 - e) where amax = f 2^e, f in
// [0.5, 1) (the largest magnitude lands in [128, 256), exactly), in pair
// order within each unit, odd tokens' units pairwise swapped; scale[t] =
// 2^(e - 8) undoes it. One block per token.
__global__ void mmq_to_f16_kernel(const float* __restrict__ x, int64_t cols, uint2* __restrict__ out,
                                  float* __restrict__ scale) {
  pdl_launch_dependents();
  pdl_wait();
  const int64_t tok = blockIdx.x;
  const float4* row = reinterpret_cast<const float4*>(x + tok * cols);
  const int64_t groups = cols / 4;
  const float up = token_scale(row, groups, scale + tok);
  uint2* dst = out + tok * groups;
  const int64_t swap = tok & 1;
  for (int64_t i = threadIdx.x; i < groups; i += blockDim.x) {
    const float4 v = row[i];
    const int ng = static_cast<int>(i % 8);  // natural group of the unit
    const __half2 lo = __floats2half2_rn(v.x * up, v.y * up), hi = __floats2half2_rn(v.z * up, v.w * up);
    dst[(i / 8 ^ swap) * 8 + 2 * (ng % 4) + ng / 4] =
        make_uint2(*reinterpret_cast<const uint32_t*>(&lo), *reinterpret_cast<const uint32_t*>(&hi));
  }
}

template <GgmlType T, int NT>
__global__ void __launch_bounds__(kThreads, 2) mmq_f16_kernel(const MmqArgs a, int depth) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using Tr = MmqType<T>;
  using Hc = HalfCodes<T>;
  constexpr int kNV = Tr::kChunkBytes / 16;
  constexpr int kTiles = NT / 8;
  constexpr uint32_t kRow = row_bytes<T>(), kA = a_bytes<T>(), kStage = stage_bytes<T, NT>();
  extern __shared__ uint4 smem[];
  uint8_t* const stage0 = reinterpret_cast<uint8_t*>(smem);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / kWarp, lane = tid % kWarp;
  const int g = lane / 4, t = lane % 4;
  const int64_t tok0 = static_cast<int64_t>(blockIdx.x) * NT;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kF16BlockRows;
  const int s_begin = static_cast<int>(blockIdx.z) * a.stages_per_split;
  const int count = min(a.stages, s_begin + a.stages_per_split) - s_begin;
  // This thread's copies: its row's chunk (a clamped row is computed, never
  // stored), and piece `lane` (16 bytes) of tokens warp, warp + 4, ... (a
  // clamped token likewise).
  const uint8_t* const w_src = a.w + static_cast<size_t>(min(row0 + tid, a.rows - 1)) * a.stride +
                               static_cast<size_t>(s_begin) * Tr::kChunkBytes;
  const size_t x_row = static_cast<size_t>(a.cols) * 2;
  const uint8_t* const x_src =
      a.codes + static_cast<size_t>(tok0) * x_row + static_cast<size_t>(s_begin) * kTokenBytes + 16 * lane;
  const int last_tok = static_cast<int>(min(static_cast<int64_t>(NT), a.n_tokens - tok0)) - 1;
  const auto issue_w = [&](int k) {  // stage s_begin + k's chunk into buffer k % depth
    uint8_t* const st = stage0 + (k % depth) * kStage;
    const uint8_t* const w = w_src + static_cast<size_t>(k) * Tr::kChunkBytes;
#pragma unroll
    for (int i = 0; i < kNV; ++i) cp_async16(st + tid * kRow + 16 * i, w + 16 * i);
  };
  const auto issue_x = [&](int k) {
    uint8_t* const st = stage0 + (k % depth) * kStage + kA;
    const uint8_t* const x = x_src + static_cast<size_t>(k) * kTokenBytes;
#pragma unroll
    for (int i = 0; i < NT / kWarps; ++i) {
      const int tok = warp + kWarps * i;
      cp_async16(st + tok * kTokenBytes + 16 * lane, x + static_cast<size_t>(min(tok, last_tok)) * x_row);
    }
  };
  // One group of copies per stage: depth - 1 before the loop, one per
  // iteration (empty at the end), so stage k has landed for this thread once
  // at most depth - 2 groups are in flight.
  const int lead = depth - 1;
  for (int k = 0; k < lead && k < count; ++k) issue_w(k);  // the weights never change
  pdl_launch_dependents();
  pdl_wait();  // the activations (and the residual) come from the kernels before
  for (int k = 0; k < lead; ++k) {
    if (k < count) issue_x(k);
    cp_async_commit();
  }

  float acc[2][kTiles][4];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < kTiles; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
  }
  constexpr float kBias = 1024.0f + static_cast<float>(Hc::kOffset);
  const __half2 bias = __float2half2_rn(kBias);
  for (int k = 0; k < count; ++k) {
    const int b = k % depth;
    uint8_t* const st = stage0 + b * kStage;
    auto* const dm = reinterpret_cast<uint32_t*>(st + kA + NT * kTokenBytes);  // [unit][128 rows]: half2 (d, m)
    wait_stage(depth);  // this thread's copies of stage k (its own row's chunk among them)
    fill_unit_table<T>(st + tid * kRow, dm, tid);
    __syncthreads();              // every thread's copies and scales are in; every warp is done with stage k - 1
    if (k + depth - 1 < count) {  // into stage k - 1's buffer
      issue_w(k + depth - 1);
      issue_x(k + depth - 1);
    }
    cp_async_commit();
    const uint8_t* const rows = st + warp * 32 * kRow;
    const uint8_t* const xs = st + kA + g * kTokenBytes + 16 * t;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      uint32_t a0[2][4], a1[2][4];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 16 * i + g;
        const uint2 c_lo = Hc::codes(rows + r * kRow, u, t), c_hi = Hc::codes(rows + (r + 8) * kRow, u, t);
        const uint32_t dm_lo = dm[u * kF16BlockRows + warp * 32 + r];
        const uint32_t dm_hi = dm[u * kF16BlockRows + warp * 32 + r + 8];
        const uint32_t dd_lo = __byte_perm(dm_lo, 0, 0x1010), mm_lo = __byte_perm(dm_lo, 0, 0x3232);
        const uint32_t dd_hi = __byte_perm(dm_hi, 0, 0x1010), mm_hi = __byte_perm(dm_hi, 0, 0x3232);
        const __half2 d_lo = *reinterpret_cast<const __half2*>(&dd_lo),
                      m_lo = *reinterpret_cast<const __half2*>(&mm_lo);
        const __half2 d_hi = *reinterpret_cast<const __half2*>(&dd_hi),
                      m_hi = *reinterpret_cast<const __half2*>(&mm_hi);
        a0[i][0] = code_pair<0x4140>(c_lo.x, bias, d_lo, m_lo);
        a0[i][1] = code_pair<0x4140>(c_hi.x, bias, d_hi, m_hi);
        a0[i][2] = code_pair<0x4342>(c_lo.x, bias, d_lo, m_lo);
        a0[i][3] = code_pair<0x4342>(c_hi.x, bias, d_hi, m_hi);
        a1[i][0] = code_pair<0x4140>(c_lo.y, bias, d_lo, m_lo);
        a1[i][1] = code_pair<0x4140>(c_hi.y, bias, d_hi, m_hi);
        a1[i][2] = code_pair<0x4342>(c_lo.y, bias, d_lo, m_lo);
        a1[i][3] = code_pair<0x4342>(c_hi.y, bias, d_hi, m_hi);
      }
      // Token 8 j + g's unit u: slot u ^ (g & 1) of its row (tok0 is even).
      const uint8_t* const xu = xs + 64 * (u ^ (g & 1));
#pragma unroll
      for (int j = 0; j < kTiles; ++j) {
        const uint4 bx = *reinterpret_cast<const uint4*>(xu + 8 * j * kTokenBytes);
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          mma_f16(acc[i][j], a0[i], bx.x, bx.y);
          mma_f16(acc[i][j], a1[i], bx.z, bx.w);
        }
      }
    }
  }
  const auto* scale = reinterpret_cast<const float*>(a.ds);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < kTiles; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t tok = tok0 + 8 * j + 2 * t + (e & 1);
        const int64_t row = row0 + 32 * warp + 16 * i + g + 8 * (e >> 1);
        if (tok < a.n_tokens) store_output(a, tok, row, acc[i][j][e] * scale[tok]);  // scale: only real tokens
      }
    }
  }
#else
  // Never launched below sm_80 (f16_supported()).
  static_cast<void>(a), static_cast<void>(depth);
  __trap();
#endif
}

template <GgmlType T, int NT>
using F16Kernel = F16Launch<mmq_f16_kernel<T, NT>, stage_bytes<T, NT>()>;

}  // namespace

bool f16_supported() {
  return device_cc_major() >= 8;
}

int f16_resident(GgmlType t, int nt) {
  return f16_supported() ? resident_of<F16Kernel>(t, nt) : 0;
}

Status launch_f16(GgmlType t, int nt, const MmqArgs& a, dim3 grid, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(f16_supported());
  return launch_of<F16Kernel>(t, nt, a, grid, stream, "mmq_f16_kernel");
}

Status to_f16(const float* x, int64_t n_tokens, int64_t cols, void* act, size_t scale_offset, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(f16_supported());
  return launch_to_f16(mmq_to_f16_kernel, "mmq_to_f16_kernel", x, n_tokens, cols, act, scale_offset, stream);
}

}  // namespace hearth::kernels::cuda::mmq_detail
