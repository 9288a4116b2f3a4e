#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/gemv.h"

namespace hearth::kernels::cuda {
namespace {

constexpr int kGemvWarps = 4;  // rows per thread block, one warp per row

// One warp per output row: lane l takes units l, l + 32, ... of the row, so a
// warp's loads of one step cover 32 consecutive units (coalesced), and the
// activations are reused by every row through L1/L2. The partial dots meet in
// a shuffle reduction.
template <GgmlType T>
__global__ void __launch_bounds__(kGemvWarps* kWarp)
    gemv_kernel(const uint8_t* __restrict__ w, size_t stride, int64_t rows, int64_t units, const float* __restrict__ x,
                int n_tokens, const float* __restrict__ bias, const float* residual, float* y) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kGemvWarps + threadIdx.x / kWarp;
  if (row >= rows) return;  // whole warps leave together
  const uint8_t* wr = w + row * stride;
  const int64_t cols = units * kUnit;
  float acc[kMaxGemvTokens] = {};
  for (int64_t u = lane; u < units; u += kWarp) {
    float wv[kUnit];
    Unit<T>::load(wr, u, wv);
#pragma unroll
    for (int t = 0; t < kMaxGemvTokens; ++t) {
      if (t < n_tokens) {
        const float4* xp = reinterpret_cast<const float4*>(x + t * cols + u * kUnit);
#pragma unroll
        for (int k = 0; k < kUnit / 4; ++k) {
          const float4 v = __ldg(xp + k);
          acc[t] = fmaf(wv[4 * k], v.x, acc[t]);
          acc[t] = fmaf(wv[4 * k + 1], v.y, acc[t]);
          acc[t] = fmaf(wv[4 * k + 2], v.z, acc[t]);
          acc[t] = fmaf(wv[4 * k + 3], v.w, acc[t]);
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kMaxGemvTokens; ++t) {
    if (t < n_tokens) {
      float s = warp_sum(acc[t]);
      if (lane == 0) {
        if (bias != nullptr) s += bias[row];
        if (residual != nullptr) s += residual[t * rows + row];
        y[t * rows + row] = s;
      }
    }
  }
}

struct GemvArgs {
  dim3 grid, block;
  cudaStream_t stream;
  const uint8_t* w;
  size_t stride;
  int64_t rows, units;
  const float* x;
  int n_tokens;
  GemvEpilogue epilogue;
  float* y;
};

template <GgmlType T>
struct GemvLaunch {
  static void run(const GemvArgs& a) {
    gemv_kernel<T><<<a.grid, a.block, 0, a.stream>>>(a.w, a.stride, a.rows, a.units, a.x, a.n_tokens, a.epilogue.bias,
                                                     a.epilogue.residual, a.y);
  }
};

}  // namespace

Status gemv(const DeviceMatrix& w, const float* x, int n_tokens, float* y, cudaStream_t stream,
            const GemvEpilogue& epilogue) {
  HEARTH_CUDA_TRY(validate_matrix(w));
  HEARTH_CUDA_REQUIRE(n_tokens >= 1 && n_tokens <= kMaxGemvTokens);
  HEARTH_CUDA_REQUIRE(x != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(x) % 16 == 0);
  const GemvArgs args{dim3(static_cast<unsigned>((w.rows + kGemvWarps - 1) / kGemvWarps)),
                      dim3(kGemvWarps * kWarp),
                      stream,
                      static_cast<const uint8_t*>(w.data),
                      w.row_stride,
                      w.rows,
                      w.cols / kUnit,
                      x,
                      n_tokens,
                      epilogue,
                      y};
  dispatch_type<GemvLaunch>(w.type, args);
  return check_launch("gemv_kernel");
}

}  // namespace hearth::kernels::cuda
