// The q8 GEMV with its weights staged through shared memory (sm_90+): a
// block's row groups arrive by bulk copies on mbarriers, the lanes read their
// chunks from shared memory; the plan that sizes the stages. The arithmetic:
// gemv_q8_common.cuh (bit-identical to the direct loads).
#include <algorithm>
#include <cstdlib>

#include "kernels/cuda/bulk_copy.cuh"
#include "kernels/cuda/gemv_q8_common.cuh"

namespace hearth::kernels::cuda::q8 {
namespace {

// Staged weights (sm_90+). The direct kernel (gemv_q8_direct.cu) reads each lane's chunk
// with 16-byte loads 144 bytes apart across the warp (Q4_0): one warp load
// touches 32 sectors for 16 bytes each, and every byte costs an L1 request
// of its own. Here a block's row group (kRowsPerGroup rows, contiguous in
// the matrix) arrives in shared memory by bulk copies (cp.async.bulk, one
// thread issues them, completion counted in bytes on an mbarrier), `stages`
// groups in flight per block; the lanes then read their chunks from shared
// memory (lanes 144 bytes apart: 16-byte reads conflict-free) and do exactly
// the direct kernel's arithmetic in its order, so the result is
// bit-identical. A group's rows sit in its stage at their matrix's stride,
// the pieces of several matrices (a group may straddle q, k and v) back to
// back. Shared layout: kMaxStages mbarriers, the stages, then x's codes and
// (d, s) as in the direct kernel.
constexpr int kMaxStages = 8;
constexpr int kBarBytes = 8 * kMaxStages;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Rows [r0, r0 + kRowsPerGroup) of the concatenated matrices (clipped to
// mats.rows) into the stage at dst, completing on bar. One thread.
template <GgmlType T, int kRowsPerGroup>
__device__ __forceinline__ void issue_group(const Q8Mats& mats, int chunks, int64_t r0, uint32_t dst, uint32_t bar) {
  const int64_t r1 = min(r0 + kRowsPerGroup, mats.rows);
  // The row's bytes rounded up to 16 (Q6_K's 210-byte blocks; <= the stride,
  // and just covers the last chunk's 16-byte window).
  const uint32_t row_bytes = (static_cast<uint32_t>(chunks) * Q8Type<T>::kChunkBytes + 15u) & ~15u;
  uint32_t total = 0;
  int64_t start = 0;
#pragma unroll
  for (int k = 0; k < kMaxFused; ++k) {
    if (k < mats.count) {
      const int64_t end = start + mats.m[k].rows, a = max(r0, start), b = min(r1, end);
      if (a < b) total += static_cast<uint32_t>((b - a - 1) * mats.m[k].stride) + row_bytes;
      start = end;
    }
  }
  mbar_expect_tx(bar, total);
  fence_proxy_async();  // the stage's earlier generic reads first
  start = 0;
  uint32_t off = 0;
#pragma unroll
  for (int k = 0; k < kMaxFused; ++k) {
    if (k < mats.count) {
      const Q8Mat& m = mats.m[k];
      const int64_t end = start + m.rows, a = max(r0, start), b = min(r1, end);
      if (a < b) {
        bulk_copy(dst + off, m.w + static_cast<size_t>(a - start) * m.stride,
                  static_cast<uint32_t>((b - a - 1) * m.stride) + row_bytes, bar);
        off += static_cast<uint32_t>((b - a) * m.stride);
      }
      start = end;
    }
  }
}

// Byte offset of concatenated row r in the stage of the group starting at r0
// (the layout issue_group writes), and its matrix (k) and row in it (*r).
__device__ __forceinline__ uint32_t stage_offset(const Q8Mats& mats, int64_t r0, int64_t* r, int* k_out) {
  uint32_t off = 0;
  int64_t start = 0;
  int k = 0;
#pragma unroll
  for (int i = 0; i + 1 < kMaxFused; ++i) {
    if (k + 1 < mats.count && *r >= start + mats.m[k].rows) {
      const int64_t end = start + mats.m[k].rows;
      if (end > r0) off += static_cast<uint32_t>((end - max(r0, start)) * mats.m[k].stride);
      start = end;
      ++k;
    }
  }
  off += static_cast<uint32_t>((*r - max(r0, start)) * mats.m[k].stride);
  *r -= start;
  *k_out = k;
  return off;
}
#endif

template <GgmlType T, int L>
__global__ void __launch_bounds__(kThreads, 1)
    gemv_q8_staged_kernel(const Q8Mats mats, int chunks, const Q8Input in, int stages, uint32_t stage_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Tr = Q8Type<T>;
  using Item = typename Tr::Item;
  constexpr int kRowsPerGroup = kThreads / L;
  extern __shared__ uint4 smem[];
  uint8_t* const base = reinterpret_cast<uint8_t*>(smem);
  uint8_t* const stage0 = base + kBarBytes;
  uint32_t* xq = reinterpret_cast<uint32_t*>(stage0 + static_cast<size_t>(stages) * stage_bytes);
  float2* ds = reinterpret_cast<float2*>(xq + chunks * kXWordsPerChunk);
  int2* hs = reinterpret_cast<int2*>(ds + chunks * kDsPerChunk);  // Tr::kHalves only
  const uint32_t bars = shared_addr(base), stages_u32 = shared_addr(stage0);
  const int j = static_cast<int>(threadIdx.x) % L, sub = static_cast<int>(threadIdx.x) / L;
  const int64_t groups = (mats.rows + kRowsPerGroup - 1) / kRowsPerGroup;
  // This block's groups: blockIdx.x, + gridDim.x, ... (the grid is at most `groups`).
  const int mine = static_cast<int>((groups - blockIdx.x + gridDim.x - 1) / gridDim.x);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(bars + 8 * s);
    mbar_init_fence();
    for (int k = 0; k < stages && k < mine; ++k) {
      const int64_t g = blockIdx.x + static_cast<int64_t>(k) * gridDim.x;
      issue_group<T, kRowsPerGroup>(mats, chunks, g * kRowsPerGroup, stages_u32 + k * stage_bytes, bars + 8 * k);
    }
  }
  pdl_wait();  // x (and the residual) come from the kernels before; the weights never change
  quantize_input<Tr::kHalves>(in, chunks, xq, ds, hs);
  __syncthreads();  // x's codes, and the barriers' initialization
  for (int k = 0; k < mine; ++k) {
    const int s = k % stages;
    const int64_t g = blockIdx.x + static_cast<int64_t>(k) * gridDim.x, r0 = g * kRowsPerGroup;
    int64_t row = r0 + sub;
    const bool live = row < mats.rows;
    int mk = 0;
    const uint32_t off = live ? stage_offset(mats, r0, &row, &mk) : 0u;
    mbar_wait(bars + 8 * s, static_cast<uint32_t>(k / stages) & 1u);
    float acc = 0.0f;
    if (live) {
      const uint8_t* r = stage0 + static_cast<size_t>(s) * stage_bytes + off;
      for (int c = j; c < chunks; c += L) {
        const Item it = Tr::load_shared(r, c);
        acc += Tr::dot(it, xq + c * kXWordsPerChunk, ds + c * kDsPerChunk, hs + c * kDsPerChunk);
      }
    }
#pragma unroll
    for (int o = L / 2; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (j == 0 && live) {
      const Q8Mat& m = mats.m[mk];
      if (m.bias != nullptr) acc += m.bias[row];
      if (m.residual != nullptr) acc += m.residual[row];
      m.y[row] = acc;
    }
    __syncthreads();  // every lane is done with stage s
    if (threadIdx.x == 0 && k + stages < mine) {
      issue_group<T, kRowsPerGroup>(mats, chunks, (g + static_cast<int64_t>(stages) * gridDim.x) * kRowsPerGroup,
                                    stages_u32 + s * stage_bytes, bars + 8 * s);
    }
  }
#else
  // Never launched below sm_90 (launch_q8_staged checks the device first).
  static_cast<void>(mats), static_cast<void>(chunks), static_cast<void>(in), static_cast<void>(stages),
      static_cast<void>(stage_bytes);
#endif
}

// Staging: the option, else HEARTH_CUDA_GEMV_STAGED (0 off, 1 the default
// stage count, k >= 2 at most k stages), else 1.
int staged_wanted(const GemvOptions& opt) {
  static const int env = [] {
    const char* v = std::getenv("HEARTH_CUDA_GEMV_STAGED");
    return v == nullptr ? -1 : std::atoi(v);
  }();
  const int v = opt.q8_staged >= 0 ? opt.q8_staged : env >= 0 ? env : 1;
  return v <= 0 ? 0 : std::min(v, kMaxStages);
}

// Blocks per multiprocessor for the staged kernel: the option, else
// HEARTH_CUDA_GEMV_STAGED_BLOCKS (a tuning knob for A/B runs), else 1
// (measured, docs/perf-notes.md v11: 2 blocks are faster on lone 4096-wide
// matrices but not on the fused q/k/v and gate/up sets decode runs, and
// slower on the output matrix; the 8B Q4_0 decode is 306 tok/s with 1, 301
// with 2 where they fit).
int staged_blocks(const GemvOptions& opt) {
  static const int env = [] {
    const char* v = std::getenv("HEARTH_CUDA_GEMV_STAGED_BLOCKS");
    return v == nullptr ? 0 : std::max(0, std::atoi(v));
  }();
  return opt.q8_blocks_per_sm > 0 ? opt.q8_blocks_per_sm : env > 0 ? env : 1;
}

// Measured (docs/perf-notes.md, v11): about 72 KB of weights in flight per
// multiprocessor streams best (2 stages of a 16-row group of 4096-wide Q4_0:
// 128256 x 4096 at 93% of the copy bandwidth; 5 stages: 78%); the default
// stage count aims at this, never below 2.
constexpr size_t kStagedInFlight = size_t{80} << 10;

// Stages of one row group each, beside x's codes (halves: Q6_K's code sums
// too), at per_sm blocks per multiprocessor: want == 1 the default count
// (kStagedInFlight), else at most `want`; never more than fit, none where
// fewer than 2 fit (rows too wide) or the device is older than sm_90.
StagedPlan staged_plan(const Q8Mats& mats, int chunks, int lanes, bool halves, int want, int per_sm,
                       const DeviceLimits& lim) {
  StagedPlan p;
  if (want < 1 || lim.major < 9 || per_sm < 1 || mats.rows <= 0) return p;
  size_t stride = 0;
  for (int i = 0; i < mats.count; ++i) stride = std::max(stride, mats.m[i].stride);
  const size_t sb = static_cast<size_t>(kThreads / lanes) * stride;
  const size_t xb = static_cast<size_t>(chunks) * (kSmemPerChunk + (halves ? 8 * kDsPerChunk : 0));
  const size_t cap = std::min(static_cast<size_t>(lim.smem_block), static_cast<size_t>(lim.smem_sm / per_sm) - 1024);
  if (sb == 0 || cap <= kBarBytes + xb + 2 * sb) return p;
  const size_t fit = (cap - kBarBytes - xb) / sb;
  const size_t n =
      want == 1 ? std::clamp<size_t>(kStagedInFlight / (sb * per_sm), 2, kMaxStages) : static_cast<size_t>(want);
  p.stages = static_cast<int>(std::min(n, fit));
  p.per_sm = per_sm;
  p.stage_bytes = static_cast<uint32_t>(sb);
  p.smem = kBarBytes + static_cast<size_t>(p.stages) * sb + xb;
  return p;
}

// The staged plan gemv_q8 follows for these matrices and options.
StagedPlan plan_for_options(const Q8Mats& mats, GgmlType type, int64_t cols, const GemvOptions& opt) {
  const int want = staged_wanted(opt);
  if (want == 0) return {};
  const int64_t chunks = cols / kChunkElems;
  const int lanes = lanes_for(opt, chunks) >= 32 ? 32 : lanes_for(opt, chunks) >= 16 ? 16 : 8;
  return staged_plan(mats, static_cast<int>(chunks), lanes, type == GgmlType::kQ6_K, want, staged_blocks(opt),
                     device_limits());
}

template <GgmlType T, int L>
Status launch_q8_staged(const Q8Mats& mats, int chunks, const Q8Input& x, cudaStream_t stream, const StagedPlan& plan,
                        const DeviceLimits& lim) {
  const auto kernel = gemv_q8_staged_kernel<T, L>;
  // The dynamic shared limit raised once to the device's opt-in maximum
  // (the launch's own size sets the occupancy).
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, lim.smem_block);
  HEARTH_CUDA_CHECK(opt_in);
  const int64_t groups = (mats.rows + kThreads / L - 1) / (kThreads / L);
  const int64_t slots = static_cast<int64_t>(plan.per_sm) * lim.sms;
  const int64_t per_block = (groups + slots - 1) / slots;
  const auto grid = static_cast<unsigned>((groups + per_block - 1) / per_block);
  HEARTH_CUDA_CHECK(
      launch_pdl(kernel, dim3(grid), kThreads, plan.smem, stream, mats, chunks, x, plan.stages, plan.stage_bytes));
  return check_launch("gemv_q8_staged_kernel");
}

}  // namespace

StagedPlan staged_plan_for(const Q8Mats& mats, GgmlType type, int64_t cols, const GemvOptions& opt) {
  return plan_for_options(mats, type, cols, opt);
}

Status launch_staged(const Q8Mats& mats, GgmlType type, int64_t cols, const Q8Input& x, cudaStream_t stream,
                     const GemvOptions& opt, const StagedPlan& plan) {
  const int chunks = static_cast<int>(cols / kChunkElems);
  return with_q8_type(type, [&](auto t) {
    return with_lanes(lanes_for(opt, chunks), [&](auto l) {
      return launch_q8_staged<std::decay_t<decltype(t)>::value, std::decay_t<decltype(l)>::value>(
          mats, chunks, x, stream, plan, device_limits());
    });
  });
}

}  // namespace hearth::kernels::cuda::q8
