// mmq with f16 activations on Hopper's warpgroup mma (mmq.h, kF16Wg; sm_90a
// only, this file is compiled for no other target): the f16 kernel's stages
// and weight decode (mmq_f16.cu, mmq_f16_common.cuh), with each k16 step a
// wgmma.mma_async whose A (64 rows x 16, the decoded weights) comes from
// registers and whose B (the NT tokens x 16) is read by the tensor cores
// straight from shared memory through a matrix descriptor. mma.sync, which the
// f16 kernel issues, tops out at ~630 f16 TFLOP/s on an H100 against ~960 for
// wgmma (bench/gpu/wgmma_probe.cu, perf-notes v19), and it needs the B
// fragments loaded into registers by the threads.
//
// Work split. A block is one warpgroup (4 warps) computing 128 weight rows x
// NT tokens: two wgmma per k16 step, rows 0-63 and 64-127; warp w supplies the
// A rows 16 w .. 16 w + 15 of each (the fragment layout of mma.m16n8k16).
//
// B layout (no swizzle, K-major): a k16 step's NT x 16 halves are 8 x 8 core
// matrices of 128 contiguous bytes (8 tokens x 16 bytes), the two of a token
// group adjacent (K step 128 bytes: the descriptor's leading offset) and the
// token groups 256 bytes apart (its stride offset); checked on the device by
// the probe. Which column a k position holds follows the A registers' columns
// (HalfCodes: lane t's bytes are columns 4t .. 4t + 3 and 16 + 4t .. 16 + 4t + 3
// of a unit): in step h (0, 1) of a unit, core matrix 0 holds columns 16 h +
// {0, 1, 4, 5, 8, 9, 12, 13} and core matrix 1 16 h + {2, 3, 6, 7, 10, 11, 14,
// 15}. mmq_to_f16_wg_kernel writes each token's unit as its four 16-byte core
// rows (step 0 matrix 0, step 0 matrix 1, step 1 matrix 0, step 1 matrix 1),
// so lane l of a warp copies piece l of a token's 512 stage bytes (coalesced)
// to its core-matrix place.
//
// Pipeline per stage: the f16 kernel's (cp.async, one group a stage, 2-4 in
// flight; the scale table; one __syncthreads; the refill), then per k16 step:
// decode the A fragments into one of two register sets, fence, two wgmma,
// commit; before a set is decoded again the group that read it has completed
// (wait_group 1). All of a stage's groups complete before the next stage's
// __syncthreads, after which its buffer is refilled.
#include <cuda_fp16.h>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/mmq_args.cuh"
#include "kernels/cuda/mmq_f16_common.cuh"
#include "kernels/cuda/mmq_units.cuh"
#include "kernels/cuda/q8_chunk.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "mmq_wg.cu is compiled for sm_90a only (kernels/cuda/CMakeLists.txt)"
#endif

namespace hearth::kernels::cuda::mmq_detail {
namespace {

using mmq_units::HalfCodes;
using mmq_units::MmqType;
using mmq_units::WUnit;
using namespace mmq_f16_common;

constexpr uint32_t kCoreK = 128;  // bytes between a token group's two core matrices (K)
constexpr uint32_t kCoreN = 256;  // bytes between token groups (N)

// The shared-memory matrix descriptor of a B tile at `smem`: start address,
// leading (K) and stride (N) byte offsets, no swizzle.
__device__ __forceinline__ uint64_t b_desc(const void* smem) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<uint64_t>((addr & 0x3ffffu) >> 4) | (static_cast<uint64_t>(kCoreK >> 4) << 16) |
         (static_cast<uint64_t>(kCoreN >> 4) << 32);
}

// d (the m64 x NT accumulators of this thread: NT / 2 f32) += A (4 registers
// of f16 pairs) x B (descriptor); accumulate 0 overwrites d.
template <int NT>
__device__ __forceinline__ void wgmma_rs(float (&d)[NT / 2], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
  if constexpr (NT == 8) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %8, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, %9, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc));
  }
  if constexpr (NT == 16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %12, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
        "{%8, %9, %10, %11}, %13, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc));
  }
  if constexpr (NT == 32) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %20, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
        "%13, %14, %15}, "
        "{%16, %17, %18, %19}, %21, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc));
  }
  if constexpr (NT == 64) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %36, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
        "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %37, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc));
  }
}

__device__ __forceinline__ void wg_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// x -> f16 halves per token, scaled as mmq_to_f16_kernel does (mmq_f16.cu),
// each unit of 32 as its four core rows (see the top of the file). One block
// per token.
__global__ void mmq_to_f16_wg_kernel(const float* __restrict__ x, int64_t cols, uint32_t* __restrict__ out,
                                     float* __restrict__ scale) {
  pdl_launch_dependents();
  pdl_wait();
  const int64_t tok = blockIdx.x;
  const float4* row = reinterpret_cast<const float4*>(x + tok * cols);
  const int64_t groups = cols / 4;
  const float up = token_scale(row, groups, scale + tok);
  uint32_t* dst = out + tok * (cols / 2);
  for (int64_t i = threadIdx.x; i < groups; i += blockDim.x) {
    // Columns 4i .. 4i + 3: unit i / 8, step (i % 8) / 4, lane slot i % 4; the
    // pair 4i, 4i + 1 in core matrix 0, 4i + 2, 4i + 3 in core matrix 1.
    const float4 v = row[i];
    const __half2 lo = __floats2half2_rn(v.x * up, v.y * up), hi = __floats2half2_rn(v.z * up, v.w * up);
    const int64_t base = i / 8 * 16 + (i % 8) / 4 * 8 + i % 4;
    dst[base] = *reinterpret_cast<const uint32_t*>(&lo);
    dst[base + 4] = *reinterpret_cast<const uint32_t*>(&hi);
  }
}

template <GgmlType T, int NT>
__global__ void __launch_bounds__(kThreads, 2) mmq_wg_kernel(const MmqArgs a, int depth) {
  using Tr = MmqType<T>;
  using Hc = HalfCodes<T>;
  constexpr int kNV = Tr::kChunkBytes / 16;
  constexpr uint32_t kRow = row_bytes<T>(), kA = a_bytes<T>(), kStage = stage_bytes<T, NT>();
  constexpr uint32_t kSlice = NT * 32;  // one k16 step's B bytes
  extern __shared__ __align__(128) uint4 smem[];
  uint8_t* const stage0 = reinterpret_cast<uint8_t*>(smem);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / kWarp, lane = tid % kWarp;
  const int g = lane / 4, t = lane % 4;
  const int64_t tok0 = static_cast<int64_t>(blockIdx.x) * NT;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kF16BlockRows;
  const int s_begin = static_cast<int>(blockIdx.z) * a.stages_per_split;
  const int count = min(a.stages, s_begin + a.stages_per_split) - s_begin;
  const uint8_t* const w_src = a.w + static_cast<size_t>(min(row0 + tid, a.rows - 1)) * a.stride +
                               static_cast<size_t>(s_begin) * Tr::kChunkBytes;
  const size_t x_row = static_cast<size_t>(a.cols) * 2;
  const uint8_t* const x_src =
      a.codes + static_cast<size_t>(tok0) * x_row + static_cast<size_t>(s_begin) * kTokenBytes + 16 * lane;
  const int last_tok = static_cast<int>(min(static_cast<int64_t>(NT), a.n_tokens - tok0)) - 1;
  // Piece `lane` of a token's stage bytes: unit lane / 4, step (lane / 2) % 2, core matrix lane % 2.
  const uint32_t x_dst = (lane / 2) * kSlice + (lane % 2) * kCoreK;
  const auto issue_w = [&](int k) {
    uint8_t* const st = stage0 + (k % depth) * kStage;
    const uint8_t* const w = w_src + static_cast<size_t>(k) * Tr::kChunkBytes;
#pragma unroll
    for (int i = 0; i < kNV; ++i) cp_async16(st + tid * kRow + 16 * i, w + 16 * i);
  };
  const auto issue_x = [&](int k) {
    uint8_t* const st = stage0 + (k % depth) * kStage + kA + x_dst;
    const uint8_t* const x = x_src + static_cast<size_t>(k) * kTokenBytes;
#pragma unroll
    for (int i = 0; i < (NT + kWarps - 1) / kWarps; ++i) {
      const int tok = warp + kWarps * i;
      if (tok < NT) {
        cp_async16(st + (tok / 8) * kCoreN + (tok % 8) * 16, x + static_cast<size_t>(min(tok, last_tok)) * x_row);
      }
    }
  };
  const int lead = depth - 1;
  for (int k = 0; k < lead && k < count; ++k) issue_w(k);
  pdl_launch_dependents();
  pdl_wait();
  for (int k = 0; k < lead; ++k) {
    if (k < count) issue_x(k);
    cp_async_commit();
  }

  float acc[2][NT / 2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) acc[i][j] = 0.0f;
  }
  constexpr float kBias = 1024.0f + static_cast<float>(Hc::kOffset);
  const __half2 bias = __float2half2_rn(kBias);
  for (int k = 0; k < count; ++k) {
    const int b = k % depth;
    uint8_t* const st = stage0 + b * kStage;
    auto* const dm = reinterpret_cast<uint32_t*>(st + kA + NT * kTokenBytes);  // [unit][128 rows]: half2 (d, m)
    wait_stage(depth);
    fill_unit_table<T>(st + tid * kRow, dm, tid);
    // This thread's cp.async writes (generic proxy) before the tensor cores' reads (async proxy).
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();  // every thread's copies and scales are in; all of stage k - 1's wgmma completed
    if (k + depth - 1 < count) {
      issue_w(k + depth - 1);
      issue_x(k + depth - 1);
    }
    cp_async_commit();
    const uint64_t desc0 = b_desc(st + kA);
    uint32_t af[2][2][4];  // [register set][m64 half][fragment]
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      uint2 c[2][2];
      __half2 d[2][2], m[2][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int hl = 0; hl < 2; ++hl) {
          const int r = 64 * i + 16 * warp + g + 8 * hl;
          c[i][hl] = Hc::codes(st + r * kRow, u, t);
          const uint32_t v = dm[u * kF16BlockRows + r];
          const uint32_t dd = __byte_perm(v, 0, 0x1010), mm = __byte_perm(v, 0, 0x3232);
          d[i][hl] = *reinterpret_cast<const __half2*>(&dd);
          m[i][hl] = *reinterpret_cast<const __half2*>(&mm);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int s = 2 * u + h, set = s % 2;
        if (s >= 2) wg_wait<1>();  // the group that read this register set (step s - 2) has completed
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const uint32_t w_lo = h == 0 ? c[i][0].x : c[i][0].y, w_hi = h == 0 ? c[i][1].x : c[i][1].y;
          af[set][i][0] = code_pair<0x4140>(w_lo, bias, d[i][0], m[i][0]);
          af[set][i][1] = code_pair<0x4140>(w_hi, bias, d[i][1], m[i][1]);
          af[set][i][2] = code_pair<0x4342>(w_lo, bias, d[i][0], m[i][0]);
          af[set][i][3] = code_pair<0x4342>(w_hi, bias, d[i][1], m[i][1]);
        }
        wg_fence();
        const uint64_t desc = desc0 + ((s * kSlice) >> 4);
        wgmma_rs<NT>(acc[0], af[set][0], desc, 1);
        wgmma_rs<NT>(acc[1], af[set][1], desc, 1);
        wg_commit();
      }
    }
    wg_wait<0>();  // the stage's buffer is refilled after the next __syncthreads
  }
  const auto* scale = reinterpret_cast<const float*>(a.ds);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < NT / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t tok = tok0 + 8 * j + 2 * t + (e & 1);
        const int64_t row = row0 + 64 * i + 16 * warp + g + 8 * (e >> 1);
        if (tok < a.n_tokens) store_output(a, tok, row, acc[i][4 * j + e] * scale[tok]);
      }
    }
  }
}

template <GgmlType T, int NT>
using WgKernel = F16Launch<mmq_wg_kernel<T, NT>, stage_bytes<T, NT>()>;

}  // namespace

bool f16_wg_supported() {
  static const bool ok = [] {
    if (device_cc_major() != 9) return false;
    cudaFuncAttributes attr{};
    const bool loads = cudaFuncGetAttributes(&attr, mmq_wg_kernel<GgmlType::kQ4_0, 64>) == cudaSuccess;
    static_cast<void>(cudaGetLastError());
    return loads;
  }();
  return ok;
}

int f16_wg_resident(GgmlType t, int nt) {
  return f16_wg_supported() ? resident_of<WgKernel>(t, nt) : 0;
}

Status launch_f16_wg(GgmlType t, int nt, const MmqArgs& a, dim3 grid, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(f16_wg_supported());
  return launch_of<WgKernel>(t, nt, a, grid, stream, "mmq_wg_kernel");
}

Status to_f16_wg(const float* x, int64_t n_tokens, int64_t cols, void* act, size_t scale_offset, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(f16_wg_supported());
  return launch_to_f16(mmq_to_f16_wg_kernel, "mmq_to_f16_wg_kernel", x, n_tokens, cols, act, scale_offset, stream);
}

}  // namespace hearth::kernels::cuda::mmq_detail
