// Multi-row dots (vec_dot_rows): every type, every runnable SIMD level, every
// row count 1..kMaxDotRows, on fresh random rows. Each out[j] must be
// bit-identical to the one-row vec_dot of the same level (batching sequences
// must not change greedy tokens) and match the dequantized double reference
// within the single-row tolerance. Also: matmul of a batch of tokens gives the
// same bits as each token alone.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_ops.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

const GgmlType kTypes[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0,
                           GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
                           GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};

// Row lengths in elements: fixed block counts (every remainder mod 8 of the
// lane kernels' 8-block groups, whole groups, and more than their 32-block
// stack segments), then random counts up to 80 (float types: random lengths,
// most not a multiple of 8 or 16).
constexpr int kFixedLengths = 10;

int64_t pick_length(std::mt19937& rng, const QuantOps& ops, int trial) {
  if (ops.block_elems == 1) return 1 + static_cast<int64_t>(rng() % 700);
  const int64_t fixed[kFixedLengths] = {1, 2, 3, 5, 8, 15, 16, 33, 64, 71};
  const int64_t blocks = trial < kFixedLengths ? fixed[trial] : 1 + static_cast<int64_t>(rng() % 80);
  return ops.block_elems * blocks;
}

// kMaxDotRows activation rows at a stride of row bytes plus 0..12 bytes of
// padding (a multiple of 4: Q8_K blocks hold a float), quantized with the
// scalar quantizer (the SIMD ones write the same bytes).
struct ActRows {
  std::vector<uint8_t> bytes;
  size_t stride = 0;
  std::vector<std::vector<float>> f32;  // the rows before quantization
};

ActRows random_activations(std::mt19937& rng, const QuantOps& w_ops, int64_t n) {
  ActRows r;
  const bool float_act = w_ops.vec_dot_type == GgmlType::kF32;
  const size_t row = float_act ? static_cast<size_t>(n) * sizeof(float) : row_bytes(w_ops.vec_dot_type, n);
  r.stride = row + 4 * (rng() % 4);
  r.bytes.assign(r.stride * kMaxDotRows, 0xa5);
  for (int j = 0; j < kMaxDotRows; ++j) {
    r.f32.push_back(test::random_floats(rng, n, 2.0f));
    uint8_t* dst = r.bytes.data() + static_cast<size_t>(j) * r.stride;
    if (float_act) {
      std::memcpy(dst, r.f32.back().data(), row);
    } else {
      quant_ops(w_ops.vec_dot_type, CpuLevel::kScalar)->quantize_row(r.f32.back().data(), dst, n);
    }
  }
  return r;
}

// Double dot of the dequantized rows and the tolerance the one-row dots are
// held to in quant_test: 1e-5 of the absolute sum, plus for Q8_1 activations
// the f16 rounding of s (up to |m s| 2^-10 per block).
struct Expected {
  double value = 0.0;
  double tolerance = 0.0;
};

Expected reference(const QuantOps& w_ops, const uint8_t* w, const uint8_t* a, const std::vector<float>& a_f32,
                   int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n)), af = a_f32;
  w_ops.dequant_row(w, wf.data(), n);
  if (w_ops.vec_dot_type != GgmlType::kF32)
    quant_ops(w_ops.vec_dot_type, CpuLevel::kScalar)->dequant_row(a, af.data(), n);
  Expected e;
  double abs_sum = 0.0;
  for (size_t i = 0; i < wf.size(); ++i) {
    e.value += static_cast<double>(wf[i]) * af[i];
    abs_sum += std::fabs(static_cast<double>(wf[i]) * af[i]);
  }
  e.tolerance = 1e-5 * abs_sum + 1e-6;
  if (w_ops.vec_dot_type == GgmlType::kQ8_1) {
    for (int64_t b = 0; b < n / 32; ++b) {
      uint16_t m = 0, s = 0;
      std::memcpy(&m, w + static_cast<size_t>(b) * w_ops.block_bytes + 2, 2);  // d, m, ...
      std::memcpy(&s, a + static_cast<size_t>(b) * 36 + 2, 2);                 // d, s, qs[32]
      e.tolerance += std::fabs(static_cast<double>(fp16_to_f32(m)) * fp16_to_f32(s)) * 0x1p-10;
    }
  }
  return e;
}

TEST(VecDotRows, EveryTypeLevelAndRowCountIsBitIdenticalToVecDot) {
  std::mt19937 rng(0x5eed);
  for (GgmlType type : kTypes) {
    for (CpuLevel level : test::runnable_levels()) {
      const QuantOps& ops = *quant_ops(type, level);
      ASSERT_NE(ops.vec_dot_rows, nullptr) << ops.name;
      for (int trial = 0; trial < kFixedLengths + 6; ++trial) {
        const int64_t n = pick_length(rng, ops, trial);
        std::vector<uint8_t> w(row_bytes(type, n));
        ops.quantize_row(test::random_floats(rng, n).data(), w.data(), n);
        const ActRows act = random_activations(rng, ops, n);
        for (int n_a = 1; n_a <= kMaxDotRows; ++n_a) {
          std::vector<float> out(kMaxDotRows + 1, std::nanf(""));
          ops.vec_dot_rows(n, w.data(), act.bytes.data(), act.stride, n_a, out.data());
          for (int j = 0; j < n_a; ++j) {
            const uint8_t* a = act.bytes.data() + static_cast<size_t>(j) * act.stride;
            const float one = ops.vec_dot(n, w.data(), a);
            EXPECT_EQ(std::bit_cast<uint32_t>(out[static_cast<size_t>(j)]), std::bit_cast<uint32_t>(one))
                << ops.name << " " << cpu_level_name(level) << " n=" << n << " n_a=" << n_a << " row " << j << ": "
                << out[static_cast<size_t>(j)] << " vs " << one;
            const Expected e = reference(ops, w.data(), a, act.f32[static_cast<size_t>(j)], n);
            EXPECT_NEAR(out[static_cast<size_t>(j)], e.value, e.tolerance)
                << ops.name << " " << cpu_level_name(level) << " n=" << n << " n_a=" << n_a << " row " << j;
          }
          for (size_t j = static_cast<size_t>(n_a); j < out.size(); ++j) {
            EXPECT_TRUE(std::isnan(out[j])) << ops.name << " wrote out[" << j << "] with n_a=" << n_a;
          }
        }
      }
    }
  }
}

// The engine's invariant: a token's outputs do not depend on which other
// tokens share its matmul (token tiles, dot-row chunks, thread counts).
TEST(VecDotRows, MatmulOfABatchEqualsEachTokenAlone) {
  std::mt19937 rng(77);
  ThreadPool pool(2);
  for (GgmlType type : kTypes) {
    const QuantOps& ops = *quant_ops(type);
    for (int trial = 0; trial < 5; ++trial) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 70);
      // Up to 4 blocks, or up to 40 for the 32-element types (their lane
      // kernels work in groups of 8 blocks).
      const int64_t max_blocks = ops.block_elems == 32 ? 40 : 4;
      const int64_t cols =
          (ops.block_elems == 1 ? 32 : ops.block_elems) * (1 + static_cast<int64_t>(rng() % max_blocks));
      const int64_t n_tokens = 2 + static_cast<int64_t>(rng() % 40);
      std::vector<uint8_t> wbytes(row_bytes(type, cols) * static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        ops.quantize_row(test::random_floats(rng, cols).data(),
                         wbytes.data() + static_cast<size_t>(r) * row_bytes(type, cols), cols);
      }
      const WeightMatrix m{type, wbytes.data(), rows, cols, row_bytes(type, cols)};
      const std::vector<float> x = test::random_floats(rng, n_tokens * cols);
      std::vector<float> batched(static_cast<size_t>(n_tokens * rows)), alone(static_cast<size_t>(rows));
      MatmulScratch scratch;
      matmul(m, x.data(), n_tokens, batched.data(), &pool, scratch);
      for (int64_t t = 0; t < n_tokens; ++t) {
        matmul(m, x.data() + t * cols, 1, alone.data(), &pool, scratch);
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_EQ(std::bit_cast<uint32_t>(batched[static_cast<size_t>(t * rows + r)]),
                    std::bit_cast<uint32_t>(alone[static_cast<size_t>(r)]))
              << ops.name << " " << rows << "x" << cols << " tokens " << n_tokens << " token " << t << " row " << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hearth::kernels
