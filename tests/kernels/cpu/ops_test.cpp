// RMSNorm, RoPE, SwiGLU / GeGLU, softmax and element-wise ops against
// double-precision references and exact small cases.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/glu.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/softmax.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

TEST(RmsNorm, MatchesDoubleReference) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t rows = 1 + rng() % 5, dim = 1 + rng() % 700;
    const float eps = trial % 2 ? 1e-5f : 1e-6f;
    const std::vector<float> x = test::random_floats(rng, rows * dim, 3.0f), w = test::random_floats(rng, dim);
    std::vector<float> y(x.size());
    rmsnorm(x.data(), trial % 3 ? w.data() : nullptr, y.data(), rows, dim, eps);
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0.0;
      for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
      for (int64_t i = 0; i < dim; ++i) {
        const double e = x[r * dim + i] * inv * (trial % 3 ? w[i] : 1.0);
        ASSERT_NEAR(y[r * dim + i], e, 1e-5 * (1.0 + std::fabs(e)));
      }
    }
  }
}

TEST(RmsNorm, InPlaceAndExactCase) {
  std::vector<float> x = {3.0f, 4.0f};  // mean square 12.5
  const float w[2] = {2.0f, 1.0f};
  rmsnorm(x.data(), w, x.data(), 1, 2, 0.0f);
  EXPECT_NEAR(x[0], 3.0 / std::sqrt(12.5) * 2.0, 1e-6);
  EXPECT_NEAR(x[1], 4.0 / std::sqrt(12.5), 1e-6);
}

// Reference rotation with angles in double.
void rope_reference(std::vector<double>& x, int64_t n_tokens, int n_heads, const int32_t* pos, const RopeParams& p) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < n_heads; ++h) {
      double* v = x.data() + (t * n_heads + h) * p.head_dim;
      for (int i = 0; i < p.n_rot / 2; ++i) {
        const double theta =
            pos[t] * static_cast<double>(p.freq_scale) * std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
        const int a = p.order == RopeOrder::kAdjacent ? 2 * i : i;
        const int b = p.order == RopeOrder::kAdjacent ? 2 * i + 1 : i + p.n_rot / 2;
        const double x0 = v[a], x1 = v[b];
        v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  }
}

TEST(Rope, MatchesDoubleReference) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    RopeParams p;
    p.head_dim = 2 * static_cast<int>(1 + rng() % 64);
    p.n_rot = trial % 4 == 0 ? 2 * static_cast<int>(1 + rng() % (p.head_dim / 2)) : p.head_dim;
    p.freq_base = trial % 2 ? 10000.0f : 1e6f;
    p.freq_scale = trial % 5 == 0 ? 0.25f : 1.0f;
    p.order = trial % 2 ? RopeOrder::kNeox : RopeOrder::kAdjacent;
    const int n_heads = 1 + static_cast<int>(rng() % 4);
    const int64_t n_tokens = 1 + rng() % 6;
    std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
    for (auto& q : pos) q = static_cast<int32_t>(rng() % 2048);
    std::vector<float> x = test::random_floats(rng, n_tokens * n_heads * p.head_dim);
    std::vector<double> ref(x.begin(), x.end());
    rope(x.data(), n_tokens, n_heads, pos.data(), p);
    rope_reference(ref, n_tokens, n_heads, pos.data(), p);
    // f32 angles at positions < 2048 carry ~2048 * 2^-24 * (rotations) error;
    // 2e-3 absolute on unit-scale data covers it (the values are |x| <~ 10).
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], ref[i], 2e-3) << i;
  }
}

TEST(Rope, NeoxIsAdjacentUnderPermutation) {
  // NeoX pairs (i, i+half) are adjacent pairs (2i, 2i+1) after interleaving.
  std::mt19937 rng(43);
  RopeParams p{64, 64, 10000.0f, 1.0f, RopeOrder::kAdjacent};
  const int32_t pos[2] = {0, 777};
  std::vector<float> neox = test::random_floats(rng, 2 * 64), adj(2 * 64);
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < 32; ++i) {
      adj[t * 64 + 2 * i] = neox[t * 64 + i];
      adj[t * 64 + 2 * i + 1] = neox[t * 64 + i + 32];
    }
  }
  const std::vector<float> before = neox;
  rope(adj.data(), 2, 1, pos, p);
  p.order = RopeOrder::kNeox;
  rope(neox.data(), 2, 1, pos, p);
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(adj[t * 64 + 2 * i], neox[t * 64 + i]);
      EXPECT_EQ(adj[t * 64 + 2 * i + 1], neox[t * 64 + i + 32]);
    }
  }
  for (int i = 0; i < 64; ++i) EXPECT_EQ(neox[i], before[i]) << "position 0 must be the identity";
}

TEST(Glu, SwigluAndGegluMatchFormulas) {
  std::mt19937 rng(44);
  const std::vector<float> g = test::random_floats(rng, 999, 4.0f), u = test::random_floats(rng, 999);
  std::vector<float> s(999), ge(999);
  swiglu(g.data(), u.data(), s.data(), 999);
  geglu_tanh(g.data(), u.data(), ge.data(), 999);
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    const double silu = x / (1.0 + std::exp(-x));
    const double gelu = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    ASSERT_NEAR(s[i], silu * u[i], 1e-5 * (1.0 + std::fabs(silu * u[i])));
    ASSERT_NEAR(ge[i], gelu * u[i], 1e-5 * (1.0 + std::fabs(gelu * u[i])));
  }
  const float zero = 0.0f, one = 1.0f;
  float out = 1.0f;
  swiglu(&zero, &one, &out, 1);
  EXPECT_EQ(out, 0.0f);
}

TEST(Softmax, StableAndNormalised) {
  std::vector<float> x = {1000.0f, 1000.0f, -INFINITY, 999.0f};
  softmax(x.data(), 4);
  const double e = std::exp(-1.0), z = 2.0 + e;
  EXPECT_NEAR(x[0], 1.0 / z, 1e-6);
  EXPECT_NEAR(x[1], 1.0 / z, 1e-6);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_NEAR(x[3], e / z, 1e-6);
  std::mt19937 rng(45);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 1 + rng() % 3000;
    std::vector<float> v = test::random_floats(rng, n, 10.0f);
    const std::vector<float> orig = v;
    softmax(v.data(), n);
    double max = *std::max_element(orig.begin(), orig.end()), sum = 0.0;
    for (float o : orig) sum += std::exp(o - max);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(v[i], std::exp(orig[i] - max) / sum, 1e-6);
  }
}

TEST(Elementwise, AddMulScale) {
  std::mt19937 rng(46);
  const std::vector<float> a = test::random_floats(rng, 77), b = test::random_floats(rng, 77);
  std::vector<float> o(77), acc = a;
  add(a.data(), b.data(), o.data(), 77);
  for (int i = 0; i < 77; ++i) EXPECT_EQ(o[i], a[i] + b[i]);
  mul(a.data(), b.data(), o.data(), 77);
  for (int i = 0; i < 77; ++i) EXPECT_EQ(o[i], a[i] * b[i]);
  scale(a.data(), 0.5f, o.data(), 77);
  for (int i = 0; i < 77; ++i) EXPECT_EQ(o[i], a[i] * 0.5f);
  add_scaled(acc.data(), b.data(), 2.0f, 77);
  for (int i = 0; i < 77; ++i) EXPECT_EQ(acc[i], a[i] + 2.0f * b[i]);
}

}  // namespace
}  // namespace hearth::kernels
