// Quantize / dequantize / dot products of every type, every SIMD level against
// the scalar reference, on fresh random rows of random lengths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_ops.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

using test::random_floats;

struct TypeCase {
  GgmlType type;
  double max_nmse;  // round trip f32 -> type -> f32 on Gaussian data
};

// Tolerances: uniform quantization noise is step^2/12; with blocks of 32
// Gaussian values (max ~2.5 sigma) a 4-bit step is ~0.3 sigma (NMSE ~0.008),
// 5-bit ~0.002, Q6_K's 16-element groups ~3e-4, 8-bit ~3e-5. The test data has
// 4x outliers (1 in 64) that widen some blocks' range, hence ~3x slack, more
// for Q8_K whose 256-element blocks almost always hold an outlier.
const TypeCase kWeightTypes[] = {
    {GgmlType::kF32, 0.0},   {GgmlType::kF16, 1e-6},   {GgmlType::kBF16, 2e-5},   {GgmlType::kQ4_0, 0.03},
    {GgmlType::kQ4_1, 0.02}, {GgmlType::kQ5_0, 0.01},  {GgmlType::kQ5_1, 0.005},  {GgmlType::kQ8_0, 1e-4},
    {GgmlType::kQ4_K, 0.02}, {GgmlType::kQ5_K, 0.005}, {GgmlType::kQ6_K, 1.5e-3}, {GgmlType::kQ8_1, 1e-4},
    {GgmlType::kQ8_K, 5e-4},
};

std::vector<uint8_t> quantize(const QuantOps& ops, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_bytes(ops.type, static_cast<int64_t>(x.size())));
  ops.quantize_row(x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

std::vector<float> dequantize(const QuantOps& ops, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  ops.dequant_row(q.data(), y.data(), n);
  return y;
}

TEST(Quant, TablesAgreeWithTypeTraits) {
  for (const TypeCase& c : kWeightTypes) {
    const QuantOps* ops = quant_ops(c.type);
    ASSERT_NE(ops, nullptr);
    const TypeTraits* t = type_traits(c.type);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(ops->block_elems, t->block_elems) << t->name;
    EXPECT_EQ(ops->block_bytes, t->block_bytes) << t->name;
    EXPECT_STREQ(ops->name, t->name);
  }
  EXPECT_EQ(quant_ops(static_cast<GgmlType>(4)), nullptr);  // Q4_2: removed from ggml
  EXPECT_EQ(type_traits_from_id(4), nullptr);               // ggml defines no id 4 any more
  EXPECT_FALSE(is_weight_type(GgmlType::kQ2_K));            // known to the table, no kernels here
  EXPECT_EQ(quant_ops(GgmlType::kQ2_K), nullptr);
  // The table's weight types are exactly the ones with kernels.
  for (const TypeTraits& t : all_types()) {
    EXPECT_EQ(is_weight_type(t.type), quant_ops(t.type) != nullptr && t.use == TypeUse::kWeights) << t.name;
    if (t.use == TypeUse::kWeights) {
      EXPECT_NE(quant_ops(t.type), nullptr) << t.name;
    }
  }
}

TEST(Quant, RoundTripErrorWithinBound) {
  std::mt19937 rng(11);
  for (const TypeCase& c : kWeightTypes) {
    const QuantOps& ops = *quant_ops(c.type, CpuLevel::kScalar);
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t n = ops.block_elems == 1 ? 1 + static_cast<int64_t>(rng() % 700)
                                             : ops.block_elems * (1 + static_cast<int64_t>(rng() % 24));
      const std::vector<float> x = random_floats(rng, n, 0.1f + static_cast<float>(rng() % 100) / 10.0f);
      const std::vector<float> y = dequantize(ops, quantize(ops, x), n);
      EXPECT_LE(test::nmse(y.data(), x.data(), n), c.max_nmse) << ops.name << " n=" << n;
    }
  }
}

TEST(Quant, ActivationQuantizersAreByteIdenticalAcrossLevels) {
  std::mt19937 rng(12);
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ8_1, GgmlType::kQ8_K}) {
    const QuantOps& ref = *quant_ops(t, CpuLevel::kScalar);
    for (int trial = 0; trial < 30; ++trial) {
      const int64_t n = ref.block_elems * (1 + static_cast<int64_t>(rng() % 20));
      std::vector<float> x = random_floats(rng, n, 3.0f);
      if (trial == 0) std::fill(x.begin(), x.begin() + ref.block_elems, 0.0f);  // an all-zero block
      const std::vector<uint8_t> expect = quantize(ref, x);
      for (CpuLevel level : test::runnable_levels()) {
        EXPECT_EQ(quantize(*quant_ops(t, level), x), expect) << ref.name << " level " << cpu_level_name(level);
      }
    }
  }
}

// The dot of dequantized rows in double: what every vec_dot must compute up
// to f32 rounding (the integer arithmetic is exact).
double reference_dot(const QuantOps& w_ops, const std::vector<uint8_t>& w, const QuantOps* a_ops,
                     const std::vector<uint8_t>& a, const std::vector<float>& a_f32, int64_t n, double* abs_sum) {
  const std::vector<float> wf = dequantize(w_ops, w, n);
  const std::vector<float> af = a_ops != nullptr ? dequantize(*a_ops, a, n) : a_f32;
  double sum = 0.0;
  *abs_sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += static_cast<double>(wf[i]) * af[i];
    *abs_sum += std::fabs(static_cast<double>(wf[i]) * af[i]);
  }
  return sum;
}

// Q8_1 stores s = d * sum(q) as f16: the dots use it for the weight offset m,
// which adds up to |m s| 2^-11 per block (bound taken as 2^-10: s is a rounded
// sum and near a binade edge the half-ulp is relative to the larger power of two).
double q8_1_offset_slack(const QuantOps& w_ops, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a) {
  if (w_ops.vec_dot_type != GgmlType::kQ8_1) return 0.0;
  double slack = 0.0;
  for (size_t b = 0; b < w.size() / w_ops.block_bytes; ++b) {
    uint16_t m = 0, s = 0;
    std::memcpy(&m, w.data() + b * w_ops.block_bytes + 2, 2);  // d, m, ...
    std::memcpy(&s, a.data() + b * 36 + 2, 2);                 // d, s, qs[32]
    slack += std::fabs(static_cast<double>(fp16_to_f32(m)) * fp16_to_f32(s)) * 0x1p-10;
  }
  return slack;
}

TEST(Quant, VecDotEveryLevelMatchesDequantizedReference) {
  std::mt19937 rng(13);
  for (const TypeCase& c : kWeightTypes) {
    const QuantOps& w_scalar = *quant_ops(c.type, CpuLevel::kScalar);
    if (w_scalar.vec_dot == nullptr) continue;
    const bool float_act = w_scalar.vec_dot_type == GgmlType::kF32;
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t n = w_scalar.block_elems == 1 ? 1 + static_cast<int64_t>(rng() % 1000)
                                                  : w_scalar.block_elems * (1 + static_cast<int64_t>(rng() % 24));
      const std::vector<uint8_t> w = quantize(w_scalar, random_floats(rng, n));
      const std::vector<float> x = random_floats(rng, n, 2.0f);
      const QuantOps* a_scalar = float_act ? nullptr : quant_ops(w_scalar.vec_dot_type, CpuLevel::kScalar);
      const std::vector<uint8_t> a = float_act ? std::vector<uint8_t>{} : quantize(*a_scalar, x);
      const void* a_ptr = float_act ? static_cast<const void*>(x.data()) : a.data();
      double abs_sum = 0.0;
      const double expect = reference_dot(w_scalar, w, a_scalar, a, x, n, &abs_sum);
      const double slack = q8_1_offset_slack(w_scalar, w, a);
      for (CpuLevel level : test::runnable_levels()) {
        const float got = quant_ops(c.type, level)->vec_dot(n, w.data(), a_ptr);
        // f32 accumulation over n/block partial sums: 1e-5 of the absolute sum.
        EXPECT_NEAR(got, expect, 1e-5 * abs_sum + slack + 1e-6)
            << w_scalar.name << " n=" << n << " level " << cpu_level_name(level);
      }
    }
  }
}

TEST(Quant, QuantizedDotTracksFloatDot) {
  // End to end: quantized weights x 8-bit activations vs the exact f32 dot of
  // the original data, relative to sqrt(n) * |w| |x| scale (errors are random).
  std::mt19937 rng(14);
  for (const TypeCase& c : kWeightTypes) {
    const QuantOps& ops = *quant_ops(c.type);
    if (ops.vec_dot == nullptr) continue;
    const int64_t n = 4096;
    const std::vector<float> wf = random_floats(rng, n), xf = random_floats(rng, n);
    const std::vector<uint8_t> w = quantize(ops, wf);
    std::vector<uint8_t> a;
    const void* a_ptr = xf.data();
    if (ops.vec_dot_type != GgmlType::kF32) {
      a = quantize(*quant_ops(ops.vec_dot_type), xf);
      a_ptr = a.data();
    }
    double exact = 0.0, norm_w = 0.0, norm_x = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      exact += static_cast<double>(wf[i]) * xf[i];
      norm_w += static_cast<double>(wf[i]) * wf[i];
      norm_x += static_cast<double>(xf[i]) * xf[i];
    }
    const double scale = std::sqrt(norm_w * norm_x);
    EXPECT_NEAR(ops.vec_dot(n, w.data(), a_ptr), exact, 3.0 * std::sqrt(c.max_nmse + 1e-4) * scale) << ops.name;
  }
}

}  // namespace
}  // namespace hearth::kernels
