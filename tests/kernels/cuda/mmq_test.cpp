// mmq (int8 tensor-core products of several tokens, mmq.h) against a scalar
// reference: the CPU-dequantized weights dotted in double with activations
// quantized on the host the kernel's way; every type it takes, random shapes
// and token counts (every token tile, partial tiles and rows, odd chunk
// counts), with and without split-K and the bias/residual epilogue; and its
// agreement with the one-token q8 GEMV. Outputs are poisoned with NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/mmq.h"
#include "q8_reference.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

const std::vector<GgmlType>& mmq_types() {
  static const std::vector<GgmlType> t = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                          GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K};
  return t;
}

bool have_mma() {
  int dev = 0, major = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 8;
}

// y[t][r] of W times x's rows quantized (double), and sum |w xhat| per output.
struct Ref {
  std::vector<double> y, mag;
};

Ref reference(const HostMatrix& m, const std::vector<float>& x, int64_t n) {
  Ref ref;
  for (int64_t t = 0; t < n; ++t) {
    const std::vector<float> row(x.begin() + t * m.cols, x.begin() + (t + 1) * m.cols);
    const QuantX qx = quantize_x(row);
    for (int64_t r = 0; r < m.rows; ++r) {
      double y = 0.0, mag = 0.0;
      for (int64_t c = 0; c < m.cols; ++c) {
        const double v = m.values[r * m.cols + c] * (qx.d[c / 32] * qx.q[c]);
        y += v;
        mag += std::fabs(v);
      }
      ref.y.push_back(y), ref.mag.push_back(mag);
    }
  }
  return ref;
}

// Runs mmq (quantize + product); split: give it scratch for split-K.
std::vector<float> run_mmq(const HostMatrix& m, const std::vector<float>& x, int64_t n, bool split,
                           const std::vector<float>* bias, const std::vector<float>* resid) {
  DeviceBuffer<uint8_t> dw(m.bytes);
  DeviceBuffer<float> dx(x), dy(static_cast<size_t>(n * m.rows));
  DeviceBuffer<uint8_t> act(mmq_act_bytes(n, m.cols));
  const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
  const size_t scratch_bytes = split ? mmq_scratch_bytes(dm, n) : 0;
  DeviceBuffer<uint8_t> scratch(scratch_bytes);
  DeviceBuffer<float> dbias(bias != nullptr ? *bias : std::vector<float>(1));
  GemvEpilogue ep;
  if (bias != nullptr) {
    dy.upload(*resid);  // the residual is the output itself
    ep.bias = dbias.get();
    ep.residual = dy.get();
  }
  EXPECT_TRUE(mmq_applies(dm));
  EXPECT_TRUE(mmq_quantize(dx.get(), n, m.cols, act.get(), nullptr).ok());
  const Status st = mmq(dm, act.get(), n, dy.get(), ep, split ? scratch.get() : nullptr, scratch_bytes, nullptr);
  EXPECT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return dy.download();
}

void check_mmq(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, int64_t n, bool split, bool epilogue) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols << " n=" << n
                                  << " split=" << split << " epilogue=" << epilogue);
  const HostMatrix m = make_matrix(rng, type, rows, cols);
  const std::vector<float> x = random_floats(rng, n * cols);
  const std::vector<float> bias = random_floats(rng, rows), resid = random_floats(rng, n * rows);
  const std::vector<float> y = run_mmq(m, x, n, split, epilogue ? &bias : nullptr, epilogue ? &resid : nullptr);
  const Ref ref = reference(m, x, n);
  for (int64_t i = 0; i < n * rows; ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "output " << i << " unwritten or not finite";
    const double extra = epilogue ? static_cast<double>(bias[i % rows]) + resid[i] : 0.0;
    ASSERT_LE(std::fabs(y[i] - extra - ref.y[i]), 2e-5 * ref.mag[i] + 1e-5)
        << "token " << i / rows << " row " << i % rows;
  }
}

TEST(CudaMmq, EveryTypeRandomShapes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  std::mt19937 rng(2020);
  const int64_t tokens[] = {2, 5, 8, 13, 16, 31, 40, 64, 67};
  for (GgmlType type : mmq_types()) {
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 300)(rng);
      const int64_t cols = 256 * std::uniform_int_distribution<int64_t>(1, 9)(rng);  // odd chunk counts too
      const int64_t n = tokens[std::uniform_int_distribution<int>(0, 8)(rng)];
      check_mmq(rng, type, rows, cols, n, trial % 2 == 0, trial == 1);
    }
  }
}

// Large enough for several row tiles, token tiles of 64 and splits.
TEST(CudaMmq, LlamaShapesWithSplits) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  std::mt19937 rng(7);
  check_mmq(rng, GgmlType::kQ4_0, 256, 4096, 16, true, true);
  check_mmq(rng, GgmlType::kQ4_K, 200, 3584, 130, true, false);
  check_mmq(rng, GgmlType::kQ8_0, 130, 2048, 64, false, true);
}

// A token's row is the one-token q8 GEMV's up to f32 rounding: mmq of a
// batch against gemv (kQ8) of each token alone.
TEST(CudaMmq, AgreesWithTheOneTokenGemv) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  std::mt19937 rng(11);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_K}) {
    const int64_t rows = 320, cols = 1536, n = 12;
    const HostMatrix m = make_matrix(rng, type, rows, cols);
    const std::vector<float> x = random_floats(rng, n * cols);
    const std::vector<float> batch = run_mmq(m, x, n, true, nullptr, nullptr);
    DeviceBuffer<uint8_t> dw(m.bytes);
    const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
    GemvOptions opt;
    opt.activations = GemvActivations::kQ8;
    const Ref ref = reference(m, x, n);
    for (int64_t t = 0; t < n; ++t) {
      DeviceBuffer<float> dx(std::vector<float>(x.begin() + t * cols, x.begin() + (t + 1) * cols));
      DeviceBuffer<float> dy(static_cast<size_t>(rows));
      ASSERT_CUDA_OK(gemv(opt, dm, dx.get(), 1, dy.get(), nullptr));
      const std::vector<float> alone = dy.download();
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_LE(std::fabs(static_cast<double>(alone[r]) - batch[t * rows + r]), 4e-5 * ref.mag[t * rows + r] + 1e-5)
            << type_traits(type)->name << " token " << t << " row " << r;
      }
    }
  }
}

TEST(CudaMmq, WhereItApplies) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  DeviceBuffer<uint8_t> w(1 << 16);
  const DeviceMatrix q4{GgmlType::kQ4_0, w.get(), 4, 512, row_bytes(GgmlType::kQ4_0, 512)};
  EXPECT_TRUE(mmq_applies(q4));
  DeviceMatrix odd = q4;
  odd.cols = 544;  // not whole chunks of 256
  odd.row_stride = row_bytes(GgmlType::kQ4_0, 544);
  EXPECT_FALSE(mmq_applies(odd));
  DeviceMatrix q6 = q4;
  q6.type = GgmlType::kQ6_K;
  q6.cols = 2048;
  q6.row_stride = row_bytes(GgmlType::kQ6_K, 2048);
  EXPECT_FALSE(mmq_applies(q6));  // Q6_K stays on the f16 / f32 paths
  DeviceMatrix unaligned = q4;
  unaligned.row_stride += 2;
  EXPECT_FALSE(mmq_applies(unaligned));
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
