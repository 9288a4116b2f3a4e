#include "engine/backend/cpu/cpu_ops.h"

#include <array>
#include <cassert>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/glu.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_ops.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/fp8.h"

namespace hearth::cpu {

namespace k = hearth::kernels;

struct CpuOps::Impl {
  Impl(int n_threads, bool refine_outliers) : pool(n_threads) {
    scratch.outlier_ratio = refine_outliers ? k::kDefaultOutlierRatio : 0.0f;
  }
  k::ThreadPool pool;
  k::MatmulScratch scratch;
  std::vector<std::int32_t> positions;
  std::vector<k::AttentionSeq> attention_seqs;
};

CpuOps::CpuOps(int n_threads, bool refine_outliers) : impl_(std::make_unique<Impl>(n_threads, refine_outliers)) {}
CpuOps::~CpuOps() = default;

int CpuOps::threads() const {
  return impl_->pool.size();
}

k::ThreadPool& CpuOps::pool() {
  return impl_->pool;
}

void CpuOps::matmul(const Matrix& w, const float* x, std::int64_t n_tokens, float* y) {
  const auto type = static_cast<k::GgmlType>(w.type);
  const k::WeightMatrix wm{type, w.data, w.rows, w.cols, k::row_bytes(type, w.cols)};
  k::matmul(wm, x, n_tokens, y, &impl_->pool, impl_->scratch);
}

void CpuOps::matmul_many(std::span<const Matrix> ws, const float* x, std::int64_t n_tokens,
                         std::span<float* const> ys) {
  assert(ws.size() == ys.size() && ws.size() <= k::kMaxMatmulMany);
  std::array<k::WeightMatrix, k::kMaxMatmulMany> wms;
  bool shared = true;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const auto type = static_cast<k::GgmlType>(ws[i].type);
    wms[i] = k::WeightMatrix{type, ws[i].data, ws[i].rows, ws[i].cols, k::row_bytes(type, ws[i].cols)};
    shared = shared && ws[i].cols == ws[0].cols &&
             k::quant_ops(type)->vec_dot_type == k::quant_ops(static_cast<k::GgmlType>(ws[0].type))->vec_dot_type;
  }
  if (shared) {
    k::matmul_many(std::span<const k::WeightMatrix>(wms.data(), ws.size()), x, n_tokens, ys, &impl_->pool,
                   impl_->scratch);
    return;
  }
  for (std::size_t i = 0; i < ws.size(); ++i) k::matmul(wms[i], x, n_tokens, ys[i], &impl_->pool, impl_->scratch);
}

void CpuOps::get_row(const Matrix& w, std::int64_t row, float* out) {
  const auto type = static_cast<k::GgmlType>(w.type);
  const k::QuantOps* ops = k::quant_ops(type);
  assert(ops && row >= 0 && row < w.rows);
  ops->dequant_row(static_cast<const std::byte*>(w.data) + static_cast<std::size_t>(row) * k::row_bytes(type, w.cols),
                   out, w.cols);
}

void CpuOps::rms_norm(const float* x, const float* weight, std::int64_t n_tokens, std::int64_t n, float eps,
                      float* out) {
  k::rmsnorm(x, weight, out, n_tokens, n, eps);
}

void CpuOps::rope(float* x, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim,
                  std::span<const std::int32_t> positions, float base, float scale, bool neox) {
  k::RopeParams p;
  p.head_dim = static_cast<int>(head_dim);
  p.n_rot = static_cast<int>(head_dim);
  p.freq_base = base;
  p.freq_scale = 1.0f / scale;
  p.order = neox ? k::RopeOrder::kNeox : k::RopeOrder::kAdjacent;
  k::rope(x, n_tokens, static_cast<int>(n_heads), positions.data(), p);
}

void CpuOps::swiglu(float* gate, const float* up, std::int64_t n) {
  k::swiglu(gate, up, gate, n);
}

void CpuOps::geglu_tanh(float* gate, const float* up, std::int64_t n) {
  k::geglu_tanh(gate, up, gate, n);
}

void CpuOps::scale(float* x, float s, std::int64_t n) {
  k::scale(x, s, x, n);
}

void CpuOps::add(float* x, const float* y, std::int64_t n) {
  k::add(x, y, x, n);
}

void CpuOps::store_kv(const PagedKv& kv, std::span<const std::int32_t> block_table, std::int32_t start_pos,
                      const float* k_rows, const float* v_rows, std::int64_t n_tokens) {
  const std::int64_t width = kv.n_kv_heads * kv.head_dim;
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    const std::int32_t pos = start_pos + static_cast<std::int32_t>(t);
    const std::int64_t slot = std::int64_t{block_table[pos / kv.block_size]} * kv.block_size + pos % kv.block_size;
    if (kv.precision == KvPrecision::kQ8_0) {  // blocks of 32 never straddle heads: head_dim is a multiple of 32
      const std::int64_t bytes = width / k::kKvQ8Block * 34;
      k::quantize_row_q8_0(k_rows + t * width, reinterpret_cast<unsigned char*>(kv.k) + slot * bytes, width);
      k::quantize_row_q8_0(v_rows + t * width, reinterpret_cast<unsigned char*>(kv.v) + slot * bytes, width);
    } else if (kv.precision == KvPrecision::kFp8E4M3) {
      // An uncalibrated layer (scale 0) has only zeros to store so far.
      const float k_inv = kv.k_scale > 0.0f ? 1.0f / kv.k_scale : 0.0f;
      const float v_inv = kv.v_scale > 0.0f ? 1.0f / kv.v_scale : 0.0f;
      auto* k8 = reinterpret_cast<std::uint8_t*>(kv.k) + slot * width;
      auto* v8 = reinterpret_cast<std::uint8_t*>(kv.v) + slot * width;
      for (std::int64_t i = 0; i < width; ++i) {
        k8[i] = k::f32_to_fp8_e4m3(k_rows[t * width + i] * k_inv);
        v8[i] = k::f32_to_fp8_e4m3(v_rows[t * width + i] * v_inv);
      }
    } else {
      k::f32_to_fp16_row(k_rows + t * width, kv.k + slot * width, width);
      k::f32_to_fp16_row(v_rows + t * width, kv.v + slot * width, width);
    }
  }
}

void CpuOps::attention(const PagedKv& kv, std::span<const AttentionSeq> seqs, std::int64_t n_heads, float scale,
                       std::int32_t window) {
  auto& positions = impl_->positions;
  auto& batch = impl_->attention_seqs;
  std::size_t total = 0;
  for (const AttentionSeq& s : seqs) total += static_cast<std::size_t>(s.n_tokens);
  positions.resize(total);
  batch.resize(seqs.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const AttentionSeq& s = seqs[i];
    for (std::int64_t t = 0; t < s.n_tokens; ++t) positions[at + t] = s.start_pos + static_cast<std::int32_t>(t);
    batch[i] = k::AttentionSeq{
        s.q,  positions.data() + at, s.n_tokens, s.block_table.data(), static_cast<std::int64_t>(s.block_table.size()),
        s.out};
    at += static_cast<std::size_t>(s.n_tokens);
  }
  const k::PagedKv pk{kv.k,
                      kv.v,
                      kv.precision == KvPrecision::kQ8_0      ? k::KvDtype::kQ8_0
                      : kv.precision == KvPrecision::kFp8E4M3 ? k::KvDtype::kFp8E4M3
                                                              : k::KvDtype::kF16,
                      kv.block_size,
                      static_cast<int>(kv.n_kv_heads),
                      static_cast<int>(kv.head_dim),
                      kv.k_scale,
                      kv.v_scale};
  k::AttentionParams params;
  params.n_heads = static_cast<int>(n_heads);
  params.scale = scale;
  params.window = window;
  k::paged_attention_batch(batch, pk, params, &impl_->pool);
}

}  // namespace hearth::cpu
