// Element-wise and per-row kernels against the CPU kernels (kernels/cpu).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cpu/glu.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/argmax.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"

namespace hearth::kernels::cuda::test {
namespace {

// |a - b| <= rel * |b| + abs_tol for every element; all of a finite.
void expect_close(const std::vector<float>& a, const std::vector<float>& b, double rel, double abs_tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i])) << "element " << i;
    ASSERT_LE(std::fabs(static_cast<double>(a[i]) - b[i]), rel * std::fabs(b[i]) + abs_tol) << "element " << i;
  }
}

// Tolerance 1e-5 relative: f32 sum of squares in a tree vs double in the CPU.
TEST(CudaRmsnorm, MatchesCpuWithAndWithoutWeight) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(21);
  // 576, 4096, 5000, 8192: the vector kernel (float4s held in registers);
  // 1, 31, 5002 (not multiples of 4), 9000 (over 8192): the scalar one.
  for (int64_t dim : {1, 31, 576, 4096, 5000, 5002, 8192, 9000}) {
    for (bool with_weight : {true, false}) {
      SCOPED_TRACE(testing::Message() << "dim=" << dim << " weight=" << with_weight);
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 9)(rng);
      const std::vector<float> x = random_floats(rng, rows * dim), w = random_floats(rng, dim);
      DeviceBuffer<float> dx(x), dw(w), dy(x.size());
      ASSERT_CUDA_OK(rmsnorm(dx.get(), with_weight ? dw.get() : nullptr, dy.get(), rows, dim, 1e-5f, nullptr));
      std::vector<float> ref(x.size());
      kernels::rmsnorm(x.data(), with_weight ? w.data() : nullptr, ref.data(), rows, dim, 1e-5f);
      expect_close(dy.download(), ref, 1e-5, 1e-6);
      ASSERT_CUDA_OK(rmsnorm(dx.get(), with_weight ? dw.get() : nullptr, dx.get(), rows, dim, 1e-5f, nullptr));
      expect_close(dx.download(), ref, 1e-5, 1e-6);  // in place (y aliasing x)
    }
  }
}

TEST(CudaRmsnorm, FusedResidualAdd) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(22);
  for (const int64_t dim : {2048, 2050}) {  // vector and scalar kernels
    SCOPED_TRACE(testing::Message() << "dim=" << dim);
    const int64_t rows = 5;
    const std::vector<float> x = random_floats(rng, rows * dim), delta = random_floats(rng, rows * dim);
    const std::vector<float> w = random_floats(rng, dim);
    DeviceBuffer<float> dx(x), dd(delta), dw(w), dy(x.size());
    ASSERT_CUDA_OK(add_rmsnorm(dx.get(), dd.get(), dw.get(), dy.get(), rows, dim, 1e-6f, nullptr));
    std::vector<float> sum(x.size()), ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) sum[i] = x[i] + delta[i];
    kernels::rmsnorm(sum.data(), w.data(), ref.data(), rows, dim, 1e-6f);
    expect_close(dx.download(), sum, 0.0, 0.0);  // the residual stream, exactly
    expect_close(dy.download(), ref, 1e-5, 1e-6);
    EXPECT_EQ(add_rmsnorm(dx.get(), dd.get(), dw.get(), dx.get(), rows, dim, 1e-6f, nullptr).code,
              cudaErrorInvalidValue);
  }
}

// Angles are bit-identical to the CPU's; sin/cos within 2 ulp: 1e-5 relative
// to the pair's magnitude covers them at positions up to 10^5.
TEST(CudaRope, MatchesCpuBothOrders) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(23);
  struct Case {
    int head_dim, n_rot, n_heads;
    float base, scale;
    RopeOrder order;
  };
  const Case cases[] = {{64, 64, 9, 10000.0f, 1.0f, RopeOrder::kAdjacent},
                        {128, 128, 32, 500000.0f, 1.0f, RopeOrder::kNeox},
                        {128, 64, 4, 10000.0f, 0.25f, RopeOrder::kNeox},
                        {96, 32, 3, 1000000.0f, 0.5f, RopeOrder::kAdjacent}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "head_dim=" << c.head_dim << " n_rot=" << c.n_rot);
    const RopeParams p{c.head_dim, c.n_rot, c.base, c.scale, c.order};
    const int64_t n_tokens = 37;
    std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
    for (auto& v : pos) v = std::uniform_int_distribution<int32_t>(0, 100000)(rng);
    pos[0] = 0;
    const std::vector<float> x = random_floats(rng, n_tokens * c.n_heads * c.head_dim);
    DeviceBuffer<float> dx(x);
    DeviceBuffer<int32_t> dpos(pos);
    ASSERT_CUDA_OK(cuda::rope(dx.get(), n_tokens, c.n_heads, dpos.get(), p, nullptr));
    std::vector<float> ref = x;
    kernels::rope(ref.data(), n_tokens, c.n_heads, pos.data(), p);
    const std::vector<float> got = dx.download();
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i]));
      ASSERT_LE(std::fabs(got[i] - ref[i]), 1e-5 * (std::fabs(ref[i]) + 4.0)) << "element " << i;
    }
  }
}

TEST(CudaElementwise, SwigluAddBias) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(24);
  for (int64_t n : {1, 1000, 14336 * 3}) {
    const std::vector<float> g = random_floats(rng, n, 3.0f), u = random_floats(rng, n);
    DeviceBuffer<float> dg(g), du(u), dout(static_cast<size_t>(n));
    ASSERT_CUDA_OK(swiglu(dg.get(), du.get(), dout.get(), n, nullptr));
    std::vector<float> ref(static_cast<size_t>(n));
    kernels::swiglu(g.data(), u.data(), ref.data(), n);
    expect_close(dout.download(), ref, 2e-6, 1e-30);  // expf within 2 ulp of glibc's

    ASSERT_CUDA_OK(add(dg.get(), du.get(), dout.get(), n, nullptr));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = g[i] + u[i];
    expect_close(dout.download(), ref, 0.0, 0.0);
  }
  const int64_t rows = 7, dim = 896;
  const std::vector<float> x = random_floats(rng, rows * dim), b = random_floats(rng, dim);
  DeviceBuffer<float> dx(x), db(b);
  ASSERT_CUDA_OK(add_bias(dx.get(), db.get(), rows, dim, nullptr));
  std::vector<float> ref = x;
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += b[i % static_cast<size_t>(dim)];
  expect_close(dx.download(), ref, 0.0, 0.0);
}

// geglu_tanh against the CPU kernel (tanhf and expf-based tanh within a few
// ulp); scale is exact.
TEST(CudaElementwise, GegluTanhAndScale) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(26);
  for (int64_t n : {1, 1000, 2048 * 7}) {
    const std::vector<float> g = random_floats(rng, n, 3.0f), u = random_floats(rng, n);
    DeviceBuffer<float> dg(g), du(u), dout(static_cast<size_t>(n));
    ASSERT_CUDA_OK(geglu_tanh(dg.get(), du.get(), dout.get(), n, nullptr));
    std::vector<float> ref(static_cast<size_t>(n));
    kernels::geglu_tanh(g.data(), u.data(), ref.data(), n);
    expect_close(dout.download(), ref, 1e-5, 4e-6);

    ASSERT_CUDA_OK(scale(dg.get(), 25.3f, n, nullptr));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = g[i] * 25.3f;
    expect_close(dg.download(), ref, 0.0, 0.0);
  }
}

// Exact: the lowest index of the maximum, NaN ignored.
TEST(CudaArgmax, LowestIndexOfMaximumIgnoringNan) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(25);
  for (int64_t n_vocab : {1, 17, 1000, 151936}) {
    const int64_t rows = 6;
    std::vector<float> logits = random_floats(rng, rows * n_vocab, 5.0f);
    std::uniform_int_distribution<int64_t> pick(0, n_vocab - 1);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = logits.data() + r * n_vocab;
      if (r == 1) row[pick(rng)] = std::numeric_limits<float>::quiet_NaN();
      if (r == 2) {  // a tie (or one entry)
        row[pick(rng)] = 1e30f;
        row[pick(rng)] = 1e30f;
      }
      if (r == 3) row[pick(rng)] = std::numeric_limits<float>::infinity();
      if (r == 4) std::fill(row, row + n_vocab, -std::numeric_limits<float>::infinity());
      if (r == 5) std::fill(row, row + n_vocab, std::numeric_limits<float>::quiet_NaN());
    }
    DeviceBuffer<float> dl(logits);
    DeviceBuffer<int32_t> dout(static_cast<size_t>(rows));
    ASSERT_CUDA_OK(argmax(dl.get(), rows, n_vocab, dout.get(), nullptr));
    const std::vector<int32_t> got = dout.download();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data() + r * n_vocab;
      int64_t best = -1;
      for (int64_t i = 0; i < n_vocab; ++i) {
        if (std::isnan(row[i])) continue;
        if (best < 0 || row[i] > row[best]) best = i;
      }
      EXPECT_EQ(got[static_cast<size_t>(r)], best < 0 ? 0 : best) << "vocab " << n_vocab << " row " << r;
    }
  }
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
