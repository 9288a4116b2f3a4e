#include "engine/backend/cpu/cpu_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::cpu {

namespace k = hearth::kernels;

CpuOps::CpuOps(int n_threads) : n_threads_(n_threads) {}
CpuOps::~CpuOps() = default;

int CpuOps::threads() const {
  return n_threads_;
}

void CpuOps::matmul(const Matrix& w, const float* x, std::int64_t n_tokens, float* y) {
  const k::QuantOps* ops = k::quant_ops(static_cast<k::GgmlType>(w.type));
  assert(ops && ops->vec_dot);
  const k::QuantOps* act = k::quant_ops(ops->vec_dot_type);
  const std::size_t w_row = k::row_bytes(static_cast<k::GgmlType>(w.type), w.cols);
  const std::size_t a_row = k::row_bytes(ops->vec_dot_type, w.cols);
  std::vector<std::byte> qa(a_row * static_cast<std::size_t>(n_tokens));
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    if (ops->vec_dot_type == k::GgmlType::kF32) {
      std::memcpy(qa.data() + t * a_row, x + t * w.cols, a_row);
    } else {
      act->quantize_row(x + t * w.cols, qa.data() + t * a_row, w.cols);
    }
  }
  const auto* wb = static_cast<const std::byte*>(w.data);
  for (std::int64_t r = 0; r < w.rows; ++r) {
    for (std::int64_t t = 0; t < n_tokens; ++t) {
      y[t * w.rows + r] = ops->vec_dot(w.cols, wb + r * w_row, qa.data() + t * a_row);
    }
  }
}

void CpuOps::get_row(const Matrix& w, std::int64_t row, float* out) {
  const k::QuantOps* ops = k::quant_ops(static_cast<k::GgmlType>(w.type));
  const std::size_t w_row = k::row_bytes(static_cast<k::GgmlType>(w.type), w.cols);
  ops->dequant_row(static_cast<const std::byte*>(w.data) + row * w_row, out, w.cols);
}

void CpuOps::rms_norm(const float* x, const float* weight, std::int64_t n_tokens, std::int64_t n, float eps,
                      float* out) {
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    double ss = 0;
    for (std::int64_t i = 0; i < n; ++i) ss += double{x[t * n + i]} * x[t * n + i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    for (std::int64_t i = 0; i < n; ++i) out[t * n + i] = x[t * n + i] * scale * weight[i];
  }
}

void CpuOps::rope(float* x, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim,
                  std::span<const std::int32_t> positions, float base, float scale, bool neox) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    const float pos = static_cast<float>(positions[t]) / scale;
    for (std::int64_t i = 0; i < half; ++i) {
      const float theta = pos * std::pow(base, -2.0f * static_cast<float>(i) / static_cast<float>(head_dim));
      const float c = std::cos(theta), s = std::sin(theta);
      for (std::int64_t h = 0; h < n_heads; ++h) {
        float* v = x + (t * n_heads + h) * head_dim;
        const std::int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
      }
    }
  }
}

void CpuOps::swiglu(float* gate, const float* up, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void CpuOps::add(float* x, const float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void CpuOps::store_kv(const PagedKv& kv, std::span<const std::int32_t> block_table, std::int32_t start_pos,
                      const float* k_rows, const float* v_rows, std::int64_t n_tokens) {
  const std::int64_t width = kv.n_kv_heads * kv.head_dim;
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    const std::int32_t pos = start_pos + static_cast<std::int32_t>(t);
    const std::int64_t slot = std::int64_t{block_table[pos / kv.block_size]} * kv.block_size + pos % kv.block_size;
    k::f32_to_fp16_row(k_rows + t * width, kv.k + slot * width, width);
    k::f32_to_fp16_row(v_rows + t * width, kv.v + slot * width, width);
  }
}

void CpuOps::attention(const PagedKv& kv, std::span<const std::int32_t> block_table, std::int32_t start_pos,
                       const float* q, std::int64_t n_tokens, std::int64_t n_heads, float* out) {
  const std::int64_t hd = kv.head_dim, width = kv.n_kv_heads * hd, group = n_heads / kv.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> scores, krow(static_cast<std::size_t>(hd));
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    const std::int64_t ctx = start_pos + t + 1;
    scores.resize(static_cast<std::size_t>(ctx));
    for (std::int64_t h = 0; h < n_heads; ++h) {
      const float* qh = q + (t * n_heads + h) * hd;
      const std::int64_t g = h / group;
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < ctx; ++j) {
        const std::int64_t slot = std::int64_t{block_table[j / kv.block_size]} * kv.block_size + j % kv.block_size;
        k::fp16_to_f32_row(kv.k + slot * width + g * hd, krow.data(), hd);
        float s = 0;
        for (std::int64_t d = 0; d < hd; ++d) s += qh[d] * krow[d];
        scores[j] = s * scale;
        mx = std::max(mx, scores[j]);
      }
      float sum = 0;
      for (std::int64_t j = 0; j < ctx; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
      float* o = out + (t * n_heads + h) * hd;
      std::fill(o, o + hd, 0.0f);
      for (std::int64_t j = 0; j < ctx; ++j) {
        const std::int64_t slot = std::int64_t{block_table[j / kv.block_size]} * kv.block_size + j % kv.block_size;
        k::fp16_to_f32_row(kv.v + slot * width + g * hd, krow.data(), hd);
        const float p = scores[j] / sum;
        for (std::int64_t d = 0; d < hd; ++d) o[d] += p * krow[d];
      }
    }
  }
}

}  // namespace hearth::cpu
