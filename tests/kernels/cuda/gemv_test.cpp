// Decode GEMV with f32 activations (GemvActivations::kF32, the precise path)
// against the CPU dequantization dotted in double, every type, random shapes
// and batch sizes; outputs poisoned with NaN beforehand. The 8-bit path has
// its own test (gemv_q8_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cuda/gemv.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

// Reference y[t][r] and the magnitude sum_c |w x| that bounds its f32 rounding error.
void reference(const HostMatrix& m, const std::vector<float>& x, int n_tokens, std::vector<double>* y,
               std::vector<double>* mag) {
  y->assign(static_cast<size_t>(n_tokens * m.rows), 0.0);
  mag->assign(y->size(), 0.0);
  for (int t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < m.rows; ++r) {
      double s = 0.0, a = 0.0;
      for (int64_t c = 0; c < m.cols; ++c) {
        const double p = static_cast<double>(m.values[r * m.cols + c]) * x[t * m.cols + c];
        s += p;
        a += std::fabs(p);
      }
      (*y)[t * m.rows + r] = s;
      (*mag)[t * m.rows + r] = a;
    }
  }
}

// Tolerance: |y - ref| <= 2e-5 * sum_c |w x| (f32 accumulation of <= 4096
// terms in chains of <= 130; a wrong element would cost ~|w x|, about
// 2.5e-4 of that sum here). Bias and residual are added exactly after.
void check_gemv(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, int n_tokens, size_t pad, bool epilogue) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols
                                  << " tokens=" << n_tokens << " pad=" << pad << " epilogue=" << epilogue);
  const HostMatrix m = make_matrix(rng, type, rows, cols, pad);
  const std::vector<float> x = random_floats(rng, n_tokens * cols);
  const std::vector<float> bias = random_floats(rng, rows);
  const std::vector<float> resid = random_floats(rng, n_tokens * rows);
  DeviceBuffer<uint8_t> dw(m.bytes);
  DeviceBuffer<float> dx(x), dbias(bias), dy(static_cast<size_t>(n_tokens * rows));
  GemvEpilogue ep;
  if (epilogue) {
    dy.upload(resid);  // the residual is the output buffer itself (aliasing allowed)
    ep.bias = dbias.get();
    ep.residual = dy.get();
  }
  const DeviceMatrix dm{type, dw.get(), rows, cols, m.stride};
  GemvOptions f32;
  f32.activations = GemvActivations::kF32;
  ASSERT_CUDA_OK(gemv(f32, dm, dx.get(), n_tokens, dy.get(), nullptr, ep));
  const std::vector<float> y = dy.download();
  std::vector<double> ref, mag;
  reference(m, x, n_tokens, &ref, &mag);
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    double want = ref[i];
    if (epilogue) want += static_cast<double>(bias[i % static_cast<size_t>(rows)]) + resid[i];
    ASSERT_TRUE(std::isfinite(y[i])) << "element " << i << " unwritten or not finite";
    const double err = std::fabs(y[i] - want) / (mag[i] + 1e-30);
    worst = std::max(worst, err);
    ASSERT_LE(std::fabs(y[i] - want), 2e-5 * mag[i] + 1e-5) << "element " << i;
  }
  testing::Test::RecordProperty("worst_rel_to_abs_sum", std::to_string(worst));
}

TEST(CudaGemv, EveryTypeRandomShapes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(1234);
  for (GgmlType type : all_cuda_types()) {
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 300)(rng);
      const int64_t cols = 256 * std::uniform_int_distribution<int64_t>(1, 12)(rng);
      const int n_tokens = std::uniform_int_distribution<int>(1, kMaxGemvTokens)(rng);
      check_gemv(rng, type, rows, cols, n_tokens, trial == 1 ? 32 : 0, trial == 2);
    }
  }
}

TEST(CudaGemv, LegacyTypesOddBlockCounts) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(77);
  // cols = 32 * odd: rows of 18/20/22/34-byte blocks start at 2-byte aligned offsets only.
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0}) {
    for (int64_t cols : {32, 96, 1056}) check_gemv(rng, type, 67, cols, 3, 0, false);
  }
}

TEST(CudaGemv, LargeShapesAllBatchSizes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(99);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kF16}) {
    for (int n_tokens : {1, 2, 5, 8}) check_gemv(rng, type, 1024, 4096, n_tokens, 0, false);
  }
}

TEST(CudaGemv, RejectsBadArguments) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> w(4096);
  DeviceBuffer<float> x(256 * 9), y(64 * 9);
  const DeviceMatrix good{GgmlType::kQ8_0, w.get(), 8, 256, row_bytes(GgmlType::kQ8_0, 256)};
  EXPECT_EQ(gemv(good, x.get(), 0, y.get(), nullptr).code, cudaErrorInvalidValue);
  EXPECT_EQ(gemv(good, x.get(), 9, y.get(), nullptr).code, cudaErrorInvalidValue);
  DeviceMatrix bad = good;
  bad.cols = 48;
  EXPECT_EQ(gemv(bad, x.get(), 1, y.get(), nullptr).code, cudaErrorInvalidValue);
  bad = good;
  bad.type = GgmlType::kQ8_K;
  EXPECT_EQ(gemv(bad, x.get(), 1, y.get(), nullptr).code, cudaErrorInvalidValue);
  bad = good;
  bad.row_stride = 100;
  EXPECT_EQ(gemv(bad, x.get(), 1, y.get(), nullptr).code, cudaErrorInvalidValue);
  // Q4_K rows are read as aligned words: an even stride that is not a
  // multiple of 4 is refused, whole blocks (plus 4) are fine.
  const DeviceMatrix k4{GgmlType::kQ4_K, w.get(), 2, 256, row_bytes(GgmlType::kQ4_K, 256) + 2};
  EXPECT_EQ(gemv(k4, x.get(), 1, y.get(), nullptr).code, cudaErrorInvalidValue);
  DeviceMatrix k4_ok = k4;
  k4_ok.row_stride += 2;
  ASSERT_CUDA_OK(gemv(k4_ok, x.get(), 1, y.get(), nullptr));
  ASSERT_CUDA_OK(gemv(good, x.get(), 1, y.get(), nullptr));
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
