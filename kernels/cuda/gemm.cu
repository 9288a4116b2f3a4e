#include "kernels/cuda/dequantize_f16.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/gemm.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void f32_to_f16_kernel(const float* __restrict__ src, uint16_t* __restrict__ dst, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    dst[i] = float_to_half_bits(src[i]);
  }
}

size_t align_up(size_t n) {
  return (n + 255) / 256 * 256;
}

}  // namespace

Status convert_f32_to_f16(const float* src, uint16_t* dst, int64_t n, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(src != nullptr && dst != nullptr && n >= 0);
  if (n == 0) return {};
  const auto grid = static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
  f32_to_f16_kernel<<<grid, kThreads, 0, stream>>>(src, dst, n);
  return check_launch("f32_to_f16_kernel");
}

// Row-major y[n_tokens][rows] is column-major rows x n_tokens: y = op(A) B with
// A = w seen column-major (cols x rows, lda = cols) transposed, B = x seen
// column-major (cols x n_tokens, ldb = cols).
Status gemm_f16(cublasHandle_t handle, const uint16_t* w, const uint16_t* x, float* y, int64_t rows, int64_t cols,
                int64_t n_tokens, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(handle != nullptr && w != nullptr && x != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(rows > 0 && cols > 0 && n_tokens > 0);
  HEARTH_CUDA_REQUIRE(rows <= 0x7fffffff && cols <= 0x7fffffff && n_tokens <= 0x7fffffff);
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS)
    return Status{cudaErrorUnknown, "cublasSetStream failed"};
  const float alpha = 1.0f, beta = 0.0f;
  const auto m = static_cast<int>(rows), n = static_cast<int>(n_tokens), k = static_cast<int>(cols);
  const cublasStatus_t st =
      cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w, CUDA_R_16F, k, x, CUDA_R_16F, k, &beta, y,
                   CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) return Status{cudaErrorUnknown, "cublasGemmEx failed"};
  return {};
}

size_t matmul_f16_workspace_bytes(const DeviceMatrix& w, int64_t n_tokens) {
  return align_up(static_cast<size_t>(w.rows * w.cols) * 2) + align_up(static_cast<size_t>(n_tokens * w.cols) * 2);
}

Status matmul_f16(cublasHandle_t handle, const DeviceMatrix& w, const float* x, int64_t n_tokens, float* y,
                  void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(n_tokens > 0 && x != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(workspace != nullptr && reinterpret_cast<uintptr_t>(workspace) % 256 == 0);
  if (workspace_bytes < matmul_f16_workspace_bytes(w, n_tokens)) {
    return invalid_argument("matmul_f16 workspace smaller than matmul_f16_workspace_bytes()");
  }
  auto* w16 = static_cast<uint16_t*>(workspace);
  auto* x16 = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(workspace) +
                                          align_up(static_cast<size_t>(w.rows * w.cols) * 2));
  HEARTH_CUDA_TRY(dequantize_to_f16(w, w16, stream));
  HEARTH_CUDA_TRY(convert_f32_to_f16(x, x16, n_tokens * w.cols, stream));
  return gemm_f16(handle, w16, x16, y, w.rows, w.cols, n_tokens, stream);
}

}  // namespace hearth::kernels::cuda
