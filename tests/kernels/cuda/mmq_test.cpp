// mmq (tensor-core products of several tokens, mmq.h), both kinds of
// activations, against a scalar reference: the CPU-dequantized weights dotted
// in double with activations prepared on the host the kernel's way (kQ8:
// quantized per 32; kF16: scaled per token by a power of two and rounded to
// f16, the weights rounded to f16 too); every type it takes, random shapes
// and token counts (every token tile, partial tiles and rows, odd chunk
// counts), with and without split-K and the bias/residual epilogue; kQ8's
// agreement with the one-token q8 GEMV; kF16's error against the exact
// product below kQ8's, whatever the activations' magnitude. Outputs are
// poisoned with NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
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

// The kinds this device runs (kF16 from sm_80, kF16Wg on sm_90).
std::vector<MmqActivations> kinds() {
  std::vector<MmqActivations> k = {MmqActivations::kQ8};
  if (mmq_f16_supported()) k.push_back(MmqActivations::kF16);
  if (mmq_f16_wg_supported()) k.push_back(MmqActivations::kF16Wg);
  return k;
}

// y[t][r] of W times x's rows quantized (double), and sum |w xhat| per output.
struct Ref {
  std::vector<double> y, mag;
};

Ref reference_q8(const HostMatrix& m, const std::vector<float>& x, int64_t n) {
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

float round_f16(float v) {
  return fp16_to_f32(f32_to_fp16(v));
}

// The kernel's f16 weights: d code + m rounded once, with d and m as the
// kernel has them: the file's f16 values for the legacy types (so the exact
// weight rounded), and for Q4_K / Q5_K d sc and -dmin m (exact in f32) rounded
// to f16 first. The K codes are recovered from the CPU values (integers).
std::vector<float> kernel_weights_f16(const HostMatrix& m) {
  std::vector<float> w16(m.values.size());
  const bool k_type = m.type == GgmlType::kQ4_K || m.type == GgmlType::kQ5_K;
  if (!k_type) {
    for (size_t i = 0; i < w16.size(); ++i) w16[i] = round_f16(m.values[i]);
    return w16;
  }
  const size_t block_bytes = m.type == GgmlType::kQ4_K ? 144 : 176;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      const uint8_t* blk =
          m.bytes.data() + static_cast<size_t>(r) * m.stride + static_cast<size_t>(c / 256) * block_bytes;
      uint16_t dh = 0, dminh = 0;
      std::memcpy(&dh, blk, 2);
      std::memcpy(&dminh, blk + 2, 2);
      uint8_t sc = 0, mn = 0;
      k_scale_min(blk + 4, static_cast<int>(c % 256 / 32), &sc, &mn);
      const float d = fp16_to_f32(dh) * static_cast<float>(sc), off = -(fp16_to_f32(dminh) * static_cast<float>(mn));
      const double d16 = round_f16(d), m16 = round_f16(off);
      const double v = m.values[static_cast<size_t>(r * m.cols + c)];
      const double code = d != 0.0f ? std::nearbyint((v - off) / d) : 0.0;
      w16[static_cast<size_t>(r * m.cols + c)] = round_f16(static_cast<float>(code * d16 + m16));
    }
  }
  return w16;
}

// kF16: each token's values times 2^(8 - e) (amax = f 2^e, f in [0.5, 1))
// rounded to f16, the weights as the kernel has them, the sum times 2^(e - 8).
Ref reference_f16(const HostMatrix& m, const std::vector<float>& x, int64_t n) {
  Ref ref;
  const std::vector<float> w16 = kernel_weights_f16(m);
  for (int64_t t = 0; t < n; ++t) {
    float amax = 0.0f;
    for (int64_t c = 0; c < m.cols; ++c) amax = std::max(amax, std::fabs(x[t * m.cols + c]));
    int e = 0;
    if (amax > 0.0f) static_cast<void>(std::frexp(amax, &e));
    const float up = std::ldexp(1.0f, 8 - e);
    const double down = std::ldexp(1.0, e - 8);
    std::vector<double> x16(static_cast<size_t>(m.cols));
    for (int64_t c = 0; c < m.cols; ++c) x16[c] = round_f16(x[t * m.cols + c] * up);
    for (int64_t r = 0; r < m.rows; ++r) {
      double y = 0.0, mag = 0.0;
      for (int64_t c = 0; c < m.cols; ++c) {
        const double v = static_cast<double>(w16[r * m.cols + c]) * x16[c];
        y += v;
        mag += std::fabs(v);
      }
      ref.y.push_back(y * down), ref.mag.push_back(mag * down);
    }
  }
  return ref;
}

Ref reference(const HostMatrix& m, const std::vector<float>& x, int64_t n, MmqActivations kind) {
  return kind == MmqActivations::kQ8 ? reference_q8(m, x, n) : reference_f16(m, x, n);
}

const char* kind_name(MmqActivations kind) {
  return kind == MmqActivations::kQ8 ? "q8" : kind == MmqActivations::kF16 ? "f16" : "f16 wgmma";
}

// Runs mmq (quantize + product); split: give it scratch for split-K.
std::vector<float> run_mmq(const HostMatrix& m, const std::vector<float>& x, int64_t n, bool split,
                           const std::vector<float>* bias, const std::vector<float>* resid, MmqActivations kind) {
  DeviceBuffer<uint8_t> dw(m.bytes);
  DeviceBuffer<float> dx(x), dy(static_cast<size_t>(n * m.rows));
  DeviceBuffer<uint8_t> act(mmq_act_bytes(n, m.cols));
  const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
  const size_t scratch_bytes = split ? mmq_scratch_bytes(dm, n, kind) : 0;
  DeviceBuffer<uint8_t> scratch(scratch_bytes);
  DeviceBuffer<float> dbias(bias != nullptr ? *bias : std::vector<float>(1));
  GemvEpilogue ep;
  if (bias != nullptr) {
    dy.upload(*resid);  // the residual is the output itself
    ep.bias = dbias.get();
    ep.residual = dy.get();
  }
  EXPECT_TRUE(mmq_applies(dm));
  EXPECT_TRUE(mmq_quantize(dx.get(), n, m.cols, act.get(), nullptr, kind).ok());
  const Status st = mmq(dm, act.get(), n, dy.get(), ep, split ? scratch.get() : nullptr, scratch_bytes, nullptr, kind);
  EXPECT_TRUE(st.ok()) << describe(st);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return dy.download();
}

// kF16 bound: f32 accumulation in the tensor cores (a k16 step at a time).
// A wrong column, unit or token is off by ~|w x| / mag = 1 / cols.
void check_mmq(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, int64_t n, bool split, bool epilogue,
               MmqActivations kind) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " " << kind_name(kind) << " rows=" << rows
                                  << " cols=" << cols << " n=" << n << " split=" << split << " epilogue=" << epilogue);
  const HostMatrix m = make_matrix(rng, type, rows, cols);
  const std::vector<float> x = random_floats(rng, n * cols);
  const std::vector<float> bias = random_floats(rng, rows), resid = random_floats(rng, n * rows);
  const std::vector<float> y = run_mmq(m, x, n, split, epilogue ? &bias : nullptr, epilogue ? &resid : nullptr, kind);
  const Ref ref = reference(m, x, n, kind);
  const double rel = kind == MmqActivations::kQ8 ? 2e-5 : 5e-5;
  for (int64_t i = 0; i < n * rows; ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "output " << i << " unwritten or not finite";
    const double extra = epilogue ? static_cast<double>(bias[i % rows]) + resid[i] : 0.0;
    ASSERT_LE(std::fabs(y[i] - extra - ref.y[i]), rel * ref.mag[i] + 1e-5)
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
      for (MmqActivations kind : kinds()) {
        check_mmq(rng, type, rows, cols, n, trial % 2 == 0, trial == 1, kind);
      }
    }
  }
}

// Large enough for several row tiles, token tiles of 64 and splits.
TEST(CudaMmq, LlamaShapesWithSplits) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  for (MmqActivations kind : kinds()) {
    std::mt19937 rng(7);
    check_mmq(rng, GgmlType::kQ4_0, 256, 4096, 16, true, true, kind);
    check_mmq(rng, GgmlType::kQ4_K, 200, 3584, 130, true, false, kind);
    check_mmq(rng, GgmlType::kQ8_0, 130, 2048, 64, false, true, kind);
    check_mmq(rng, GgmlType::kQ4_0, 200, 2048, 512, true, true, kind);  // a prompt step: 8 token tiles
  }
}

// No drift: over a 512-token Q4_0 product the errors against the exact
// product (double) average out; their mean, signed along each output's
// sign, is small next to their spread (a systematic scale error would not be).
TEST(CudaMmq, HalfActivationErrorsAreUnbiased) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!have_mma()) GTEST_SKIP() << "mmq needs compute capability 8.0 or later";
  std::mt19937 rng(31);
  const int64_t rows = 256, cols = 2048, n = 512;
  const HostMatrix m = make_matrix(rng, GgmlType::kQ4_0, rows, cols);
  const std::vector<float> x = random_floats(rng, n * cols);
  for (MmqActivations kind : kinds()) {
    const std::vector<float> y = run_mmq(m, x, n, true, nullptr, nullptr, kind);
    double signed_sum = 0.0, sq = 0.0, norm = 0.0;
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        double exact = 0.0;
        for (int64_t c = 0; c < cols; ++c) exact += static_cast<double>(m.values[r * cols + c]) * x[t * cols + c];
        const double e = y[static_cast<size_t>(t * rows + r)] - exact;
        signed_sum += exact >= 0.0 ? e : -e;
        sq += e * e;
        norm += exact * exact;
      }
    }
    const double count = static_cast<double>(n * rows);
    const double bias = signed_sum / count, rms = std::sqrt(sq / count);
    std::printf("%s: rms error %.3g (relative %.3g), mean error along the sign %.3g\n", kind_name(kind), rms,
                std::sqrt(sq / norm), bias);
    EXPECT_LT(std::fabs(bias), 0.05 * rms) << kind_name(kind);
  }
}

// kF16 against the exact product (the CPU-dequantized weights and x itself,
// in double): closer than kQ8 for every type, and as close with activations
// 10^6 times larger (past f16's range unscaled) or smaller, or all zero.
TEST(CudaMmq, HalfActivationsAreCloserToTheExactProductAtAnyMagnitude) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  if (!mmq_f16_supported()) GTEST_SKIP() << "f16 activations need compute capability 9.0 or later";
  std::mt19937 rng(23);
  const int64_t rows = 96, cols = 1024, n = 6;
  for (GgmlType type : mmq_types()) {
    const HostMatrix m = make_matrix(rng, type, rows, cols);
    std::vector<float> x = random_floats(rng, n * cols);
    for (int64_t c = 0; c < cols; ++c) {
      x[1 * cols + c] *= 1e6f;
      x[2 * cols + c] *= 1e-6f;
      x[3 * cols + c] = 0.0f;
    }
    const std::vector<float> y8 = run_mmq(m, x, n, false, nullptr, nullptr, MmqActivations::kQ8);
    for (MmqActivations kind : kinds()) {
      if (kind == MmqActivations::kQ8) continue;
      SCOPED_TRACE(kind_name(kind));
      const std::vector<float> y16 = run_mmq(m, x, n, false, nullptr, nullptr, kind);
      for (int64_t t = 0; t < n; ++t) {
        double err16 = 0.0, err8 = 0.0, norm = 0.0;
        for (int64_t r = 0; r < rows; ++r) {
          double exact = 0.0;
          for (int64_t c = 0; c < cols; ++c) exact += static_cast<double>(m.values[r * cols + c]) * x[t * cols + c];
          const size_t i = static_cast<size_t>(t * rows + r);
          ASSERT_TRUE(std::isfinite(y16[i])) << type_traits(type)->name << " token " << t << " row " << r;
          err16 += (y16[i] - exact) * (y16[i] - exact);
          err8 += (y8[i] - exact) * (y8[i] - exact);
          norm += exact * exact;
        }
        if (t == 3) {
          EXPECT_EQ(err16, 0.0) << type_traits(type)->name << ": a zero token gives zeros";
          continue;
        }
        EXPECT_LT(err16, err8) << type_traits(type)->name << " token " << t;
        EXPECT_LT(std::sqrt(err16 / norm), 2e-3) << type_traits(type)->name << " token " << t;
      }
    }
  }
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
    const std::vector<float> batch = run_mmq(m, x, n, true, nullptr, nullptr, MmqActivations::kQ8);
    DeviceBuffer<uint8_t> dw(m.bytes);
    const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
    GemvOptions opt;
    opt.activations = GemvActivations::kQ8;
    const Ref ref = reference_q8(m, x, n);
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

// The split-K cost model (host arithmetic, no device): on an H100's 264
// resident f16 blocks the 8B shapes at 64 tokens split as measured best
// (perf-notes v19), and every choice covers the stages exactly once.
TEST(MmqSplit, CountsThePartialSumsBytes) {
  const auto check = [](int64_t tiles, int stages, int64_t resident, int max_splits, double write, double reduce) {
    const MmqSplit s = mmq_choose_split(tiles, stages, resident, max_splits, write, reduce);
    EXPECT_GE(s.splits, 1);
    EXPECT_LE(s.splits, std::max(1, std::min(stages, max_splits)));
    EXPECT_GE(s.splits * s.stages_per_split, stages);
    EXPECT_LT((s.splits - 1) * s.stages_per_split, stages);
    return s;
  };
  // f16, Q4_0 (144 bytes a row a stage), 128-row blocks, 64 tokens.
  const double w16 = 64 * 4.0 / 144;
  const auto reduce16 = [](double rows) { return 64 * rows * 4.0 / (264 * 128 * 144.0); };
  EXPECT_EQ(check(112, 16, 264, 16, w16, reduce16(14336)).splits, 2);  // gate / up: one round of 8 stages
  EXPECT_EQ(check(224, 16, 264, 16, w16, reduce16(28672)).splits, 1);  // gate and up fused: a full wave already
  const MmqSplit down = check(32, 56, 264, 56, w16, reduce16(4096));
  EXPECT_EQ(down.splits, 8);  // 4096 x 14336: 256 blocks of 7 stages
  EXPECT_EQ(down.stages_per_split, 7);
  // Ignoring the partial sums, the 14336-row product would take 16 one-stage splits.
  EXPECT_EQ(check(112, 16, 264, 16, 0.0, 0.0).splits, 16);
  // int8, 64-row blocks of 288 bytes a row a stage, 16 tokens: small partials, 4 splits of 2 stages.
  EXPECT_EQ(check(64, 8, 264, 8, 16 * 4.0 / 288, 16 * 4096 * 4.0 / (264 * 64 * 288.0)).splits, 4);
  // No scratch: one split.
  EXPECT_EQ(check(8, 16, 264, 0, w16, reduce16(1024)).splits, 1);
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
  // f16 activations from mmq_f16_min_tokens() rows, q8 ones below.
  const int64_t from = mmq_f16_min_tokens();
  if (from > 0 && mmq_f16_supported()) {
    EXPECT_NE(mmq_activations(from), MmqActivations::kQ8);  // kF16, or kF16Wg where HEARTH_CUDA_MMQ_WGMMA=1
    EXPECT_NE(mmq_activations(64), MmqActivations::kQ8);
    EXPECT_EQ(mmq_activations(from - 1), MmqActivations::kQ8);
  } else {
    EXPECT_EQ(mmq_activations(64), MmqActivations::kQ8);
  }
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
