// The one-token GEMV with 8-bit activations (GemvActivations::kQ8) against a
// scalar reference that quantizes x the same way on the host, every type the
// path takes, random shapes; and its distance from the exact f32 product.
// Outputs are poisoned with NaN beforehand (DeviceBuffer).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cuda/gemv.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

const std::vector<GgmlType>& q8_types() {
  static const std::vector<GgmlType> t = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                          GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K};
  return t;
}

// Bytes [first, end) of each block that hold codes (qs, and qh where there is one).
void code_bytes(GgmlType t, size_t* first, size_t* block) {
  switch (t) {
    case GgmlType::kQ4_0:
      *first = offsetof(BlockQ4_0, qs), *block = sizeof(BlockQ4_0);
      return;
    case GgmlType::kQ4_1:
      *first = offsetof(BlockQ4_1, qs), *block = sizeof(BlockQ4_1);
      return;
    case GgmlType::kQ5_0:
      *first = offsetof(BlockQ5_0, qh), *block = sizeof(BlockQ5_0);
      return;
    case GgmlType::kQ5_1:
      *first = offsetof(BlockQ5_1, qh), *block = sizeof(BlockQ5_1);
      return;
    case GgmlType::kQ8_0:
      *first = offsetof(BlockQ8_0, qs), *block = sizeof(BlockQ8_0);
      return;
    case GgmlType::kQ4_K:
      *first = offsetof(BlockQ4_K, qs), *block = sizeof(BlockQ4_K);
      return;
    default:
      *first = offsetof(BlockQ5_K, qh), *block = sizeof(BlockQ5_K);
      return;
  }
}

// The weight value of code 0 per element (the unit's offset: Q4_0 -8 d,
// Q4_1 m, K-quants -dmin m_j, Q8_0 0): the CPU dequantization of the row
// with every code byte zeroed.
std::vector<float> code_zero_values(const HostMatrix& m) {
  size_t first = 0, block = 0;
  code_bytes(m.type, &first, &block);
  std::vector<float> out(static_cast<size_t>(m.rows * m.cols));
  const size_t row_bytes_ = row_bytes(m.type, m.cols);
  std::vector<uint8_t> row(row_bytes_);
  for (int64_t r = 0; r < m.rows; ++r) {
    std::copy_n(m.bytes.begin() + static_cast<std::ptrdiff_t>(r * m.stride), row_bytes_, row.begin());
    for (size_t b = 0; b < row_bytes_; b += block) std::fill(row.begin() + b + first, row.begin() + b + block, 0);
    quant_ops(m.type)->dequant_row(row.data(), out.data() + r * m.cols, m.cols);
  }
  return out;
}

// The kernel's activation quantization, in the same f32 operations: per 32
// values d = amax / 127, q = rint(x * (127 / amax)); s = the exact sum.
struct QuantX {
  std::vector<int> q;
  std::vector<double> d, s;  // per unit
};

QuantX quantize_x(const std::vector<float>& x) {
  QuantX out;
  out.q.resize(x.size());
  for (size_t u = 0; u < x.size() / 32; ++u) {
    float amax = 0.0f;
    double s = 0.0;
    for (size_t i = 0; i < 32; ++i) {
      amax = std::max(amax, std::fabs(x[32 * u + i]));
      s += x[32 * u + i];
    }
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (size_t i = 0; i < 32; ++i) out.q[32 * u + i] = static_cast<int>(std::nearbyint(x[32 * u + i] * id));
    out.d.push_back(static_cast<double>(amax / 127.0f));
    out.s.push_back(s);
  }
  return out;
}

struct Reference {
  std::vector<double> y, mag, exact;
};

// y[r] = sum_u (sum_{c in u} w_c d_u q_c + beta_u (s_u - d_u sum q)): the
// dequantized weights times the quantized activations, with the offsets
// applied to the exact sums as the kernel does. exact: the f32-activation product.
Reference reference(const HostMatrix& m, const std::vector<float>& x) {
  const QuantX qx = quantize_x(x);
  const std::vector<float> beta = code_zero_values(m);
  Reference ref;
  for (int64_t r = 0; r < m.rows; ++r) {
    double y = 0.0, mag = 0.0, exact = 0.0;
    for (int64_t u = 0; u < m.cols / 32; ++u) {
      double dot = 0.0, qsum = 0.0;
      for (int64_t c = 32 * u; c < 32 * u + 32; ++c) {
        const double w = m.values[r * m.cols + c];
        dot += w * qx.q[c];
        qsum += qx.q[c];
        mag += std::fabs(w * x[c]);
        exact += w * x[c];
      }
      const double b = beta[r * m.cols + 32 * u];
      y += qx.d[u] * dot + b * (qx.s[u] - qx.d[u] * qsum);
      mag += std::fabs(b * qx.s[u]);
    }
    ref.y.push_back(y), ref.mag.push_back(mag), ref.exact.push_back(exact);
  }
  return ref;
}

// Runs the kQ8 path and returns y (poisoned before; bias/residual optional).
std::vector<float> run_q8(const HostMatrix& m, const std::vector<float>& x, const std::vector<float>* bias,
                          const std::vector<float>* resid, int blocks_per_sm) {
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
  const Status st = gemv(opt, dm, dx.get(), 1, dy.get(), nullptr, ep);
  EXPECT_TRUE(st.ok()) << describe(st);
  return dy.download();
}

// Tolerance against the quantized reference: 2e-5 of sum |w x| (f32
// rounding of the unit terms and their sums; the integer dots are exact; one
// activation code off by one would cost about 1/127 of a |w x| term, ~1e-4 of
// the sum at these sizes). Against the exact product: relative L2 over the
// rows <= 1.5e-2 (8-bit codes: ~1/254 of a unit's largest value per element,
// measured about 4e-3 on these Gaussian inputs with 4x outliers).
void check_q8(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, size_t pad, bool epilogue) {
  SCOPED_TRACE(testing::Message() << type_traits(type)->name << " rows=" << rows << " cols=" << cols << " pad=" << pad
                                  << " epilogue=" << epilogue);
  const HostMatrix m = make_matrix(rng, type, rows, cols, pad);
  const std::vector<float> x = random_floats(rng, cols);
  const std::vector<float> bias = random_floats(rng, rows), resid = random_floats(rng, rows);
  const std::vector<float> y = run_q8(m, x, epilogue ? &bias : nullptr, epilogue ? &resid : nullptr, 0);
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
      // 1..40 chunks of 256: every lane count (8, 16, 32) and idle lanes.
      const int64_t cols = 256 * std::uniform_int_distribution<int64_t>(1, 40)(rng);
      check_q8(rng, type, rows, cols, trial == 1 ? 32 : 0, trial == 2);
    }
  }
}

TEST(CudaGemvQ8, LlamaShapes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(5);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K}) {
    check_q8(rng, type, 1024, 4096, 0, true);
    check_q8(rng, type, 640, 14336, 0, false);  // 56 chunks: 32 lanes, two passes for some
  }
}

// The grid size (blocks per multiprocessor) never changes a row's arithmetic.
TEST(CudaGemvQ8, ResultIndependentOfGrid) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(6);
  const HostMatrix m = make_matrix(rng, GgmlType::kQ4_0, 3000, 4096);
  const std::vector<float> x = random_floats(rng, 4096);
  const std::vector<float> a = run_q8(m, x, nullptr, nullptr, 0), b = run_q8(m, x, nullptr, nullptr, 1);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "row " << i;
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
  q6.row_stride = row_bytes(GgmlType::kQ6_K, 512);
  EXPECT_FALSE(gemv_q8_applies(q6, 1));
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
  set_default_gemv_activations(GemvActivations::kF32);
  EXPECT_EQ(default_gemv_activations(), GemvActivations::kF32);
  set_default_gemv_activations(GemvActivations::kProcessDefault);
  EXPECT_EQ(default_gemv_activations(), before);
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
