// quantize_dequantize_q8 against a scalar reference of the same f32
// operations (bit-exact), and its purpose: the f32 multi-token GEMV over
// rows rounded by it equals the one-token q8 GEMV of each row up to f32
// summation order. Outputs are poisoned with NaN beforehand (DeviceBuffer).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/quantize_q8.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

// Per 32 values: d = amax / 127, q = rint(x * (127 / amax)), out = q * d.
std::vector<float> reference(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t u = 0; u < x.size() / 32; ++u) {
    float amax = 0.0f;
    for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[32 * u + i]));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (size_t i = 0; i < 32; ++i) {
      // Through an int, as the kernel does: a code 0 is +0 even for a negative value.
      const int q = static_cast<int>(std::nearbyint(x[32 * u + i] * id));
      out[32 * u + i] = static_cast<float>(q) * (amax / 127.0f);
    }
  }
  return out;
}

TEST(CudaQuantizeQ8, MatchesScalarReferenceBitForBit) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(91);
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t rows = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const int64_t cols = 32 * std::uniform_int_distribution<int64_t>(1, 200)(rng);
    std::vector<float> x = random_floats(rng, rows * cols, trial % 2 == 0 ? 1.0f : 1e-3f);
    std::fill(x.begin(), x.begin() + 32, 0.0f);  // an all-zero unit: codes 0, never NaN
    DeviceBuffer<float> dx(x), dy(x.size());
    ASSERT_CUDA_OK(quantize_dequantize_q8(dx.get(), rows, cols, dy.get(), nullptr));
    const std::vector<float> y = dy.download(), ref = reference(x);
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(std::memcmp(&y[i], &ref[i], sizeof(float)), 0) << "element " << i << ": " << y[i] << " vs " << ref[i];
    }
  }
}

TEST(CudaQuantizeQ8, InPlaceAndBadArguments) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(92);
  const std::vector<float> x = random_floats(rng, 3 * 256);
  DeviceBuffer<float> d(x);
  ASSERT_CUDA_OK(quantize_dequantize_q8(d.get(), 3, 256, d.get(), nullptr));
  const std::vector<float> y = d.download(), ref = reference(x);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], ref[i]) << "element " << i;
  EXPECT_FALSE(quantize_dequantize_q8(d.get(), 3, 250, d.get(), nullptr).ok());  // not whole units
}

// A batch's rows rounded first, then the f32 GEMV of all of them, against
// the q8 GEMV of each row alone: within 2e-6 of sum |w xhat| (both sum the
// same products in f32, in other orders).
TEST(CudaQuantizeQ8, RoundedBatchEqualsOneTokenQ8Gemv) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(93);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
    SCOPED_TRACE(type_traits(type)->name);
    const int64_t rows = 300, cols = 2048, n = 5;
    const HostMatrix m = make_matrix(rng, type, rows, cols);
    DeviceBuffer<uint8_t> dw(m.bytes);
    const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
    const std::vector<float> x = random_floats(rng, n * cols);
    DeviceBuffer<float> dx(x), dxq(x.size()), batch(static_cast<size_t>(n * rows));
    ASSERT_CUDA_OK(quantize_dequantize_q8(dx.get(), n, cols, dxq.get(), nullptr));
    GemvOptions f32;
    f32.activations = GemvActivations::kF32;
    ASSERT_CUDA_OK(gemv(f32, dm, dxq.get(), static_cast<int>(n), batch.get(), nullptr));
    const std::vector<float> yb = batch.download(), xq = dxq.download();
    GemvOptions q8;
    q8.activations = GemvActivations::kQ8;
    for (int64_t t = 0; t < n; ++t) {
      DeviceBuffer<float> one(static_cast<size_t>(rows));
      ASSERT_CUDA_OK(gemv(q8, dm, dx.get() + t * cols, 1, one.get(), nullptr));
      const std::vector<float> ys = one.download();
      for (int64_t r = 0; r < rows; ++r) {
        double mag = 0.0;
        for (int64_t c = 0; c < cols; ++c)
          mag += std::fabs(static_cast<double>(m.values[r * cols + c]) * xq[t * cols + c]);
        ASSERT_LE(std::fabs(yb[t * rows + r] - ys[r]), 2e-6 * mag + 1e-6) << "token " << t << " row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
