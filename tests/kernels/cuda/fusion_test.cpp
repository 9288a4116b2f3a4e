// The fused decode kernels against the unfused calls they replace (which
// have their own scalar-reference tests) and against scalar references:
// RMSNorm and the GLU in the q8 GEMV's prologue (gemv_fused_norm,
// gemv_fused_glu) and RoPE + store-KV in one launch (rope_store_kv). Both are promised bit-identical to the unfused
// path, so the comparisons are exact. Outputs are poisoned with NaN first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/store_kv.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

// rms_norm(x) * w in double: the scalar reference of the normed row.
std::vector<double> norm_reference(const std::vector<float>& x, const std::vector<float>& w, float eps) {
  double ss = 0.0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
  return y;
}

TEST(CudaFusion, NormInGemvPrologueEqualsRmsnormThenGemv) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(77);
  struct Case {
    GgmlType type;
    std::vector<int64_t> rows;
    int64_t cols;
  };
  const std::vector<Case> cases = {
      {GgmlType::kQ4_0, {512, 128, 128}, 4096},  // q/k/v of a small Llama
      {GgmlType::kQ4_0, {1000, 24}, 2048},
      {GgmlType::kQ4_K, {700, 333}, 4096},
      {GgmlType::kQ6_K, {300}, 8192},  // the widest row the fused norm takes
      {GgmlType::kQ8_0, {64, 64, 9}, 256},
      {GgmlType::kQ5_1, {129}, 1280},
      {GgmlType::kQ4_1, {4096}, 768},
      // Widths the 8-bit path does not take (not a multiple of 256): the
      // f32-activation kernel's one launch over the set, the norm in its
      // prologue (SmolLM2-135M's q/k/v, Qwen2.5-0.5B's, Gemma 3 1B's).
      {GgmlType::kQ4_1, {576, 192, 192}, 576},
      {GgmlType::kQ8_0, {896, 128, 128}, 896},
      {GgmlType::kF16, {100, 37}, 1152},
      {GgmlType::kQ5_0, {1536, 1536}, 576},
      {GgmlType::kF32, {33}, 224},
      {GgmlType::kQ4_0, {64}, 8160},    // the widest such row
      {GgmlType::kQ8_0, {49152}, 576},  // SmolLM2's output: 12,288 row blocks, each launch block takes many
  };
  for (const Case& c : cases) {
    for (int staged : {-1, 0}) {
      SCOPED_TRACE(testing::Message() << type_traits(c.type)->name << " cols=" << c.cols << " staged=" << staged);
      const int n = static_cast<int>(c.rows.size());
      const std::vector<float> x = random_floats(rng, c.cols, 3.0f);
      std::vector<float> w = random_floats(rng, c.cols);
      for (float& v : w) v = 1.0f + 0.25f * v;
      const float eps = 1e-5f;
      DeviceBuffer<float> dx(x), dw(w), h_ref(static_cast<size_t>(c.cols)), h_fused(static_cast<size_t>(c.cols));
      std::vector<HostMatrix> hm;
      std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> dmat;
      std::vector<std::unique_ptr<DeviceBuffer<float>>> y_ref, y_fused, bias;
      std::vector<DeviceMatrix> dm;
      for (int i = 0; i < n; ++i) {
        hm.push_back(make_matrix(rng, c.type, c.rows[i], c.cols));
        dmat.push_back(std::make_unique<DeviceBuffer<uint8_t>>(hm.back().bytes));
        dm.push_back(DeviceMatrix{c.type, dmat.back()->get(), c.rows[i], c.cols, hm.back().stride});
        y_ref.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(c.rows[i])));
        y_fused.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(c.rows[i])));
        bias.push_back(std::make_unique<DeviceBuffer<float>>(random_floats(rng, c.rows[i])));
      }
      GemvOptions opt;
      opt.activations = GemvActivations::kQ8;
      opt.q8_staged = staged;
      std::vector<GemvOutput> ref_outs(static_cast<size_t>(n)), fused_outs(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        const GemvEpilogue ep_ref{i == 0 ? bias[i]->get() : nullptr, nullptr};
        ref_outs[i] = GemvOutput{&dm[i], y_ref[i]->get(), ep_ref};
        fused_outs[i] = GemvOutput{&dm[i], y_fused[i]->get(), ep_ref};
      }
      const GemvInputNorm norm{dw.get(), eps, h_fused.get()};
      ASSERT_TRUE(gemv_norm_fuses(opt, fused_outs.data(), n, dx.get(), 1, norm));
      ASSERT_CUDA_OK(rmsnorm(dx.get(), dw.get(), h_ref.get(), 1, c.cols, eps, nullptr));
      ASSERT_CUDA_OK(gemv_fused(opt, ref_outs.data(), n, h_ref.get(), 1, nullptr));
      ASSERT_CUDA_OK(
          gemv_fused_norm(opt, fused_outs.data(), n, dx.get(), GemvInputNorm{dw.get(), eps, h_fused.get()}, nullptr));
      const std::vector<float> hr = h_ref.download(), hf = h_fused.download();
      const std::vector<double> href = norm_reference(x, w, eps);
      for (size_t e = 0; e < hr.size(); ++e) {
        ASSERT_TRUE(std::isfinite(hf[e])) << "normed element " << e << " unwritten";
        ASSERT_EQ(hf[e], hr[e]) << "normed element " << e;
        ASSERT_LE(std::fabs(hf[e] - href[e]), 1e-5 * std::fabs(href[e]) + 1e-6) << "normed element " << e;
      }
      for (int i = 0; i < n; ++i) {
        const std::vector<float> a = y_fused[i]->download(), b = y_ref[i]->download();
        for (size_t e = 0; e < a.size(); ++e) {
          ASSERT_TRUE(std::isfinite(a[e])) << "matrix " << i << " row " << e << " unwritten";
          ASSERT_EQ(a[e], b[e]) << "matrix " << i << " row " << e;
        }
      }
    }
  }
}

TEST(CudaFusion, NormInGemvPrologueWhereItApplies) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> w(1 << 20);
  DeviceBuffer<float> x(16384), y(64), h(16384), g(16384);
  GemvOptions q8;
  q8.activations = GemvActivations::kQ8;
  GemvOptions f32;
  f32.activations = GemvActivations::kF32;
  const DeviceMatrix ok{GgmlType::kQ4_0, w.get(), 64, 4096, row_bytes(GgmlType::kQ4_0, 4096)};
  const DeviceMatrix wide{GgmlType::kQ4_0, w.get(), 8, 8448, row_bytes(GgmlType::kQ4_0, 8448)};
  const DeviceMatrix f16{GgmlType::kF16, w.get(), 64, 4096, row_bytes(GgmlType::kF16, 4096)};
  const GemvOutput o_ok{&ok, y.get(), {}}, o_wide{&wide, y.get(), {}}, o_f16{&f16, y.get(), {}};
  const GemvInputNorm norm{g.get(), 1e-5f, h.get()};
  const DeviceMatrix odd{GgmlType::kQ4_0, w.get(), 64, 576, row_bytes(GgmlType::kQ4_0, 576)};
  const DeviceMatrix odd_q8{GgmlType::kQ8_0, w.get(), 64, 576, row_bytes(GgmlType::kQ8_0, 576)};
  const DeviceMatrix odd_wide{GgmlType::kQ4_0, w.get(), 8, 8224, row_bytes(GgmlType::kQ4_0, 8224)};
  const DeviceMatrix q4k{GgmlType::kQ4_K, w.get(), 8, 256, row_bytes(GgmlType::kQ4_K, 256)};
  const GemvOutput o_odd{&odd, y.get(), {}}, o_odd_wide{&odd_wide, y.get(), {}}, o_q4k{&q4k, y.get(), {}};
  const GemvOutput mixed[2] = {{&odd, y.get(), {}}, {&odd_q8, y.get(), {}}};
  const GemvOutput q4k_set[2] = {{&q4k, y.get(), {}}, {&q4k, y.get(), {}}};
  EXPECT_TRUE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 1, norm));
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 2, norm));  // one token only
  // Where the 8-bit path does not apply, the f32-activation kernel fuses it:
  // f32 activations, a float type, a width that is not a multiple of 256.
  EXPECT_TRUE(gemv_norm_fuses(f32, &o_ok, 1, x.get(), 1, norm));
  EXPECT_TRUE(gemv_norm_fuses(q8, &o_f16, 1, x.get(), 1, norm));
  EXPECT_TRUE(gemv_norm_fuses(q8, &o_odd, 1, x.get(), 1, norm));
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_odd, 1, x.get(), 2, norm));       // one token there too
  EXPECT_FALSE(gemv_norm_fuses(q8, mixed, 2, x.get(), 1, norm));        // one type per launch
  EXPECT_TRUE(gemv_norm_fuses(q8, &o_q4k, 1, x.get(), 1, norm));        // 8-bit path
  EXPECT_FALSE(gemv_norm_fuses(f32, q4k_set, 2, x.get(), 1, norm));     // K-quants: no f32 set kernel
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_odd_wide, 1, x.get(), 1, norm));  // rows over 8192
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_wide, 1, x.get(), 1, norm));      // rows over 8192
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get() + 1, 1, norm));    // x not 16-byte aligned
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 1, GemvInputNorm{g.get() + 1, 1e-5f, h.get()}));  // weight
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 1, GemvInputNorm{nullptr, 1e-5f, h.get()}));
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 1, GemvInputNorm{g.get(), 1e-5f, h.get() + 2}));  // out
  EXPECT_FALSE(gemv_norm_fuses(q8, &o_ok, 1, x.get(), 1, GemvInputNorm{g.get(), 1e-5f, x.get()}));      // out == x
  // Where it does not fuse, the call says so instead of computing something else.
  EXPECT_EQ(gemv_fused_norm(q8, &o_wide, 1, x.get(), norm, nullptr).code, cudaErrorInvalidValue);
  EXPECT_EQ(gemv_fused_norm(q8, &o_ok, 1, x.get(), GemvInputNorm{g.get(), 1e-5f, x.get()}, nullptr).code,
            cudaErrorInvalidValue);
}

// glu(gate, up) then the product, against the GLU in the product's prologue:
// every output bit for bit (the ffn_down of a decode step: SwiGLU for llama,
// GeGLU for gemma), with and without a residual, staged and direct loads.
// The fused call reads gate and up and writes neither.
TEST(CudaFusion, GluInGemvPrologueEqualsGluThenGemv) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(79);
  struct Case {
    GgmlType type;
    int64_t rows, cols;
  };
  const std::vector<Case> cases = {
      {GgmlType::kQ4_0, 4096, 14336},                                // the 8B shape's ffn_down
      {GgmlType::kQ4_K, 640, 2048},                                  // gemma 3 270M
      {GgmlType::kQ6_K, 576, 2048},                                  // Q6_K rows of 2048: whole 16-byte words
      {GgmlType::kQ8_0, 300, 256},    {GgmlType::kQ4_1, 576, 1536},  // the last: SmolLM2-135M
  };
  for (const Case& c : cases) {
    for (const GluInputKind kind : {GluInputKind::kSwiGlu, GluInputKind::kGeGluTanh}) {
      for (const bool residual : {false, true}) {
        for (const int staged : {-1, 0}) {
          SCOPED_TRACE(testing::Message()
                       << type_traits(c.type)->name << " cols=" << c.cols << " kind=" << static_cast<int>(kind)
                       << " residual=" << residual << " staged=" << staged);
          const std::vector<float> gate = random_floats(rng, c.cols, 2.0f), up = random_floats(rng, c.cols);
          const std::vector<float> base = random_floats(rng, c.rows);
          DeviceBuffer<float> dg(gate), du(up), glu_out(static_cast<size_t>(c.cols));
          DeviceBuffer<float> y_ref(static_cast<size_t>(c.rows)), y_fused(static_cast<size_t>(c.rows));
          y_ref.upload(residual ? base : std::vector<float>(base.size(), std::nanf("")));
          y_fused.upload(residual ? base : std::vector<float>(base.size(), std::nanf("")));
          const HostMatrix hm = make_matrix(rng, c.type, c.rows, c.cols);
          DeviceBuffer<uint8_t> dmat(hm.bytes);
          const DeviceMatrix dm{c.type, dmat.get(), c.rows, c.cols, hm.stride};
          GemvOptions opt;
          opt.activations = GemvActivations::kQ8;
          opt.q8_staged = staged;
          GemvOutput ref{&dm, y_ref.get(), {}}, fused{&dm, y_fused.get(), {}};
          if (residual) {
            ref.epilogue.residual = y_ref.get();
            fused.epilogue.residual = y_fused.get();
          }
          const GemvInputGlu glu{du.get(), kind};
          ASSERT_TRUE(gemv_glu_fuses(opt, &fused, 1, dg.get(), 1, glu));
          if (kind == GluInputKind::kSwiGlu) {
            ASSERT_CUDA_OK(swiglu(dg.get(), du.get(), glu_out.get(), c.cols, nullptr));
          } else {
            ASSERT_CUDA_OK(geglu_tanh(dg.get(), du.get(), glu_out.get(), c.cols, nullptr));
          }
          ASSERT_CUDA_OK(gemv_fused(opt, &ref, 1, glu_out.get(), 1, nullptr));
          ASSERT_CUDA_OK(gemv_fused_glu(opt, &fused, 1, dg.get(), glu, nullptr));
          const std::vector<float> a = y_fused.download(), b = y_ref.download();
          for (size_t e = 0; e < a.size(); ++e) {
            ASSERT_TRUE(std::isfinite(a[e])) << "row " << e << " unwritten";
            ASSERT_EQ(a[e], b[e]) << "row " << e;
          }
          EXPECT_EQ(dg.download(), gate);
          EXPECT_EQ(du.download(), up);
        }
      }
    }
  }
}

TEST(CudaFusion, GluInGemvPrologueWhereItApplies) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> w(1 << 20);
  DeviceBuffer<float> gate(16384), up(16384), y(64);
  GemvOptions q8;
  q8.activations = GemvActivations::kQ8;
  GemvOptions f32;
  f32.activations = GemvActivations::kF32;
  const DeviceMatrix ok{GgmlType::kQ4_0, w.get(), 64, 4096, row_bytes(GgmlType::kQ4_0, 4096)};
  const DeviceMatrix f16{GgmlType::kF16, w.get(), 64, 4096, row_bytes(GgmlType::kF16, 4096)};
  const GemvOutput o_ok{&ok, y.get(), {}}, o_f16{&f16, y.get(), {}};
  const GemvInputGlu glu{up.get(), GluInputKind::kSwiGlu};
  EXPECT_TRUE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 1, glu));
  EXPECT_TRUE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 1, GemvInputGlu{up.get(), GluInputKind::kGeGluTanh}));
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 2, glu));      // one token only
  EXPECT_FALSE(gemv_glu_fuses(f32, &o_ok, 1, gate.get(), 1, glu));     // the 8-bit path only
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_f16, 1, gate.get(), 1, glu));     // a float type
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_ok, 1, gate.get() + 1, 1, glu));  // gate not aligned
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 1, GemvInputGlu{up.get() + 2, GluInputKind::kSwiGlu}));
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 1, GemvInputGlu{nullptr, GluInputKind::kSwiGlu}));
  EXPECT_FALSE(gemv_glu_fuses(q8, &o_ok, 1, gate.get(), 1, GemvInputGlu{up.get(), static_cast<GluInputKind>(7)}));
  EXPECT_EQ(gemv_fused_glu(q8, &o_f16, 1, gate.get(), glu, nullptr).code, cudaErrorInvalidValue);
}

// rope(q), rope(k), store_kv against rope_store_kv: q, k and both caches
// byte for byte; q also against the CPU rope (1e-5, as CudaRope.*).
TEST(CudaFusion, RopeStoreKvEqualsRopeThenStore) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(78);
  struct Case {
    KvPrecision dtype;
    RopeOrder order;
    int n_q, n_kv, head_dim;
  };
  const Case cases[] = {
      {KvPrecision::kF16, RopeOrder::kAdjacent, 32, 8, 128},    {KvPrecision::kF16, RopeOrder::kNeox, 9, 3, 64},
      {KvPrecision::kFp8E4M3, RopeOrder::kAdjacent, 4, 4, 256}, {KvPrecision::kFp8E4M3, RopeOrder::kNeox, 14, 2, 64},
      {KvPrecision::kQ8_0, RopeOrder::kNeox, 8, 2, 64},         {KvPrecision::kQ8_0, RopeOrder::kAdjacent, 6, 2, 96}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "n_q=" << c.n_q << " n_kv=" << c.n_kv << " head_dim=" << c.head_dim
                                    << " dtype=" << static_cast<int>(c.dtype));
    const int64_t n_tokens = 5, bs = 16, n_blocks = 4;
    const RopeParams p{c.head_dim, c.head_dim, 500000.0f, 1.0f, c.order};
    std::vector<int32_t> pos = {0, 17, 3, 1000, 63}, slots = {5, 40, -1, 63, 16};
    const int64_t row = static_cast<int64_t>(c.n_kv) * c.head_dim;
    const std::vector<float> q = random_floats(rng, n_tokens * c.n_q * c.head_dim);
    const std::vector<float> k = random_floats(rng, n_tokens * row), v = random_floats(rng, n_tokens * row);
    const size_t elem = c.dtype == KvPrecision::kF16 ? 2 : 1;
    const size_t cache_bytes = static_cast<size_t>(n_blocks * bs * row) * elem;
    DeviceBuffer<float> q1(q), q2(q), k1(k), k2(k), dv(v);
    DeviceBuffer<int32_t> dpos(pos), dslots(slots);
    DeviceBuffer<uint8_t> kc1(cache_bytes), vc1(cache_bytes), kc2(cache_bytes), vc2(cache_bytes);
    const float ks = c.dtype == KvPrecision::kF16 ? 1.0f : 0.05f, vs = c.dtype == KvPrecision::kF16 ? 1.0f : 0.02f;
    const PagedKvCache cache1{kc1.get(), vc1.get(), c.dtype, ks, vs, n_blocks, static_cast<int>(bs),
                              c.n_kv,    c.head_dim};
    // q8_0's scales (unused by the other dtypes).
    const size_t n_scales = static_cast<size_t>(n_blocks * bs * row / 32);
    DeviceBuffer<uint16_t> kd1(n_scales), vd1(n_scales), kd2(n_scales), vd2(n_scales);
    PagedKvCache cache1q = cache1;
    cache1q.k_d = kd1.get();
    cache1q.v_d = vd1.get();
    PagedKvCache cache2 = cache1;
    cache2.k = kc2.get();
    cache2.v = vc2.get();
    cache2.k_d = kd2.get();
    cache2.v_d = vd2.get();
    ASSERT_CUDA_OK(rope(q1.get(), n_tokens, c.n_q, dpos.get(), p, nullptr));
    ASSERT_CUDA_OK(rope(k1.get(), n_tokens, c.n_kv, dpos.get(), p, nullptr));
    ASSERT_CUDA_OK(store_kv(cache1q, k1.get(), dv.get(), dslots.get(), n_tokens, nullptr));
    ASSERT_CUDA_OK(
        rope_store_kv(cache2, q2.get(), c.n_q, k2.get(), dv.get(), dpos.get(), dslots.get(), n_tokens, p, nullptr));
    const std::vector<float> a = q1.download(), b = q2.download();
    std::vector<float> qref = q;
    kernels::rope(qref.data(), n_tokens, c.n_q, pos.data(), p);
    for (size_t e = 0; e < a.size(); ++e) {
      ASSERT_TRUE(std::isfinite(b[e])) << "q element " << e;
      ASSERT_EQ(a[e], b[e]) << "q element " << e;
      ASSERT_LE(std::fabs(b[e] - qref[e]), 1e-5 * (std::fabs(qref[e]) + 4.0)) << "q element " << e;
    }
    EXPECT_EQ(k1.download(), k2.download());
    const std::vector<uint8_t> k_a = kc1.download(), k_b = kc2.download(), v_a = vc1.download(), v_b = vc2.download();
    EXPECT_EQ(k_a, k_b);
    EXPECT_EQ(v_a, v_b);
    EXPECT_EQ(kd1.download(), kd2.download());
    EXPECT_EQ(vd1.download(), vd2.download());
    // The padded token (slot -1) wrote nothing: slot 0's bytes stay poisoned in both.
    EXPECT_EQ(k_b[0], 0xff);
  }
}

TEST(CudaFusion, RopeStoreKvRejectsAMismatchedHeadDim) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<float> q(256), k(256), v(256);
  DeviceBuffer<int32_t> pos(std::vector<int32_t>{0}), slots(std::vector<int32_t>{0});
  DeviceBuffer<uint8_t> kc(4096), vc(4096);
  const PagedKvCache cache{kc.get(), vc.get(), KvPrecision::kF16, 1.0f, 1.0f, 1, 16, 1, 64};
  const RopeParams p{128, 128, 10000.0f, 1.0f, RopeOrder::kAdjacent};
  EXPECT_EQ(rope_store_kv(cache, q.get(), 1, k.get(), v.get(), pos.get(), slots.get(), 1, p, nullptr).code,
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
