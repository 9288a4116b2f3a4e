// matmul against the scalar reference (same activation quantization) and
// against the f32 reference, over random shapes, levels and thread counts.
#include "kernels/cpu/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/quant_ops.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

// y computed with the scalar vec_dot and scalar activation quantization.
std::vector<float> scalar_matmul(const WeightMatrix& w, const std::vector<float>& x, int64_t n_tokens) {
  const QuantOps& ops = *quant_ops(w.type, CpuLevel::kScalar);
  std::vector<float> y(static_cast<size_t>(n_tokens * w.rows));
  std::vector<uint8_t> a;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x.data() + t * w.cols;
    const void* act = xt;
    if (ops.vec_dot_type != GgmlType::kF32) {
      const QuantOps& aops = *quant_ops(ops.vec_dot_type, CpuLevel::kScalar);
      a.resize(row_bytes(aops.type, w.cols));
      aops.quantize_row(xt, a.data(), w.cols);
      act = a.data();
    }
    for (int64_t r = 0; r < w.rows; ++r) {
      y[static_cast<size_t>(t * w.rows + r)] =
          ops.vec_dot(w.cols, static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * w.row_stride, act);
    }
  }
  return y;
}

const GgmlType kTypes[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0,
                           GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
                           GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};

TEST(Matmul, MatchesScalarReferenceAcrossShapesAndThreads) {
  std::mt19937 rng(31);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  MatmulScratch scratch;
  scratch.outlier_ratio = 0.0f;  // the plain 8-bit path (outlier_refine_test covers the refined one)
  for (GgmlType type : kTypes) {
    const int64_t unit = type == GgmlType::kQ4_K || type == GgmlType::kQ5_K || type == GgmlType::kQ6_K ? 256 : 32;
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 150);
      const int64_t cols = unit * (1 + static_cast<int64_t>(rng() % 6));
      const int64_t n_tokens = 1 + static_cast<int64_t>(rng() % 40);
      const test::RandomMatrix w = test::random_matrix(rng, type, rows, cols);
      const std::vector<float> x = test::random_floats(rng, n_tokens * cols);
      const std::vector<float> expect = scalar_matmul(w.m, x, n_tokens);
      std::vector<float> first;
      for (ThreadPool& pool : pools) {
        std::vector<float> y(expect.size(), std::nanf(""));
        matmul(w.m, x.data(), n_tokens, y.data(), &pool, scratch);
        // Same activation bytes, same integer sums: only f32 summation order differs.
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_NEAR(y[i], expect[i], 1e-4 * (1.0 + std::fabs(expect[i])) * std::sqrt(static_cast<double>(cols)))
              << quant_ops(type)->name << " " << rows << "x" << cols << " tokens " << n_tokens << " at " << i;
        }
        if (first.empty()) first = y;
        EXPECT_EQ(y, first) << "result depends on the thread count";
      }
    }
  }
}

TEST(Matmul, TracksFloatReference) {
  // Against f32 activations: the 8-bit activation error. For x ~ N(0,1) with
  // outliers, Q8 activation noise is ~1% of |w||x|; NMSE bound 1e-3.
  std::mt19937 rng(32);
  MatmulScratch scratch;
  ThreadPool pool(2);
  for (GgmlType type : kTypes) {
    const test::RandomMatrix w = test::random_matrix(rng, type, 64, 512);
    const std::vector<float> x = test::random_floats(rng, 3 * 512);
    std::vector<float> y(3 * 64), ref(3 * 64);
    matmul(w.m, x.data(), 3, y.data(), &pool, scratch);
    matmul_reference(w.m, x.data(), 3, ref.data());
    EXPECT_LE(test::nmse(y.data(), ref.data(), 3 * 64), 1e-3) << quant_ops(type)->name;
  }
}

// Several matrices on the same activations (q/k/v, gate/up) in one call:
// bit-identical to one matmul each, with outlier refinement on, across thread
// counts and token counts; mixed types that share an activation type (the
// Q4_K_M mixture's Q4_K and Q6_K) included.
TEST(Matmul, ManyMatricesEqualOneCallEach) {
  std::mt19937 rng(34);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  const std::vector<std::vector<GgmlType>> sets = {{GgmlType::kQ4_1, GgmlType::kQ4_1, GgmlType::kQ4_1},
                                                   {GgmlType::kQ4_K, GgmlType::kQ4_K, GgmlType::kQ6_K},
                                                   {GgmlType::kQ8_0, GgmlType::kQ4_0},
                                                   {GgmlType::kF16, GgmlType::kF32}};
  for (const auto& types : sets) {
    const int64_t cols = 512, n_tokens = 1 + static_cast<int64_t>(rng() % 20);
    std::vector<test::RandomMatrix> ms;
    std::vector<WeightMatrix> ws;
    for (GgmlType t : types) {
      ms.push_back(test::random_matrix(rng, t, 1 + static_cast<int64_t>(rng() % 70), cols));
      ws.push_back(ms.back().m);
    }
    std::vector<float> x = test::random_floats(rng, n_tokens * cols);
    for (int64_t t = 0; t < n_tokens; ++t) x[static_cast<size_t>(t * cols + 37)] = 300.0f;  // an outlier channel
    for (ThreadPool& pool : pools) {
      MatmulScratch scratch;
      std::vector<std::vector<float>> many(ws.size()), one(ws.size());
      std::vector<float*> outs;
      for (size_t i = 0; i < ws.size(); ++i) {
        many[i].assign(static_cast<size_t>(n_tokens * ws[i].rows), std::nanf(""));
        one[i].assign(many[i].size(), std::nanf(""));
        outs.push_back(many[i].data());
        matmul(ws[i], x.data(), n_tokens, one[i].data(), &pool, scratch);
      }
      matmul_many(ws, x.data(), n_tokens, outs, &pool, scratch);
      for (size_t i = 0; i < ws.size(); ++i) {
        EXPECT_EQ(many[i], one[i]) << quant_ops(ws[i].type)->name << " matrix " << i << ", " << pool.size()
                                   << " threads";
      }
    }
  }
}

TEST(Matmul, RowStrideLargerThanRow) {
  std::mt19937 rng(33);
  const test::RandomMatrix packed = test::random_matrix(rng, GgmlType::kQ4_1, 10, 64);
  const size_t row = packed.m.row_stride, stride = row + 40;
  std::vector<uint8_t> padded(stride * 10, 0xAB);
  for (int r = 0; r < 10; ++r) std::copy_n(packed.bytes.data() + r * row, row, padded.data() + r * stride);
  WeightMatrix m = packed.m;
  m.data = padded.data();
  m.row_stride = stride;
  const std::vector<float> x = test::random_floats(rng, 2 * 64);
  std::vector<float> a(20), b(20);
  MatmulScratch scratch;
  matmul(packed.m, x.data(), 2, a.data(), nullptr, scratch);
  matmul(m, x.data(), 2, b.data(), nullptr, scratch);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace hearth::kernels
