// The q8 GEMV with direct loads: each lane reads its chunks straight into
// registers with 16-byte loads (and, by default, the next item before the
// current one is computed). The arithmetic: gemv_q8_common.cuh.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "kernels/cuda/gemv_q8_common.cuh"

namespace hearth::kernels::cuda::q8 {
namespace {

constexpr bool kPrefetchDefault = true;  // measured: see docs/perf-notes.md

// Resident blocks the kernel is compiled for: kPf (the next item loaded
// before the current one is used: twice the item's registers) leaves that to
// the compiler (0: no bound); without it, 3 blocks (85 registers) where the
// item is small.
template <GgmlType T, bool kPf>
constexpr int min_blocks() {
  return kPf ? 0 : Q8Type<T>::kItemRegs <= 40 ? 3 : 2;
}

template <GgmlType T, int L, bool kPf>
__global__ void __launch_bounds__(kThreads, min_blocks<T, kPf>())
    gemv_q8_kernel(const Q8Mats mats, int chunks, const Q8Input in) {
  using Tr = Q8Type<T>;
  using Item = typename Tr::Item;
  constexpr int kRowsPerGroup = kThreads / L;
  extern __shared__ uint4 smem[];
  uint32_t* xq = reinterpret_cast<uint32_t*>(smem);
  float2* ds = reinterpret_cast<float2*>(xq + chunks * kXWordsPerChunk);
  int2* hs = reinterpret_cast<int2*>(ds + chunks * kDsPerChunk);  // Tr::kHalves only
  const int j = static_cast<int>(threadIdx.x) % L, sub = static_cast<int>(threadIdx.x) / L;
  const int64_t groups = (mats.rows + kRowsPerGroup - 1) / kRowsPerGroup;
  // Item (group g, chunk c) of this thread's row; clamped into the matrices
  // (a clamped item is loaded, never used).
  const auto item = [&](int64_t g, int c) {
    int64_t row = min(g * kRowsPerGroup + sub, mats.rows - 1);
    const Q8Mat& m = mats.m[matrix_of(mats, &row)];
    return Tr::load(m.w + static_cast<size_t>(row) * m.stride, min(c, chunks - 1), chunks, false);
  };
  int64_t g = blockIdx.x;
  Item cur = item(g, j);
  pdl_wait();  // x (and the residual) come from the kernels before; the weights never change
  quantize_input<Tr::kHalves>(in, chunks, xq, ds, hs);
  __syncthreads();
  for (; g < groups; g += gridDim.x) {
    float acc = 0.0f;
    for (int c = j; c < chunks; c += L) {
      if constexpr (kPf) {
        const bool last = c + L >= chunks;
        const int64_t ng = last ? (g + gridDim.x < groups ? g + gridDim.x : g) : g;
        const Item nxt = item(ng, last ? j : c + L);
        acc += Tr::dot(cur, xq + c * kXWordsPerChunk, ds + c * kDsPerChunk, hs + c * kDsPerChunk);
        cur = nxt;
      } else {
        if (c != j || g != blockIdx.x) cur = item(g, c);
        acc += Tr::dot(cur, xq + c * kXWordsPerChunk, ds + c * kDsPerChunk, hs + c * kDsPerChunk);
      }
    }
#pragma unroll
    for (int off = L / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    int64_t row = g * kRowsPerGroup + sub;
    if (j == 0 && row < mats.rows) {
      const Q8Mat& m = mats.m[matrix_of(mats, &row)];
      if (m.bias != nullptr) acc += m.bias[row];
      if (m.residual != nullptr) acc += m.residual[row];
      m.y[row] = acc;
    }
  }
}

template <GgmlType T, int L, bool kPf>
Status launch_q8(const Q8Mats& mats, int64_t cols, const Q8Input& x, cudaStream_t stream, int blocks_per_sm) {
  const auto kernel = gemv_q8_kernel<T, L, kPf>;
  const int chunks = static_cast<int>(cols / kChunkElems);
  const size_t smem = static_cast<size_t>(chunks) * (kSmemPerChunk + (Q8Type<T>::kHalves ? 8 * kDsPerChunk : 0));
  // Resident blocks per multiprocessor for this shared size, cached (a stale
  // pair from a racing thread only changes the grid size, never the result).
  static std::atomic<long long> cache{-1};
  long long c = cache.load(std::memory_order_relaxed);
  int fit = 0;
  if (c >= 0 && static_cast<size_t>(c >> 8) == smem) {
    fit = static_cast<int>(c & 0xff);
  } else {
    HEARTH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, smem));
    cache.store(static_cast<long long>(smem) << 8 | std::min(fit, 255), std::memory_order_relaxed);
  }
  static std::atomic<int> sm_count{0};
  int sms = sm_count.load(std::memory_order_relaxed);
  if (sms == 0) {
    int dev = 0;
    HEARTH_CUDA_CHECK(cudaGetDevice(&dev));
    HEARTH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    sm_count.store(sms, std::memory_order_relaxed);
  }
  const int per_sm = std::max(1, blocks_per_sm > 0 ? std::min(blocks_per_sm, fit) : fit);
  const int64_t groups = (mats.rows + kThreads / L - 1) / (kThreads / L);
  // As few blocks as give every block the same number of groups as the
  // fullest one would have anyway: fewer activation prologues, same finish.
  const int64_t per_block = (groups + static_cast<int64_t>(per_sm) * sms - 1) / (static_cast<int64_t>(per_sm) * sms);
  const auto grid = static_cast<unsigned>((groups + per_block - 1) / per_block);
  HEARTH_CUDA_CHECK(launch_pdl(kernel, dim3(grid), kThreads, smem, stream, mats, chunks, x));
  return check_launch("gemv_q8_kernel");
}

// Prefetch: the option, else HEARTH_CUDA_GEMV_PREFETCH (0 / 1, a tuning
// knob for A/B runs), else the default.
bool prefetch_on(const GemvOptions& opt) {
  if (opt.q8_prefetch >= 0) return opt.q8_prefetch != 0;
  static const int env = [] {
    const char* v = std::getenv("HEARTH_CUDA_GEMV_PREFETCH");
    return v == nullptr ? -1 : std::atoi(v);
  }();
  return env >= 0 ? env != 0 : kPrefetchDefault;
}

}  // namespace

Status launch_direct(const Q8Mats& mats, GgmlType type, int64_t cols, const Q8Input& x, cudaStream_t stream,
                     const GemvOptions& opt) {
  const bool pf = prefetch_on(opt);
  const int b = opt.q8_blocks_per_sm;
  return with_q8_type(type, [&](auto t) {
    return with_lanes(lanes_for(opt, cols / kChunkElems), [&](auto l) {
      constexpr GgmlType T = std::decay_t<decltype(t)>::value;
      constexpr int L = std::decay_t<decltype(l)>::value;
      return pf ? launch_q8<T, L, true>(mats, cols, x, stream, b) : launch_q8<T, L, false>(mats, cols, x, stream, b);
    });
  });
}

}  // namespace hearth::kernels::cuda::q8
