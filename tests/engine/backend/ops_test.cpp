// Each op of the backend interface (engine/backend/ops.h) against a scalar
// reference in double precision, on fresh random data. Compiled twice: the
// CPU backend (label unit), and with HEARTH_OPS_TEST_CUDA the CUDA backend
// (label gpu; every test skips where no CUDA device exists).
//
// Tolerances, as normalised mean squared error (sum (a-b)^2 / sum b^2): f32
// weights 1e-6 (exact on the CPU up to summation order; the GPU's cuBLAS path
// rounds activations to f16, 2^-11 relative, ~1e-7); quantized weights 1e-4
// (the CPU quantizes activations to 8 bits, ~1e-5 measured); element-wise
// ops 1e-10; attention 1e-5 (K/V are stored in f16).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/ops.h"
#include "hearth/run_info.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_ops.h"
#if defined(HEARTH_OPS_TEST_CUDA)
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_context.h"
#else
#include "engine/backend/cpu/cpu_backend.h"
#endif

namespace hearth::backend::test {
namespace {

namespace k = hearth::kernels;

constexpr std::int32_t kLayers = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 64;
constexpr std::int64_t kEmbd = 128, kQDim = kHeads * kHeadDim, kKvDim = kKvHeads * kHeadDim;

std::unique_ptr<Ops> make_backend(std::string& skip, KvPrecision kv = KvPrecision::kF16) {
#if defined(HEARTH_OPS_TEST_CUDA)
  if (cuda::device_count() == 0) {
    skip = "no CUDA device";
    return nullptr;
  }
  cuda::CudaBackendOptions options;
  options.kv_precision = kv;
  auto b = cuda::CudaBackend::create(options);
  if (!b) {
    skip = b.error().message;
    return nullptr;
  }
  return std::move(b).value();
#else
  skip.clear();
  return std::make_unique<cpu::CpuBackend>(cpu::CpuBackendOptions{2, true, kv});
#endif
}

std::vector<float> random_floats(std::mt19937& rng, std::int64_t n, float sigma = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

double nmse(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den > 0 ? num / den : num;
}

// A quantized weight matrix: its bytes (host) and its values as the kernels see them.
struct HostMatrix {
  k::GgmlType type;
  std::int64_t rows, cols;
  std::vector<std::uint8_t> bytes;
  std::vector<float> values;  // [rows][cols], dequantized
};

HostMatrix random_matrix(std::mt19937& rng, k::GgmlType type, std::int64_t rows, std::int64_t cols) {
  const k::QuantOps& q = *k::quant_ops(type, k::CpuLevel::kScalar);
  HostMatrix m{type, rows, cols, {}, std::vector<float>(static_cast<std::size_t>(rows * cols))};
  const std::size_t stride = k::row_bytes(type, cols);
  m.bytes.resize(stride * static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = random_floats(rng, cols);
    q.quantize_row(row.data(), m.bytes.data() + r * stride, cols);
    q.dequant_row(m.bytes.data() + r * stride, m.values.data() + r * cols, cols);
  }
  return m;
}

double weight_tolerance(k::GgmlType type) {
  return type == k::GgmlType::kF32 ? 1e-6 : 1e-4;
}

// One backend with the test's shape, activations and a KV pool of 8 blocks of 4.
class BackendOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { reset(KvPrecision::kF16); }

  // A fresh backend whose KV cache has precision kv.
  void reset(KvPrecision kv) {
    std::string skip;
    ops_ = make_backend(skip, kv);
    if (!ops_) GTEST_SKIP() << skip;
    ASSERT_TRUE(ops_->set_shape(ModelShape{kLayers, kHeads, kKvHeads, kHeadDim}).ok());
    a_ = ops_->add_activation(kEmbd, "a");
    b_ = ops_->add_activation(kEmbd, "b");
    q_ = ops_->add_activation(kQDim, "q");
    kk_ = ops_->add_activation(kKvDim, "k");
    v_ = ops_->add_activation(kKvDim, "v");
    out_ = ops_->add_activation(kQDim, "out");
  }

  Matrix upload(const HostMatrix& m, MatrixUse use = MatrixUse::kLinear) {
    auto r = ops_->upload_matrix(
        HostTensor{"w", static_cast<std::uint32_t>(m.type), m.rows, m.cols, m.bytes.data(), m.bytes.size()}, use);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : Matrix{};
  }
  Vector upload(const std::vector<float>& v) {
    auto r = ops_->upload_vector(HostTensor{"v", static_cast<std::uint32_t>(k::GgmlType::kF32), 1,
                                            static_cast<std::int64_t>(v.size()), v.data(), v.size() * sizeof(float)});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : Vector{};
  }

  // A step of one sequence of n tokens at positions start.. (blocks of 4 tokens).
  void begin(std::int64_t n, std::int32_t start = 0) {
    tokens_.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t t = 0; t < n; ++t) tokens_[static_cast<std::size_t>(t)] = static_cast<std::int32_t>((t * 7) % 11);
    steps_ = {SequenceStep{tokens_, start, table_, true, true}};
    ASSERT_TRUE(ops_->begin_step(steps_).ok());
  }
  void write(ActivationId id, const std::vector<float>& data) { ASSERT_TRUE(ops_->write(ops_->act(id), data).ok()); }
  std::vector<float> read(ActivationId id, std::size_t n) {
    std::vector<float> out(n);
    EXPECT_TRUE(ops_->read(ops_->act(id), out).ok());
    return out;
  }
  void finish() { ASSERT_TRUE(ops_->finish_step().ok()); }

  // 11 tokens through store_kv and attention (layer 1): a 9-token prompt in
  // one step, then 2 more on top of its cache; the outputs of all 11.
  std::vector<float> prompt_then_two(const std::vector<float>& q, const std::vector<float>& kv_k,
                                     const std::vector<float>& kv_v, float scale, std::int32_t window) {
    std::vector<float> got;
    for (const auto& [start, n] : {std::pair<std::int64_t, std::int64_t>{0, 9}, {9, 2}}) {
      begin(n, static_cast<std::int32_t>(start));
      write(q_, std::vector<float>(q.begin() + start * kQDim, q.begin() + (start + n) * kQDim));
      write(kk_, std::vector<float>(kv_k.begin() + start * kKvDim, kv_k.begin() + (start + n) * kKvDim));
      write(v_, std::vector<float>(kv_v.begin() + start * kKvDim, kv_v.begin() + (start + n) * kKvDim));
      ops_->store_kv(OpName{"store_kv", 1}, 1, ops_->act(kk_), ops_->act(v_));
      ops_->attention(OpName{"attention", 1}, 1, ops_->act(q_), ops_->act(out_), scale, window);
      finish();
      const std::vector<float> part = read(out_, static_cast<std::size_t>(n * kQDim));
      got.insert(got.end(), part.begin(), part.end());
    }
    return got;
  }

  std::mt19937 rng_{1234};
  std::unique_ptr<Ops> ops_;
  ActivationId a_ = 0, b_ = 0, q_ = 0, kk_ = 0, v_ = 0, out_ = 0;
  std::vector<std::int32_t> tokens_;
  std::vector<std::int32_t> table_{5, 2, 7, 0, 3, 1};  // out of order on purpose
  std::vector<SequenceStep> steps_;
};

// One suite name per backend: both executables register their tests with ctest.
#if defined(HEARTH_OPS_TEST_CUDA)
class CudaBackendOps : public BackendOpsTest {};
#define BACKEND_OPS CudaBackendOps
#else
class CpuBackendOps : public BackendOpsTest {};
#define BACKEND_OPS CpuBackendOps
#endif

std::vector<double> matvec(const HostMatrix& w, const std::vector<float>& x, std::int64_t n,
                           const std::vector<float>* bias = nullptr) {
  std::vector<double> y(static_cast<std::size_t>(n * w.rows));
  for (std::int64_t t = 0; t < n; ++t) {
    for (std::int64_t r = 0; r < w.rows; ++r) {
      double s = bias ? (*bias)[static_cast<std::size_t>(r)] : 0.0;
      for (std::int64_t c = 0; c < w.cols; ++c) s += double{w.values[r * w.cols + c]} * x[t * w.cols + c];
      y[t * w.rows + r] = s;
    }
  }
  return y;
}

std::vector<double> rms_norm_ref(const std::vector<float>& x, const std::vector<float>& w, std::int64_t rows,
                                 std::int64_t width, double eps) {
  std::vector<double> y(static_cast<std::size_t>(rows * width));
  for (std::int64_t t = 0; t < rows; ++t) {
    double ss = 0;
    for (std::int64_t i = 0; i < width; ++i) ss += double{x[t * width + i]} * x[t * width + i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(width) + eps);
    for (std::int64_t i = 0; i < width; ++i) y[t * width + i] = x[t * width + i] * inv * w[i];
  }
  return y;
}

TEST_F(BACKEND_OPS, EmbeddingLooksUpEachTokensRow) {
  for (const k::GgmlType type : {k::GgmlType::kF32, k::GgmlType::kQ8_0, k::GgmlType::kQ4_0}) {
    const HostMatrix table = random_matrix(rng_, type, 11, kEmbd);
    const Matrix m = upload(table, MatrixUse::kEmbedding);
    begin(5);
    ops_->embed(OpName{"token_embd"}, m, ops_->act(a_));
    finish();
    std::vector<double> want;
    for (const std::int32_t id : tokens_)
      want.insert(want.end(), table.values.begin() + id * kEmbd, table.values.begin() + (id + 1) * kEmbd);
    EXPECT_LT(nmse(read(a_, 5 * kEmbd), want), 1e-12) << k::type_traits(type)->name;
  }
}

TEST_F(BACKEND_OPS, RmsNormMatchesTheReference) {
  const std::int64_t n = 6;
  const std::vector<float> x = random_floats(rng_, n * kEmbd, 3.0f), w = random_floats(rng_, kEmbd);
  const Vector wv = upload(w);
  begin(n);
  write(a_, x);
  ops_->rms_norm(OpName{"attn_norm", 0}, ops_->act(a_), wv, 1e-5f, ops_->act(b_));
  finish();
  EXPECT_LT(nmse(read(b_, n * kEmbd), rms_norm_ref(x, w, n, kEmbd, 1e-5)), 1e-10);
}

// 3 tokens run the CUDA GEMV, 12 its cuBLAS path.
TEST_F(BACKEND_OPS, LinearWithAndWithoutBiasMatchesTheReference) {
  for (const std::int64_t n : {3, 12}) {
    for (const k::GgmlType type : {k::GgmlType::kF32, k::GgmlType::kQ8_0, k::GgmlType::kQ4_0}) {
      const HostMatrix w = random_matrix(rng_, type, kQDim, kEmbd);
      const std::vector<float> x = random_floats(rng_, n * kEmbd), bias = random_floats(rng_, kQDim);
      const Matrix wm = upload(w);
      const Vector bv = upload(bias);
      begin(n);
      write(a_, x);
      ops_->linear(OpName{"wq", 1}, wm, ops_->act(a_), ops_->act(q_));
      ops_->linear(OpName{"wq", 1}, wm, ops_->act(a_), ops_->act(out_), bv);
      finish();
      const std::string what = std::string(k::type_traits(type)->name) + " n=" + std::to_string(n);
      EXPECT_LT(nmse(read(q_, n * kQDim), matvec(w, x, n)), weight_tolerance(type)) << what;
      EXPECT_LT(nmse(read(out_, n * kQDim), matvec(w, x, n, &bias)), weight_tolerance(type)) << what;
    }
  }
}

TEST_F(BACKEND_OPS, LinearManyGivesEachMatrixsProductAndBias) {
  for (const std::int64_t n : {1, 10}) {
    const HostMatrix wq = random_matrix(rng_, k::GgmlType::kQ8_0, kQDim, kEmbd);
    const HostMatrix wk = random_matrix(rng_, k::GgmlType::kQ8_0, kKvDim, kEmbd);
    const HostMatrix wv = random_matrix(rng_, k::GgmlType::kQ4_0, kKvDim, kEmbd);  // another activation type
    const std::vector<float> x = random_floats(rng_, n * kEmbd), bk = random_floats(rng_, kKvDim);
    const Matrix q = upload(wq), km = upload(wk), vm = upload(wv);
    const Vector bkv = upload(bk);
    begin(n);
    write(a_, x);
    const LinearOut outs[] = {{q, ops_->act(q_), {}}, {km, ops_->act(kk_), bkv}, {vm, ops_->act(v_), {}}};
    ops_->linear_many(OpName{"qkv", 0}, ops_->act(a_), outs);
    finish();
    EXPECT_LT(nmse(read(q_, n * kQDim), matvec(wq, x, n)), 1e-4) << n;
    EXPECT_LT(nmse(read(kk_, n * kKvDim), matvec(wk, x, n, &bk)), 1e-4) << n;
    EXPECT_LT(nmse(read(v_, n * kKvDim), matvec(wv, x, n)), 1e-4) << n;
  }
}

TEST_F(BACKEND_OPS, LinearResidualAddsTheProductToTheStream) {
  for (const std::int64_t n : {2, 9}) {
    const HostMatrix w = random_matrix(rng_, k::GgmlType::kF32, kEmbd, kQDim);
    const std::vector<float> x = random_floats(rng_, n * kQDim), r = random_floats(rng_, n * kEmbd);
    const Matrix wm = upload(w);
    begin(n);
    write(q_, x);
    write(a_, r);
    ops_->linear_residual(OpName{"attn_output", 0}, wm, ops_->act(q_), ops_->act(a_), ops_->act(b_));
    finish();
    std::vector<double> want = matvec(w, x, n);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += r[i];
    EXPECT_LT(nmse(read(a_, n * kEmbd), want), 1e-6) << n;
  }
}

// Both pair orders, q and k with their own head counts, positions from 3 on.
TEST_F(BACKEND_OPS, RopeRotatesEachHeadByItsPosition) {
  for (const bool neox : {false, true}) {
    const std::int64_t n = 5;
    const std::int32_t start = 3;
    const std::vector<float> q = random_floats(rng_, n * kQDim), kv = random_floats(rng_, n * kKvDim);
    begin(n, start);
    write(q_, q);
    write(kk_, kv);
    const RopeConfig c{kHeadDim, 10000.0f, 2.0f, neox};
    ops_->rope(OpName{"rope", 0}, ops_->act(q_), kHeads, ops_->act(kk_), kKvHeads, c);
    finish();
    const auto rotate = [&](const std::vector<float>& x, std::int64_t heads) {
      std::vector<double> y(x.begin(), x.end());
      for (std::int64_t t = 0; t < n; ++t) {
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::int64_t base = (t * heads + h) * kHeadDim;
          for (std::int64_t i = 0; i < kHeadDim / 2; ++i) {
            const double theta = static_cast<double>(start + t) / 2.0 *
                                 std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(kHeadDim));
            const std::int64_t a = neox ? base + i : base + 2 * i, b = neox ? a + kHeadDim / 2 : a + 1;
            y[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
            y[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
          }
        }
      }
      return y;
    };
    EXPECT_LT(nmse(read(q_, n * kQDim), rotate(q, kHeads)), 1e-10) << neox;
    EXPECT_LT(nmse(read(kk_, n * kKvDim), rotate(kv, kKvHeads)), 1e-10) << neox;
  }
}

// Attention of n_total tokens over f16-rounded K/V in double: causal, or
// over the last `window` positions when window > 0.
// round_f16 false: over the exact K/V.
std::vector<double> attention_ref(const std::vector<float>& q, const std::vector<float>& kv_k,
                                  const std::vector<float>& kv_v, std::int64_t n_total, float scale,
                                  std::int64_t window, bool round_f16 = true) {
  const auto f16 = [round_f16](float x) { return round_f16 ? double{k::fp16_to_f32(k::f32_to_fp16(x))} : double{x}; };
  std::vector<double> want(static_cast<std::size_t>(n_total * kQDim));
  for (std::int64_t t = 0; t < n_total; ++t) {
    const std::int64_t first = window > 0 ? std::max<std::int64_t>(0, t - window + 1) : 0;
    for (std::int64_t h = 0; h < kHeads; ++h) {
      const std::int64_t g = h / (kHeads / kKvHeads);
      std::vector<double> p(static_cast<std::size_t>(t + 1), 0.0);
      double mx = -1e300, sum = 0;
      for (std::int64_t s = first; s <= t; ++s) {
        double d = 0;
        for (std::int64_t i = 0; i < kHeadDim; ++i)
          d += q[(t * kHeads + h) * kHeadDim + i] * f16(kv_k[(s * kKvHeads + g) * kHeadDim + i]);
        p[s] = d * scale;
        mx = std::max(mx, p[s]);
      }
      for (std::int64_t s = first; s <= t; ++s) sum += (p[s] = std::exp(p[s] - mx));
      for (std::int64_t i = 0; i < kHeadDim; ++i) {
        double o = 0;
        for (std::int64_t s = first; s <= t; ++s) o += p[s] / sum * f16(kv_v[(s * kKvHeads + g) * kHeadDim + i]);
        want[(t * kHeads + h) * kHeadDim + i] = o;
      }
    }
  }
  return want;
}

// A 9-token prompt in one step, then 2 more tokens on top of its cache: each
// token attends causally to every earlier position (or, with a window of 5,
// to the last 5 up to its own), through the block table.
TEST_F(BACKEND_OPS, StoreKvAndAttentionMatchCausalAttention) {
  ASSERT_TRUE(ops_->allocate_kv(KvLayout{8, 4}).ok());
  const std::int64_t n_total = 11;
  const std::vector<float> q = random_floats(rng_, n_total * kQDim), kv_k = random_floats(rng_, n_total * kKvDim),
                           kv_v = random_floats(rng_, n_total * kKvDim);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (const std::int32_t window : {0, 5}) {
    const std::vector<float> got = prompt_then_two(q, kv_k, kv_v, scale, window);
    const std::vector<double> want = attention_ref(q, kv_k, kv_v, n_total, scale, window);
    EXPECT_LT(nmse(got, want), 1e-5) << "window " << window;
    if (window > 0) {  // the window matters: causal attention differs on the late tokens
      const std::vector<double> causal = attention_ref(q, kv_k, kv_v, n_total, scale, 0);
      EXPECT_GT(nmse(got, causal), 1e-3);
    }
  }
}

// Each KV precision against attention over the exact K/V, with K and V of
// very small and very large magnitudes (1e-3 and 1e3 standard deviations: fp8
// with a fixed scale of 1 would flush the first to zero and saturate the
// second at 448; its calibrated per-layer scales follow them). The prompt of
// 9 tokens calibrates, the 2 tokens after it are stored with those scales.
// Bounds (normalised mean squared error of the outputs): f16 1e-5, q8_0 1e-4
// (int8 per 32: ~4e-3 relative a value), fp8 5e-3 (3 mantissa bits: ~4%
// relative a value, averaged by the softmax).
TEST_F(BACKEND_OPS, EveryKvPrecisionFollowsTheMagnitudeOfItsValues) {
  const std::int64_t n_total = 11;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (const KvPrecision kv : {KvPrecision::kF16, KvPrecision::kQ8_0, KvPrecision::kFp8E4M3}) {
    for (const float magnitude : {1e-3f, 1.0f, 1e3f}) {
      SCOPED_TRACE(std::string(hearth::to_string(kv)) + " magnitude " + std::to_string(magnitude));
      reset(kv);
      if (!ops_) return;
      ASSERT_TRUE(ops_->allocate_kv(KvLayout{8, 4}).ok());
      // q scaled against K so that the scores stay O(1) and the softmax is not one-hot.
      const std::vector<float> q = random_floats(rng_, n_total * kQDim, 1.0f / magnitude),
                               kv_k = random_floats(rng_, n_total * kKvDim, magnitude),
                               kv_v = random_floats(rng_, n_total * kKvDim, magnitude);
      const std::vector<float> got = prompt_then_two(q, kv_k, kv_v, scale, 0);
      const std::vector<double> want = attention_ref(q, kv_k, kv_v, n_total, scale, 0, false);
      const double bound = kv == KvPrecision::kF16 ? 1e-5 : kv == KvPrecision::kQ8_0 ? 1e-4 : 5e-3;
      EXPECT_LT(nmse(got, want), bound);
    }
  }
}

// Gemma's Q/K norm: each head of head_dim floats normed on its own.
TEST_F(BACKEND_OPS, HeadRmsNormNormsEachHeadAlone) {
  const std::int64_t n = 3;
  std::vector<float> x = random_floats(rng_, n * kQDim, 2.0f);
  for (std::int64_t i = 0; i < kHeadDim; ++i) x[static_cast<std::size_t>(kHeadDim + i)] *= 50.0f;  // one loud head
  const std::vector<float> w = random_floats(rng_, kHeadDim);
  const Vector wv = upload(w);
  begin(n);
  write(q_, x);
  ops_->head_rms_norm(OpName{"attn_q_norm", 0}, ops_->act(q_), kHeads, wv, 1e-6f);
  finish();
  EXPECT_LT(nmse(read(q_, n * kQDim), rms_norm_ref(x, w, n * kHeads, kHeadDim, 1e-6)), 1e-10);
}

TEST_F(BACKEND_OPS, ScaleMultipliesEveryElement) {
  const std::int64_t n = 5;
  const std::vector<float> x = random_floats(rng_, n * kEmbd);
  begin(n);
  write(a_, x);
  ops_->scale(OpName{"embd_scale"}, ops_->act(a_), 25.2982f);
  finish();
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = double{x[i]} * 25.2982f;
  EXPECT_LT(nmse(read(a_, x.size()), want), 1e-12);
}

TEST_F(BACKEND_OPS, GegluTanhIsGeluTimesUp) {
  const std::int64_t n = 4;
  const std::vector<float> g = random_floats(rng_, n * kEmbd, 3.0f), u = random_floats(rng_, n * kEmbd);
  begin(n);
  write(a_, g);
  write(b_, u);
  ops_->glu(OpName{"ffn_glu", 0}, GluKind::kGeGluTanh, ops_->act(a_), ops_->act(b_));
  finish();
  std::vector<double> want(g.size());
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    want[i] = 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))) * u[i];
  }
  EXPECT_LT(nmse(read(a_, g.size()), want), 1e-10);
}

TEST_F(BACKEND_OPS, GluAndAddAreElementWise) {
  const std::int64_t n = 4;
  const std::vector<float> g = random_floats(rng_, n * kEmbd), u = random_floats(rng_, n * kEmbd);
  begin(n);
  write(a_, g);
  write(b_, u);
  ops_->glu(OpName{"ffn_glu", 0}, GluKind::kSwiGlu, ops_->act(a_), ops_->act(b_));
  ops_->add(OpName{"add", 0}, ops_->act(b_), ops_->act(a_));
  finish();
  std::vector<double> glu(g.size()), sum(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    glu[i] = g[i] / (1.0 + std::exp(-double{g[i]})) * u[i];
    sum[i] = u[i] + glu[i];
  }
  EXPECT_LT(nmse(read(a_, g.size()), glu), 1e-10);
  EXPECT_LT(nmse(read(b_, g.size()), sum), 1e-10);
}

// Two sequences: the first wants its last token's logits, the second all of
// its tokens'; a third wants none. Rows come back in step order.
TEST_F(BACKEND_OPS, LogitsNormAndProjectTheWantedRowsOnly) {
  const HostMatrix out = random_matrix(rng_, k::GgmlType::kQ8_0, 40, kEmbd);
  const std::vector<float> norm = random_floats(rng_, kEmbd);
  ops_->set_output(upload(out));
  const Vector nv = upload(norm);
  const std::vector<std::int32_t> t1{1, 2, 3}, t2{4, 5}, t3{6};
  const std::vector<SequenceStep> steps{SequenceStep{t1, 0, table_, true, false},
                                        SequenceStep{t2, 0, table_, true, true},
                                        SequenceStep{t3, 0, table_, false, false}};
  const std::vector<float> x = random_floats(rng_, 6 * kEmbd, 2.0f);
  ASSERT_TRUE(ops_->begin_step(steps).ok());
  write(a_, x);
  std::vector<float> logits(3 * 40, -1.0f);
  ops_->logits(OpName{"output"}, ops_->act(a_), nv, 1e-5f, ops_->act(b_), logits);
  finish();
  std::vector<float> rows;
  for (const std::int64_t r : {2, 3, 4}) rows.insert(rows.end(), x.begin() + r * kEmbd, x.begin() + (r + 1) * kEmbd);
  const std::vector<double> normed = rms_norm_ref(rows, norm, 3, kEmbd, 1e-5);
  EXPECT_LT(nmse(logits, matvec(out, std::vector<float>(normed.begin(), normed.end()), 3)), 1e-4);
}

// Steps whose rows wanting logits are all greedy: a device backend returns
// each row's arg-max (greedy_tokens) in place of the logits, the same index
// as the host's arg-max of the logits the same step gives otherwise (the
// lowest among equal maxima); the CPU returns the logits as ever. A step
// with one non-greedy row returns logits on every backend.
TEST_F(BACKEND_OPS, GreedyStepsReturnEachRowsArgMax) {
  const std::int64_t vocab = 3000;
  const HostMatrix out = random_matrix(rng_, k::GgmlType::kQ8_0, vocab, kEmbd);
  ops_->set_output(upload(out));
  const std::vector<float> norm = random_floats(rng_, kEmbd);  // the CPU's vectors are views: kept alive
  const Vector nv = upload(norm);
  const std::vector<std::int32_t> t1{1, 2, 3}, t2{4, 5}, t3{6};
  const std::vector<float> x = random_floats(rng_, 6 * kEmbd, 2.0f);
  // greedy: which of the two sequences wanting logits are greedy.
  auto run = [&](bool g1, bool g2, std::vector<float>& logits) {
    std::vector<SequenceStep> steps{SequenceStep{t1, 0, table_, true, false}, SequenceStep{t2, 0, table_, true, false},
                                    SequenceStep{t3, 0, table_, false, false}};
    steps[0].greedy = g1;
    steps[1].greedy = g2;
    logits.assign(static_cast<std::size_t>(2 * vocab), -1.0f);
    EXPECT_TRUE(ops_->begin_step(steps).ok());
    write(a_, x);
    ops_->logits(OpName{"output"}, ops_->act(a_), nv, 1e-5f, ops_->act(b_), logits);
    finish();
    return std::vector<std::int32_t>(ops_->greedy_tokens().begin(), ops_->greedy_tokens().end());
  };
  std::vector<float> logits;
  EXPECT_TRUE(run(false, false, logits).empty());
  std::vector<std::int32_t> want;
  for (std::int64_t r = 0; r < 2; ++r) {
    const auto row = logits.begin() + r * vocab;
    want.push_back(static_cast<std::int32_t>(std::max_element(row, row + vocab) - row));
  }
  std::vector<float> unused;
  const std::vector<std::int32_t> got = run(true, true, unused);
#if defined(HEARTH_OPS_TEST_CUDA)
  EXPECT_EQ(got, want);
#else
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(unused, logits);  // the CPU wrote the logits as asked
#endif
  std::vector<float> mixed;
  EXPECT_TRUE(run(true, false, mixed).empty());
  EXPECT_LT(nmse(mixed, std::vector<double>(logits.begin(), logits.end())), 1e-12);
}

struct Recorder final : OpObserver {
  void op_begin(OpKind kind, const OpName& n) override {
    log += std::string("+") + op_kind_name(kind) + ":" + n.what + std::to_string(n.layer) + " ";
  }
  void op_end(OpKind kind, const OpName& n) override {
    log += std::string("-") + op_kind_name(kind) + ":" + n.what + std::to_string(n.layer) + " ";
  }
  std::string log;
};

TEST_F(BACKEND_OPS, AnObserverSeesEachOpsKindNameAndLayerAroundIt) {
  Recorder rec;
  const std::vector<float> w(kEmbd, 1.0f);
  const Vector wv = upload(w);
  begin(2);
  write(a_, random_floats(rng_, 2 * kEmbd));
  ops_->set_observer(&rec);
  ops_->rms_norm(OpName{"ffn_norm", 1}, ops_->act(a_), wv, 1e-5f, ops_->act(b_));
  ops_->add(OpName{"residual", 1}, ops_->act(a_), ops_->act(b_));
  ops_->set_observer(nullptr);
  ops_->add(OpName{"unseen", 1}, ops_->act(a_), ops_->act(b_));
  finish();
  EXPECT_EQ(rec.log, "+rms_norm:ffn_norm1 -rms_norm:ffn_norm1 +add:residual1 -add:residual1 ");
}

TEST_F(BACKEND_OPS, LayerMarksGiveOneTimePerLayer) {
  begin(1);
  for (std::uint32_t l = 0; l <= kLayers; ++l) ops_->mark_layer(l);
  finish();
  ASSERT_EQ(ops_->layer_ms().size(), static_cast<std::size_t>(kLayers));
  for (const double ms : ops_->layer_ms()) EXPECT_GE(ms, 0.0);
  const ModelMemory m = ops_->memory();
  EXPECT_GT(m.workspace_bytes, 0u);
}

}  // namespace
}  // namespace hearth::backend::test
