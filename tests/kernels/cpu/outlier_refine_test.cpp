// Outlier refinement of 8-bit activation blocks (kernels/cpu/outlier_refine.h)
// and the matmul that uses it: which blocks get refined, what their residual
// blocks hold, that the refined matmul is much closer to the exact product on
// activations with massive outliers, and that its results do not depend on
// batching or thread count.
#include "kernels/cpu/outlier_refine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_ops.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

// Gaussian rows where a few channels (the same in every row, as in real
// models) are hundreds of times larger than the rest.
std::vector<float> outlier_rows(std::mt19937& rng, int64_t n_tokens, int64_t cols) {
  std::vector<float> x = test::random_floats(rng, n_tokens * cols);
  const int64_t channels[] = {3, cols / 2 + 7, cols - 5};
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t c : channels)
      x[static_cast<size_t>(t * cols + c)] =
          (t % 2 ? -1.0f : 1.0f) * (300.0f + 50.0f * static_cast<float>(c) / static_cast<float>(cols));
  }
  return x;
}

// Block scales of row t as the quantizer sets them: max|x| / 127.
std::vector<float> block_scales(const float* x, int64_t cols, int64_t block) {
  std::vector<float> d;
  for (int64_t b = 0; b < cols / block; ++b) {
    float m = 0.0f;
    for (int64_t i = 0; i < block; ++i) m = std::max(m, std::fabs(x[b * block + i]));
    d.push_back(m / 127.0f);
  }
  return d;
}

// max|x| / RMS(x) of block b.
float crest_of(const float* x, int64_t b, int64_t block) {
  double m = 0.0, sq = 0.0;
  for (int64_t i = 0; i < block; ++i) {
    const double v = x[b * block + i];
    m = std::max(m, std::fabs(v));
    sq += v * v;
  }
  return static_cast<float>(m / std::sqrt(sq / static_cast<double>(block)));
}

TEST(OutlierRefine, RefinesExactlyTheBlocksAboveRatioTimesTheMedianScaleOrPeakedAgainstTheirRms) {
  std::mt19937 rng(41);
  for (GgmlType act_type : {GgmlType::kQ8_0, GgmlType::kQ8_1, GgmlType::kQ8_K}) {
    const QuantOps& act = *quant_ops(act_type);
    const int64_t cols = act.block_elems * 12;
    const std::vector<float> x = outlier_rows(rng, 1, cols);
    std::vector<uint8_t> q(row_bytes(act_type, cols));
    act.quantize_row(x.data(), q.data(), cols);
    OutlierBlocks ob;
    prepare_outlier_blocks(act, 1, cols, ob);
    refine_row(act, x.data(), q.data(), cols, 4.0f, 0, ob);

    std::vector<float> d = block_scales(x.data(), cols, act.block_elems);
    std::vector<float> sorted = d;
    std::nth_element(sorted.begin(), sorted.begin() + 6, sorted.end());
    const float threshold = 4.0f * sorted[6];
    std::vector<int32_t> expect;
    for (int32_t b = 0; b < static_cast<int32_t>(d.size()); ++b) {
      // The stored scale is rounded (f16 for Q8_0/Q8_1): keep away from the edge.
      ASSERT_GT(std::fabs(d[static_cast<size_t>(b)] - threshold), 1e-2f * threshold) << act.name;
      const float crest = crest_of(x.data(), b, act.block_elems);
      ASSERT_GT(std::fabs(crest - kOutlierCrest), 1e-3f) << act.name << " block " << b;
      if (d[static_cast<size_t>(b)] > threshold || crest > kOutlierCrest) expect.push_back(b);
    }
    ASSERT_FALSE(expect.empty());
    ASSERT_EQ(ob.count[0], static_cast<int32_t>(expect.size())) << act.name;
    for (size_t s = 0; s < expect.size(); ++s) EXPECT_EQ(ob.index[s], expect[s]) << act.name;

    // Each residual block holds x - dequant(hi) of its block, to within its
    // own rounding: half a step, plus |q| <= 127 times the f16 rounding of the
    // stored scale (2^-11 relative): 0.5 + 127 / 2048 < 0.57 steps.
    std::vector<float> hi(static_cast<size_t>(cols)), lo(static_cast<size_t>(act.block_elems));
    act.dequant_row(q.data(), hi.data(), cols);
    for (size_t s = 0; s < expect.size(); ++s) {
      act.dequant_row(ob.residual_block(0, expect[s]), lo.data(), act.block_elems);
      const int64_t b0 = expect[s] * act.block_elems;
      float rmax = 0.0f;
      for (int64_t i = 0; i < act.block_elems; ++i) rmax = std::max(rmax, std::fabs(x[b0 + i] - hi[b0 + i]));
      const float step = rmax / 127.0f;
      for (int64_t i = 0; i < act.block_elems; ++i) {
        EXPECT_NEAR(hi[b0 + i] + lo[static_cast<size_t>(i)], x[b0 + i], 0.57f * step + 1e-6f)
            << act.name << " block " << expect[s] << " elem " << i << " x " << x[b0 + i] << " hi " << hi[b0 + i]
            << " lo " << lo[static_cast<size_t>(i)] << " rmax " << rmax;
      }
    }
  }
}

TEST(OutlierRefine, RowsWithoutOutliersAreLeftAlone) {
  const QuantOps& act = *quant_ops(GgmlType::kQ8_0);
  const int64_t cols = 256;
  std::vector<float> x(static_cast<size_t>(cols));
  for (int64_t i = 0; i < cols; ++i) x[i] = std::sin(0.37f * static_cast<float>(i));  // every block max ~1
  std::vector<uint8_t> q(row_bytes(act.type, cols));
  act.quantize_row(x.data(), q.data(), cols);
  OutlierBlocks ob;
  prepare_outlier_blocks(act, 1, cols, ob);
  refine_row(act, x.data(), q.data(), cols, 4.0f, 0, ob);
  EXPECT_EQ(ob.count[0], 0);
}

// Rows as Gemma 3's GeGLU output is: every 32 values hold one far above the
// rest (40 sigma: a crest of about 5.6 over 32 or 256 values), so no block's
// scale stands out against the row's median, yet each block's small values
// lose most of their bits.
std::vector<float> peaked_rows(std::mt19937& rng, int64_t n_tokens, int64_t cols) {
  std::vector<float> x = test::random_floats(rng, n_tokens * cols);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t b = 0; b < cols / 32; ++b)
      x[static_cast<size_t>(t * cols + b * 32 + (7 * b + t) % 32)] = b % 2 ? 40.0f : -40.0f;
  }
  return x;
}

TEST(OutlierRefine, BlocksPeakedAgainstTheirOwnRmsAreRefinedThoughNoneStandsOut) {
  std::mt19937 rng(44);
  for (GgmlType act_type : {GgmlType::kQ8_0, GgmlType::kQ8_K}) {
    const QuantOps& act = *quant_ops(act_type);
    const int64_t cols = act.block_elems * 8;
    const std::vector<float> x = peaked_rows(rng, 1, cols);
    std::vector<uint8_t> q(row_bytes(act_type, cols));
    act.quantize_row(x.data(), q.data(), cols);
    // The median rule alone finds nothing: every block's scale is about the same.
    const std::vector<float> d = block_scales(x.data(), cols, act.block_elems);
    EXPECT_LT(*std::max_element(d.begin(), d.end()), 4.0f * *std::min_element(d.begin(), d.end()));
    OutlierBlocks ob;
    prepare_outlier_blocks(act, 1, cols, ob);
    refine_row(act, x.data(), q.data(), cols, 4.0f, 0, ob);
    EXPECT_EQ(ob.count[0], 8) << act.name << ": every block is peaked";
    // A Gaussian row (crest about 2.5-3.3) and a sine (1.4) are left alone.
    for (const bool gaussian : {true, false}) {
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> smooth(static_cast<size_t>(cols));
      for (int64_t i = 0; i < cols; ++i) {
        smooth[static_cast<size_t>(i)] = gaussian ? normal(rng) : std::sin(0.37f * static_cast<float>(i));
      }
      act.quantize_row(smooth.data(), q.data(), cols);
      refine_row(act, smooth.data(), q.data(), cols, 4.0f, 0, ob);
      EXPECT_EQ(ob.count[0], 0) << act.name << (gaussian ? " gaussian" : " sine");
    }
  }
}

const GgmlType kQuantTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};

int64_t unit_of(GgmlType t) {
  return quant_ops(t)->block_elems;
}

// Squared error of the plain and the refined 8-bit matmul of `w` and `x`
// against the exact product; the refined one must lose under 5% of what the plain one does.
void expect_refined_much_closer(const test::RandomMatrix& w, const std::vector<float>& x, int64_t rows,
                                int64_t n_tokens, ThreadPool& pool, GgmlType type) {
  std::vector<float> exact(static_cast<size_t>(rows * n_tokens));
  matmul_reference(w.m, x.data(), n_tokens, exact.data());
  MatmulScratch plain, refined;
  plain.outlier_ratio = 0.0f;
  std::vector<float> y_plain(exact.size()), y_refined(exact.size());
  matmul(w.m, x.data(), n_tokens, y_plain.data(), &pool, plain);
  matmul(w.m, x.data(), n_tokens, y_refined.data(), &pool, refined);
  double err_plain = 0.0, err_refined = 0.0;
  for (size_t i = 0; i < exact.size(); ++i) {
    err_plain += std::pow(static_cast<double>(y_plain[i]) - exact[i], 2);
    err_refined += std::pow(static_cast<double>(y_refined[i]) - exact[i], 2);
  }
  EXPECT_LT(err_refined, 0.05 * err_plain)
      << quant_ops(type)->name << ": refined " << err_refined << " plain " << err_plain;
}

TEST(OutlierRefine, MatmulIsMuchCloserToTheExactProductOnOutlierActivations) {
  std::mt19937 rng(42);
  ThreadPool pool(2);
  for (GgmlType type : kQuantTypes) {
    const int64_t rows = 48, cols = 12 * unit_of(type), n_tokens = 5;
    const test::RandomMatrix w = test::random_matrix(rng, type, rows, cols);
    expect_refined_much_closer(w, outlier_rows(rng, n_tokens, cols), rows, n_tokens, pool, type);
  }
}

// The product on peaked rows: the crest rule's refinement takes most of the 8-bit error away.
TEST(OutlierRefine, MatmulOnPeakedActivationsIsCloserToTheExactProduct) {
  std::mt19937 rng(45);
  ThreadPool pool(2);
  for (GgmlType type : kQuantTypes) {
    const int64_t rows = 48, cols = 8 * std::max<int64_t>(256, unit_of(type)), n_tokens = 3;
    const test::RandomMatrix w = test::random_matrix(rng, type, rows, cols);
    expect_refined_much_closer(w, peaked_rows(rng, n_tokens, cols), rows, n_tokens, pool, type);
  }
}

TEST(OutlierRefine, RefinedMatmulDoesNotDependOnBatchingOrThreads) {
  std::mt19937 rng(43);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  for (GgmlType type : kQuantTypes) {
    // K types: 2 blocks; 32-element types: 19 blocks (two 8-block groups of
    // the lane kernels and a partial one).
    const int64_t rows = 37, cols = unit_of(type) == 32 ? 19 * 32 : 2 * unit_of(type), n_tokens = 11;
    const test::RandomMatrix w = test::random_matrix(rng, type, rows, cols);
    const std::vector<float> x = outlier_rows(rng, n_tokens, cols);
    MatmulScratch scratch;
    std::vector<float> batched(static_cast<size_t>(rows * n_tokens));
    matmul(w.m, x.data(), n_tokens, batched.data(), &pools[1], scratch);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<float> alone(static_cast<size_t>(rows));
      matmul(w.m, x.data() + t * cols, 1, alone.data(), &pools[t % 3], scratch);
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(alone[static_cast<size_t>(r)], batched[static_cast<size_t>(t * rows + r)])
            << quant_ops(type)->name << " token " << t << " row " << r;
      }
    }
  }
}

// The refined multi-row dots: row j's result depends only on its own rows and
// mask bits (bitwise, whatever n_a and the other rows), and equals the plain
// dot plus the flagged blocks' dots with the residual rows (within f32
// summation order), at every level.
TEST(OutlierRefine, RefinedDotsAreBitIdenticalPerRowAndAddTheFlaggedBlocks) {
  std::mt19937 rng(44);
  const GgmlType kLegacy[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0};
  for (CpuLevel level : test::runnable_levels()) {
    for (int trial = 0; trial < 24; ++trial) {
      const GgmlType type = kLegacy[trial % 5];
      const QuantOps& ops = *quant_ops(type, level);
      const QuantOps& act = *quant_ops(ops.vec_dot_type, level);
      ASSERT_NE(ops.vec_dot_rows_refined, nullptr) << ops.name;
      const int64_t nb = 1 + static_cast<int64_t>(rng() % 70), cols = 32 * nb;
      const test::RandomMatrix w = test::random_matrix(rng, type, 1, cols);
      const size_t stride = row_bytes(act.type, cols);
      std::vector<uint8_t> a(stride * kMaxDotRows), lo(stride * kMaxDotRows);
      for (int j = 0; j < kMaxDotRows; ++j) {
        act.quantize_row(test::random_floats(rng, cols).data(), a.data() + j * stride, cols);
        act.quantize_row(test::random_floats(rng, cols, 0.01f).data(), lo.data() + j * stride, cols);
      }
      std::vector<uint8_t> mask(static_cast<size_t>(nb));
      for (uint8_t& m : mask) m = static_cast<uint8_t>(rng() & rng());  // about a quarter of the bits set
      float all[kMaxDotRows];
      ops.vec_dot_rows_refined(cols, w.m.data, a.data(), stride, lo.data(), stride, mask.data(), kMaxDotRows, all);
      for (int j = 0; j < kMaxDotRows; ++j) {
        // Row j alone, its bits moved to bit 0, the other rows' bits dropped.
        std::vector<uint8_t> own(mask.size());
        for (size_t i = 0; i < mask.size(); ++i) own[i] = static_cast<uint8_t>((mask[i] >> j) & 1u);
        float alone = 0.0f;
        ops.vec_dot_rows_refined(cols, w.m.data, a.data() + j * stride, stride, lo.data() + j * stride, stride,
                                 own.data(), 1, &alone);
        ASSERT_EQ(alone, all[j]) << ops.name << " level " << static_cast<int>(level) << " row " << j;
        double expect = ops.vec_dot(cols, w.m.data, a.data() + j * stride);
        for (int64_t i = 0; i < nb; ++i) {
          if (own[static_cast<size_t>(i)]) {
            expect += ops.vec_dot(32, static_cast<const uint8_t*>(w.m.data) + i * ops.block_bytes,
                                  lo.data() + j * stride + i * act.block_bytes);
          }
        }
        EXPECT_NEAR(all[j], expect, 1e-4 * (1.0 + std::fabs(expect)) * std::sqrt(static_cast<double>(cols)))
            << ops.name << " level " << static_cast<int>(level) << " row " << j;
      }
    }
  }
}

}  // namespace
}  // namespace hearth::kernels
