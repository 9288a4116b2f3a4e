#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/glu.cuh"
#include "kernels/cuda/glu.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void swiglu_kernel(const float* gate, const float* up, float* out, int64_t n) {
  pdl_launch_dependents();  // the down GEMV may load its weights meanwhile
  pdl_wait();               // gate and up come from the kernel before (launched with PDL: pdl_small_on)
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    out[i] = swiglu_value(gate[i], up[i]);
  }
}

__global__ void geglu_tanh_kernel(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    out[i] = geglu_tanh_value(gate[i], up[i]);
  }
}

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
}

}  // namespace

Status swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(gate != nullptr && up != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(n >= 0);
  if (n == 0) return {};
  const auto grid = static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
  HEARTH_CUDA_CHECK(launch_with_pdl(pdl_small_on(), swiglu_kernel, dim3(grid), kThreads, 0, stream, gate, up, out, n));
  return check_launch("swiglu_kernel");
}

Status geglu_tanh(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(gate != nullptr && up != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(n >= 0);
  if (n == 0) return {};
  geglu_tanh_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, out, n);
  return check_launch("geglu_tanh_kernel");
}

}  // namespace hearth::kernels::cuda
