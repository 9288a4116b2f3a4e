#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/quantize_q8.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One warp per unit of 32 values (rows are whole units, so a unit never
// straddles rows); grid-stride over units. The same f32 operations as
// quantize_unit in gemv_q8.cu: amax is exact in any order, then one
// division, one product and a round-to-nearest-even per value.
__global__ void quantize_dequantize_q8_kernel(const float* x, int64_t units, float* out) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / kWarp);
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * (kThreads / kWarp) + threadIdx.x / kWarp; u < units; u += warps) {
    const float v = x[32 * u + lane];
    float amax = fabsf(v);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    const int q = __float2int_rn(v * id);
    out[32 * u + lane] = static_cast<float>(q) * (amax / 127.0f);
  }
}

}  // namespace

Status quantize_dequantize_q8(const float* x, int64_t rows, int64_t cols, float* out, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(rows >= 0 && cols > 0 && cols % 32 == 0);
  const int64_t units = rows * cols / 32;
  if (units == 0) return {};
  const auto grid =
      static_cast<unsigned>(std::min<int64_t>((units + kThreads / kWarp - 1) / (kThreads / kWarp), 65536));
  quantize_dequantize_q8_kernel<<<grid, kThreads, 0, stream>>>(x, units, out);
  return check_launch("quantize_dequantize_q8_kernel");
}

}  // namespace hearth::kernels::cuda
