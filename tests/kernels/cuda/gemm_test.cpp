// Prefill matmul (dequantize to f16 + cuBLAS, f32 accumulation) against a
// double-precision product of the f16-rounded weights and activations.
#include <gtest/gtest.h>

#include <cublas_v2.h>

#include <cmath>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cuda/gemm.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

float round_f16(float v) {
  return fp16_to_f32(f32_to_fp16(v));
}

// Tolerance: |y - ref| <= 1e-4 * sum_c |w x| (f32 accumulation, any split-K).
void check_matmul(cublasHandle_t handle, std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols,
                  int64_t n_tokens) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols
                                  << " tokens=" << n_tokens);
  const HostMatrix m = make_matrix(rng, type, rows, cols);
  const std::vector<float> x = random_floats(rng, n_tokens * cols);
  DeviceBuffer<uint8_t> dw(m.bytes);
  DeviceBuffer<float> dx(x), dy(static_cast<size_t>(n_tokens * rows));
  const DeviceMatrix dm{type, dw.get(), rows, cols, m.stride};
  const size_t ws_bytes = matmul_f16_workspace_bytes(dm, n_tokens);
  DeviceBuffer<uint8_t> ws(ws_bytes);
  ASSERT_CUDA_OK(matmul_f16(handle, dm, dx.get(), n_tokens, dy.get(), ws.get(), ws_bytes, nullptr));
  const std::vector<float> y = dy.download();
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0.0, mag = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const double p = static_cast<double>(round_f16(m.values[r * cols + c])) * round_f16(x[t * cols + c]);
        s += p;
        mag += std::fabs(p);
      }
      const float got = y[static_cast<size_t>(t * rows + r)];
      ASSERT_TRUE(std::isfinite(got)) << "t=" << t << " r=" << r;
      ASSERT_LE(std::fabs(got - s), 1e-4 * mag + 1e-6) << "t=" << t << " r=" << r;
    }
  }
}

TEST(CudaGemm, DequantF16CublasMatchesReference) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::mt19937 rng(11);
  check_matmul(handle, rng, GgmlType::kQ4_K, 64, 256, 1);
  check_matmul(handle, rng, GgmlType::kQ4_0, 300, 1024, 7);
  check_matmul(handle, rng, GgmlType::kQ6_K, 129, 2048, 64);
  check_matmul(handle, rng, GgmlType::kF32, 96, 512, 130);
  check_matmul(handle, rng, GgmlType::kQ8_0, 1024, 1024, 33);
  cublasDestroy(handle);
}

TEST(CudaGemm, RejectsSmallWorkspace) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<uint8_t> w(64 * 34 * 8), ws(256);
  DeviceBuffer<float> x(256 * 4), y(64 * 4);
  const DeviceMatrix dm{GgmlType::kQ8_0, w.get(), 64, 256, row_bytes(GgmlType::kQ8_0, 256)};
  EXPECT_EQ(matmul_f16(handle, dm, x.get(), 4, y.get(), ws.get(), 256, nullptr).code, cudaErrorInvalidValue);
  cublasDestroy(handle);
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
