// The one-token GEMV with 8-bit activations (GemvActivations::kQ8) against a
// scalar reference that quantizes x the same way on the host, every type the
// path takes, random shapes; and its distance from the exact f32 product.
// Outputs are poisoned with NaN beforehand (DeviceBuffer).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <utility>

#include "cuda_test_util.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_q8.h"
#include "q8_reference.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

const std::vector<GgmlType>& q8_types() {
  static const std::vector<GgmlType> t = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                          GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
  return t;
}

struct Reference {
  std::vector<double> y, mag, exact;
};

// y[r] = sum_c w_c d_u(c) q_c: the CPU-dequantized weights dotted in double
// with the quantized activations; mag = sum |w_c d q_c| bounds the f32
// rounding; exact = the f32-activation product.
Reference reference(const HostMatrix& m, const std::vector<float>& x) {
  const QuantX qx = quantize_x(x);
  Reference ref;
  for (int64_t r = 0; r < m.rows; ++r) {
    double y = 0.0, mag = 0.0, exact = 0.0;
    for (int64_t c = 0; c < m.cols; ++c) {
      const double w = m.values[r * m.cols + c], xhat = qx.d[c / 32] * qx.q[c];
      y += w * xhat;
      mag += std::fabs(w * xhat);
      exact += w * x[c];
    }
    ref.y.push_back(y), ref.mag.push_back(mag), ref.exact.push_back(exact);
  }
  return ref;
}

// Runs the kQ8 path and returns y (poisoned before; bias/residual optional).
std::vector<float> run_q8(const HostMatrix& m, const std::vector<float>& x, const std::vector<float>* bias,
                          const std::vector<float>* resid, int blocks_per_sm, int lanes = 0, int prefetch = -1,
                          int staged = -1) {
  DeviceBuffer<uint8_t> dw(m.bytes);
  DeviceBuffer<float> dx(x), dy(static_cast<size_t>(m.rows));
  DeviceBuffer<float> dbias(bias != nullptr ? *bias : std::vector<float>(1));
  GemvEpilogue ep;
  if (bias != nullptr) {
    dy.upload(*resid);  // the residual is the output itself (aliasing allowed)
    ep.bias = dbias.get();
    ep.residual = dy.get();
  }
  const DeviceMatrix dm{m.type, dw.get(), m.rows, m.cols, m.stride};
  EXPECT_TRUE(gemv_q8_applies(dm, 1));
  GemvOptions opt;
  opt.activations = GemvActivations::kQ8;
  opt.q8_blocks_per_sm = blocks_per_sm;
  opt.q8_lanes = lanes;
  opt.q8_prefetch = prefetch;
  opt.q8_staged = staged;
  const Status st = gemv(opt, dm, dx.get(), 1, dy.get(), nullptr, ep);
  EXPECT_TRUE(st.ok()) << describe(st);
  return dy.download();
}

// Tolerance against the quantized reference: 2e-5 of sum |w x| (f32
// rounding of the unit terms and their sums; the integer dots are exact; one
// activation code off by one would cost about 1/127 of a |w x| term, ~1e-4 of
// the sum at these sizes). Against the exact product: relative L2 over the
// rows <= 1.5e-2 (8-bit codes: ~1/254 of a unit's largest value per element;
// 0.6-0.7% measured with Q8_0 weights on these Gaussian inputs with 4x outliers).
void check_q8(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, size_t pad, bool epilogue, int lanes = 0) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols << " pad=" << pad
                                  << " epilogue=" << epilogue);
  const HostMatrix m = make_matrix(rng, type, rows, cols, pad);
  const std::vector<float> x = random_floats(rng, cols);
  const std::vector<float> bias = random_floats(rng, rows), resid = random_floats(rng, rows);
  const std::vector<float> y = run_q8(m, x, epilogue ? &bias : nullptr, epilogue ? &resid : nullptr, 0, lanes);
  const Reference ref = reference(m, x);
  double num = 0.0, den = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(std::isfinite(y[r])) << "row " << r << " unwritten or not finite";
    const double extra = epilogue ? static_cast<double>(bias[r]) + resid[r] : 0.0;
    ASSERT_LE(std::fabs(y[r] - extra - ref.y[r]), 2e-5 * ref.mag[r] + 1e-5) << "row " << r;
    num += (y[r] - extra - ref.exact[r]) * (y[r] - extra - ref.exact[r]);
    den += ref.exact[r] * ref.exact[r];
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LE(rel, 1.5e-2) << "distance from the f32-activation product";
  std::printf("q8 rel_l2_vs_exact %s %lld x %lld: %.3e\n", type_traits(type)->name, static_cast<long long>(rows),
              static_cast<long long>(cols), rel);
}

TEST(CudaGemvQ8, EveryTypeRandomShapes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(4321);
  for (GgmlType type : q8_types()) {
    for (int trial = 0; trial < 5; ++trial) {
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 700)(rng);
      // 1..40 chunks of 256: every lane count (8, 16, 32) and idle lanes
      // (Q6_K: multiples of 8 chunks, its rows' 16-byte alignment).
      const int64_t step = type == GgmlType::kQ6_K ? 2048 : 256;
      const int64_t cols = step * std::uniform_int_distribution<int64_t>(1, type == GgmlType::kQ6_K ? 5 : 40)(rng);
      check_q8(rng, type, rows, cols, trial == 1 ? 32 : 0, trial == 2, trial == 3 ? 8 << (rows % 3) : 0);
    }
  }
}

TEST(CudaGemvQ8, LlamaShapes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(5);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    check_q8(rng, type, 1024, 4096, 0, true);
    check_q8(rng, type, 640, 14336, 0, false);  // 56 chunks: 32 lanes, two passes for some
  }
}

// Neither the grid size (blocks per multiprocessor) nor prefetching changes a
// row's arithmetic: bit-identical outputs (direct loads; staged: below).
TEST(CudaGemvQ8, ResultIndependentOfGridAndPrefetch) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(6);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ6_K}) {
    const HostMatrix m = make_matrix(rng, type, 3000, 6144);
    const std::vector<float> x = random_floats(rng, 6144);
    const std::vector<float> a = run_q8(m, x, nullptr, nullptr, 0, 0, 1, 0);
    for (const auto& [bps, pf] : {std::pair{1, 1}, std::pair{0, 0}, std::pair{1, 0}}) {
      const std::vector<float> b = run_q8(m, x, nullptr, nullptr, bps, 0, pf, 0);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "row " << i << " bps " << bps << " pf " << pf;
    }
  }
}

// Weights staged through shared memory (bulk copies; sm_90+, else the same
// direct loads) give the direct loads' bits: every type, random shapes and
// padded rows, the default stage count, 2 and up to 8 stages, 1 and 2
// blocks per SM, with bias and residual; and a fused set
// whose row groups straddle its matrices.
TEST(CudaGemvQ8, StagedEqualsDirect) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(9);
  // Random shapes, then long matrices: several row groups per block, so
  // stages are refilled (and their barriers' phases flip) several times.
  std::vector<std::pair<GgmlType, std::array<int64_t, 2>>> shapes;
  for (GgmlType type : q8_types()) {
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t step = type == GgmlType::kQ6_K ? 2048 : 256;
      shapes.push_back({type,
                        {std::uniform_int_distribution<int64_t>(1, 1200)(rng),
                         step * std::uniform_int_distribution<int64_t>(1, type == GgmlType::kQ6_K ? 6 : 40)(rng)}});
    }
  }
  shapes.push_back({GgmlType::kQ4_0, {20000, 256}});
  shapes.push_back({GgmlType::kQ4_K, {12000, 2048}});
  shapes.push_back({GgmlType::kQ6_K, {10000, 2048}});
  shapes.push_back({GgmlType::kQ8_0, {5000, 4096}});
  for (size_t n = 0; n < shapes.size(); ++n) {
    const GgmlType type = shapes[n].first;
    const int64_t rows = shapes[n].second[0], cols = shapes[n].second[1];
    const int trial = static_cast<int>(n % 4);
    SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols);
    const HostMatrix m = make_matrix(rng, type, rows, cols, trial == 1 ? 48 : 0);
    const std::vector<float> x = random_floats(rng, cols);
    const std::vector<float> bias = random_floats(rng, rows), resid = random_floats(rng, rows);
    const bool ep = trial == 2;
    const std::vector<float> a = run_q8(m, x, ep ? &bias : nullptr, ep ? &resid : nullptr, 0, 0, -1, 0);
    for (const auto& [bps, staged] :
         {std::pair{0, 1}, std::pair{0, 2}, std::pair{0, 8}, std::pair{1, 1}, std::pair{2, 1}}) {
      const std::vector<float> b = run_q8(m, x, ep ? &bias : nullptr, ep ? &resid : nullptr, bps, 0, -1, staged);
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(std::isfinite(b[i])) << "row " << i;
        ASSERT_EQ(a[i], b[i]) << "row " << i << " bps " << bps << " staged " << staged;
      }
    }
  }
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ6_K}) {
    const std::vector<int64_t> rows = {37, 5, 203};
    const int64_t cols = 2048;
    const std::vector<float> x = random_floats(rng, cols);
    DeviceBuffer<float> dx(x);
    std::vector<HostMatrix> hm;
    std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> y;
    std::vector<DeviceMatrix> dm;
    for (size_t i = 0; i < rows.size(); ++i) {
      hm.push_back(make_matrix(rng, type, rows[i], cols, i == 1 ? 16 : 0));
      dw.push_back(std::make_unique<DeviceBuffer<uint8_t>>(hm.back().bytes));
      dm.push_back(DeviceMatrix{type, dw.back()->get(), rows[i], cols, hm.back().stride});
      y.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(rows[i])));
    }
    std::vector<std::vector<float>> direct;
    for (int staged : {0, 1, 2}) {
      GemvOptions opt;
      opt.activations = GemvActivations::kQ8;
      opt.q8_staged = staged;
      std::vector<GemvOutput> outs;
      for (size_t i = 0; i < rows.size(); ++i) {
        ASSERT_EQ(cudaMemset(y[i]->get(), 0xff, sizeof(float) * static_cast<size_t>(rows[i])), cudaSuccess);  // NaN
        outs.push_back(GemvOutput{&dm[i], y[i]->get(), {}});
      }
      ASSERT_CUDA_OK(gemv_fused(opt, outs.data(), static_cast<int>(outs.size()), dx.get(), 1, nullptr));
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::vector<float> b = y[i]->download();
        if (staged == 0) {
          direct.push_back(b);
          continue;
        }
        for (size_t e = 0; e < b.size(); ++e) {
          ASSERT_TRUE(std::isfinite(b[e]));
          ASSERT_EQ(direct[i][e], b[e]) << "matrix " << i << " row " << e << " staged " << staged;
        }
      }
    }
  }
}

// gemv_fused gives each matrix the bits gemv gives it alone: q/k/v-like
// shapes in one launch (with bias and residual on some; the 8-bit kernel, or
// the f32 one for widths the 8-bit path does not take), a mixed-type set and
// a two-token batch (both one gemv per matrix).
TEST(CudaGemvQ8, FusedEqualsSeparate) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(8);
  struct Case {
    std::vector<GgmlType> types;
    std::vector<int64_t> rows;
    int64_t cols;
    int n_tokens;
  };
  const std::vector<Case> cases = {
      {{GgmlType::kQ4_0, GgmlType::kQ4_0, GgmlType::kQ4_0}, {512, 128, 128}, 1024, 1},
      {{GgmlType::kQ4_K, GgmlType::kQ4_K}, {700, 333}, 4096, 1},
      {{GgmlType::kQ6_K, GgmlType::kQ6_K, GgmlType::kQ6_K}, {96, 17, 250}, 2048, 1},
      {{GgmlType::kQ4_K, GgmlType::kQ4_K, GgmlType::kQ6_K}, {64, 16, 16}, 2048, 1},  // mixed: separate launches
      {{GgmlType::kQ4_0, GgmlType::kQ4_0}, {64, 32}, 512, 2},                        // batch: f32 path
      // Widths the 8-bit path does not take: one launch of the f32 kernel over the set.
      {{GgmlType::kQ4_1, GgmlType::kQ4_1, GgmlType::kQ4_1}, {576, 192, 192}, 576, 1},
      {{GgmlType::kQ8_0, GgmlType::kQ8_0, GgmlType::kQ8_0}, {896, 128, 128}, 896, 1},
      {{GgmlType::kF16, GgmlType::kF16}, {100, 37}, 1152, 1},
      {{GgmlType::kF32, GgmlType::kF32, GgmlType::kF32}, {33, 7, 1}, 224, 1},
      {{GgmlType::kQ4_0, GgmlType::kQ8_0}, {64, 16}, 576, 1},  // mixed: separate launches
  };
  for (const Case& c : cases) {
    const int n = static_cast<int>(c.types.size());
    const std::vector<float> x = random_floats(rng, c.n_tokens * c.cols);
    DeviceBuffer<float> dx(x);
    std::vector<HostMatrix> hm;
    std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dw;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> fused_y, alone_y, bias;
    std::vector<DeviceMatrix> dm;
    std::vector<float> resid_host;
    for (int i = 0; i < n; ++i) {
      hm.push_back(make_matrix(rng, c.types[i], c.rows[i], c.cols));
      dw.push_back(std::make_unique<DeviceBuffer<uint8_t>>(hm.back().bytes));
      dm.push_back(DeviceMatrix{c.types[i], dw.back()->get(), c.rows[i], c.cols, hm.back().stride});
      const std::vector<float> r = random_floats(rng, c.n_tokens * c.rows[i]);
      fused_y.push_back(std::make_unique<DeviceBuffer<float>>(r));  // residual = the output itself
      alone_y.push_back(std::make_unique<DeviceBuffer<float>>(r));
      bias.push_back(std::make_unique<DeviceBuffer<float>>(random_floats(rng, c.rows[i])));
    }
    GemvOptions opt;
    opt.activations = GemvActivations::kQ8;
    std::vector<GemvOutput> outs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      outs[i].w = &dm[i];
      outs[i].y = fused_y[i]->get();
      if (i != 1) outs[i].epilogue = GemvEpilogue{bias[i]->get(), fused_y[i]->get()};
      GemvEpilogue alone_ep;
      if (i != 1) alone_ep = GemvEpilogue{bias[i]->get(), alone_y[i]->get()};
      ASSERT_CUDA_OK(gemv(opt, dm[i], dx.get(), c.n_tokens, alone_y[i]->get(), nullptr, alone_ep));
    }
    ASSERT_CUDA_OK(gemv_fused(opt, outs.data(), n, dx.get(), c.n_tokens, nullptr));
    for (int i = 0; i < n; ++i) {
      const std::vector<float> a = fused_y[i]->download(), b = alone_y[i]->download();
      for (size_t e = 0; e < a.size(); ++e) {
        ASSERT_TRUE(std::isfinite(a[e]));
        ASSERT_EQ(a[e], b[e]) << "matrix " << i << " element " << e;
      }
    }
  }
}

// Staging runs where it should (so StagedEqualsDirect compares two paths):
// on sm_90+ for the Llama-3-8B decode shapes unless turned off; never below.
TEST(CudaGemvQ8, StagedWhereItApplies) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  int dev = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
  DeviceBuffer<uint8_t> w(16);
  const auto mat = [&](GgmlType t, int64_t rows, int64_t cols) {
    return DeviceMatrix{t, w.get(), rows, cols, row_bytes(t, cols)};
  };
  const DeviceMatrix q = mat(GgmlType::kQ4_0, 4096, 4096), k = mat(GgmlType::kQ4_0, 1024, 4096);
  const DeviceMatrix gate = mat(GgmlType::kQ4_0, 14336, 4096), down = mat(GgmlType::kQ4_0, 4096, 14336);
  const DeviceMatrix q6 = mat(GgmlType::kQ6_K, 4096, 14336), q8 = mat(GgmlType::kQ8_0, 1024, 28672);
  const GemvOutput qkv[3] = {{&q, nullptr, {}}, {&k, nullptr, {}}, {&k, nullptr, {}}};
  const GemvOutput gu[2] = {{&gate, nullptr, {}}, {&gate, nullptr, {}}};
  const GemvOutput dn{&down, nullptr, {}}, d6{&q6, nullptr, {}}, wide{&q8, nullptr, {}};
  GemvOptions opt;
  opt.activations = GemvActivations::kQ8;
  opt.q8_staged = 1;
  for (const auto& [outs, n] : {std::pair{qkv, 3}, std::pair{gu, 2}, std::pair{&dn, 1}, std::pair{&d6, 1}}) {
    const int stages = gemv_q8_stages(outs, n, opt);
    if (major >= 9) {
      EXPECT_GE(stages, 2);
    } else {
      EXPECT_EQ(stages, 0);
    }
  }
  EXPECT_EQ(gemv_q8_stages(&wide, 1, opt), 0);  // 8 rows of 30 KB a stage: not two
  opt.q8_staged = 2;
  EXPECT_EQ(gemv_q8_stages(qkv, 3, opt), major >= 9 ? 2 : 0);
  opt.q8_staged = 0;
  EXPECT_EQ(gemv_q8_stages(qkv, 3, opt), 0);
}

TEST(CudaGemvQ8, WhereItApplies) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> w(1 << 16);
  const DeviceMatrix q4{GgmlType::kQ4_0, w.get(), 4, 512, row_bytes(GgmlType::kQ4_0, 512)};
  EXPECT_TRUE(gemv_q8_applies(q4, 1));
  EXPECT_FALSE(gemv_q8_applies(q4, 2));  // batches take the f32 path
  DeviceMatrix odd = q4;
  odd.cols = 544;  // not whole chunks of 256
  odd.row_stride = row_bytes(GgmlType::kQ4_0, 544);
  EXPECT_FALSE(gemv_q8_applies(odd, 1));
  DeviceMatrix q6 = q4;
  q6.type = GgmlType::kQ6_K;
  q6.row_stride = row_bytes(GgmlType::kQ6_K, 512);  // 420 bytes: not 16-byte rows
  EXPECT_FALSE(gemv_q8_applies(q6, 1));
  q6.cols = 2048;
  q6.row_stride = row_bytes(GgmlType::kQ6_K, 2048);  // 1680 bytes
  EXPECT_TRUE(gemv_q8_applies(q6, 1));
  DeviceMatrix f16 = q4;
  f16.type = GgmlType::kF16;
  f16.row_stride = row_bytes(GgmlType::kF16, 512);
  EXPECT_FALSE(gemv_q8_applies(f16, 1));
  DeviceMatrix unaligned = q4;
  unaligned.row_stride += 2;
  EXPECT_FALSE(gemv_q8_applies(unaligned, 1));
  // Where it does not apply, kQ8 runs the f32 path (and succeeds).
  DeviceBuffer<float> x(544), y(4);
  GemvOptions opt;
  opt.activations = GemvActivations::kQ8;
  ASSERT_CUDA_OK(gemv(opt, odd, x.get(), 1, y.get(), nullptr));
}

TEST(CudaGemvQ8, ProcessDefault) {
  const GemvActivations before = default_gemv_activations();
  EXPECT_NE(before, GemvActivations::kProcessDefault);
  set_default_gemv_activations(GemvActivations::kQ8);
  EXPECT_EQ(default_gemv_activations(), GemvActivations::kQ8);
  set_default_gemv_activations(GemvActivations::kF32);
  EXPECT_EQ(default_gemv_activations(), GemvActivations::kF32);
  set_default_gemv_activations(GemvActivations::kProcessDefault);
  EXPECT_EQ(default_gemv_activations(), before);
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
