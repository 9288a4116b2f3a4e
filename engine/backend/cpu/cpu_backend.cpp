#include "engine/backend/cpu/cpu_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "engine/backend/cpu/cpu_ceilings.h"
#include "engine/core/log.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/fp8.h"

namespace hearth::cpu {
namespace {

using backend::Activation;

// More threads than the hardware runs at once only adds contention (5 tokens
// took 22 s at 128 threads on 2 cores), so a larger request is capped.
int thread_count(int requested) {
  const int hardware = std::max(static_cast<int>(std::thread::hardware_concurrency()), 1);
  if (requested > hardware) {
    log::get("engine")->warn("{} CPU threads requested; this machine runs {} at once: using {}", requested, hardware,
                             hardware);
    return hardware;
  }
  return requested > 0 ? requested : hardware;
}

Matrix cpu_matrix(const backend::Matrix& w) {
  return Matrix{w.type, w.rows, w.cols, w.data};
}

}  // namespace

CpuBackend::CpuBackend(const CpuBackendOptions& options)
    : ops_(thread_count(options.n_threads), options.refine_activations), kv_precision_(options.kv_precision) {}

CpuBackend::~CpuBackend() = default;

Result<backend::Matrix> CpuBackend::upload_matrix(const backend::HostTensor& t, backend::MatrixUse) {
  const auto type = static_cast<kernels::GgmlType>(t.type);
  if (!kernels::is_weight_type(type)) {
    return make_error(ErrorCode::kUnsupported,
                      "tensor " + std::string(t.name) + ": type id " + std::to_string(t.type) + " has no CPU kernels");
  }
  weight_bytes_ += t.bytes;
  return backend::Matrix{t.type, t.data, t.rows, t.cols, kernels::row_bytes(type, t.cols)};
}

Result<backend::Vector> CpuBackend::upload_vector(const backend::HostTensor& t) {
  if (t.type != static_cast<std::uint32_t>(kernels::GgmlType::kF32)) {
    return make_error(ErrorCode::kUnsupported, "tensor " + std::string(t.name) + ": expected an f32 vector");
  }
  weight_bytes_ += t.bytes;
  return backend::Vector{static_cast<const float*>(t.data), t.rows * t.cols};
}

// K and V rows of one block over all layers, f16 (2 bytes a value), q8_0 (34
// bytes per 32 values) or fp8 (1 byte a value).
std::size_t CpuBackend::kv_block_bytes(std::int32_t block_size) const {
  const backend::ModelShape& s = shape();
  const auto hd = static_cast<std::size_t>(s.head_dim);
  const std::size_t row = kv_precision_ == KvPrecision::kQ8_0      ? hd / 32 * 34
                          : kv_precision_ == KvPrecision::kFp8E4M3 ? hd
                                                                   : hd * sizeof(std::uint16_t);
  return 2ull * static_cast<std::size_t>(s.n_layer) * static_cast<std::size_t>(block_size) *
         static_cast<std::size_t>(s.n_head_kv) * row;
}

Result<void> CpuBackend::allocate_kv(const KvLayout& layout) {
  if (layout.num_blocks <= 0 || layout.block_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "KV layout needs a positive number of blocks and block size");
  }
  if (kv_precision_ == KvPrecision::kQ8_0 && shape().head_dim % 32 != 0) {
    return make_error(ErrorCode::kUnsupported,
                      "KV precision q8_0 needs a head size that is a multiple of 32 (this "
                      "model's is " +
                          std::to_string(shape().head_dim) + "): use f16");
  }
  const std::size_t per_cache = kv_block_bytes(layout.block_size) / 2 / sizeof(std::uint16_t) * layout.num_blocks;
  try {
    k_cache_.assign(per_cache, 0);
    v_cache_.assign(per_cache, 0);
  } catch (const std::bad_alloc&) {
    k_cache_ = {};
    v_cache_ = {};
    return make_error(
        ErrorCode::kOutOfMemory,
        "cannot allocate a KV cache of " + std::to_string(2 * per_cache * sizeof(std::uint16_t) >> 20) + " MiB");
  }
  kv_scales_.assign(2 * static_cast<std::size_t>(shape().n_layer), 0.0f);
  kv_layout_ = layout;
  return {};
}

float CpuBackend::kv_scale(std::int32_t layer, bool v) const {
  if (kv_precision_ != KvPrecision::kFp8E4M3) return 1.0f;
  const std::size_t i = 2 * static_cast<std::size_t>(layer) + (v ? 1 : 0);
  return i < kv_scales_.size() ? kv_scales_[i] : 0.0f;
}

PagedKv CpuBackend::layer_kv(std::int32_t layer) {
  const std::size_t layer_elems = k_cache_.size() / static_cast<std::size_t>(shape().n_layer);
  const auto offset = static_cast<std::size_t>(layer) * layer_elems;
  return PagedKv{k_cache_.data() + offset, v_cache_.data() + offset, kv_precision_,     kv_scale(layer, false),
                 kv_scale(layer, true),    kv_layout_.block_size,    shape().n_head_kv, shape().head_dim};
}

DeviceCeilings CpuBackend::measure_ceilings() {
  return measure_cpu_ceilings(ops_);
}

Result<void> CpuBackend::do_begin_step(std::span<const SequenceStep> steps) {
  layer_ms_.clear();
  tokens_.clear();
  positions_.clear();
  seqs_.clear();
  for (const SequenceStep& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    const std::int64_t logit_rows = s.want_logits ? (s.all_logits ? count : 1) : 0;
    seqs_.push_back(Seq{s.block_table, s.start_pos, static_cast<std::int64_t>(tokens_.size()), count, logit_rows});
    for (std::int64_t i = 0; i < count; ++i) {
      tokens_.push_back(s.tokens[static_cast<std::size_t>(i)]);
      positions_.push_back(s.start_pos + static_cast<std::int32_t>(i));
    }
  }
  n_tokens_ = static_cast<std::int64_t>(tokens_.size());
  buffers_.resize(specs_.size());
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const auto need = static_cast<std::size_t>(n_tokens_ * specs_[i].width);
    if (buffers_[i].size() < need) buffers_[i].resize(need);
    acts_[i] = Activation{buffers_[i].data(), specs_[i].width};
  }
  return {};
}

void CpuBackend::mark_layer(std::uint32_t boundary) {
  const auto now = std::chrono::steady_clock::now();
  if (boundary == 0) {
    layer_ms_.assign(static_cast<std::size_t>(shape().n_layer), 0.0);
  } else {
    layer_ms_[boundary - 1] = std::chrono::duration<double, std::milli>(now - layer_t0_).count();
  }
  layer_t0_ = now;
}

void CpuBackend::add_bias(float* y, const backend::Vector& bias, std::int64_t width) const {
  if (!bias) return;
  for (std::int64_t t = 0; t < n_tokens_; ++t) {
    for (std::int64_t i = 0; i < width; ++i) y[t * width + i] += bias.data[i];
  }
}

void CpuBackend::do_embed(const backend::Matrix& table, Activation out) {
  const Matrix m = cpu_matrix(table);
  for (std::int64_t t = 0; t < n_tokens_; ++t)
    ops_.get_row(m, tokens_[static_cast<std::size_t>(t)], out.data + t * out.width);
}

void CpuBackend::do_rms_norm(Activation x, const backend::Vector& weight, float eps, Activation out) {
  ops_.rms_norm(x.data, weight.data, n_tokens_, x.width, eps, out.data);
}

void CpuBackend::do_head_rms_norm(Activation x, std::int32_t n_heads, const backend::Vector& weight, float eps) {
  ops_.rms_norm(x.data, weight.data, n_tokens_ * n_heads, weight.n, eps, x.data);
}

void CpuBackend::do_scale(Activation x, float s) {
  ops_.scale(x.data, s, n_tokens_ * x.width);
}

void CpuBackend::do_linear(const backend::Matrix& w, Activation x, Activation y, const backend::Vector& bias) {
  ops_.matmul(cpu_matrix(w), x.data, n_tokens_, y.data);
  add_bias(y.data, bias, w.rows);
}

void CpuBackend::do_linear_many(Activation x, std::span<const backend::LinearOut> outs) {
  std::array<Matrix, 4> ms;
  std::array<float*, 4> ys;
  const std::size_t n = std::min(outs.size(), ms.size());
  for (std::size_t i = 0; i < n; ++i) {
    ms[i] = cpu_matrix(outs[i].w);
    ys[i] = outs[i].y.data;
  }
  ops_.matmul_many(std::span<const Matrix>(ms.data(), n), x.data, n_tokens_, std::span<float* const>(ys.data(), n));
  for (std::size_t i = 0; i < n; ++i) add_bias(ys[i], outs[i].bias, outs[i].w.rows);
}

void CpuBackend::do_linear_residual(const backend::Matrix& w, Activation x, Activation residual, Activation scratch) {
  ops_.matmul(cpu_matrix(w), x.data, n_tokens_, scratch.data);
  ops_.add(residual.data, scratch.data, n_tokens_ * w.rows);
}

void CpuBackend::do_rope(Activation q, std::int32_t n_q_heads, Activation k, std::int32_t n_k_heads,
                         const backend::RopeConfig& c) {
  ops_.rope(q.data, n_tokens_, n_q_heads, c.head_dim, positions_, c.base, c.scale, c.neox);
  ops_.rope(k.data, n_tokens_, n_k_heads, c.head_dim, positions_, c.base, c.scale, c.neox);
}

void CpuBackend::do_store_kv(std::int32_t layer, Activation k, Activation v) {
  if (kv_precision_ == KvPrecision::kFp8E4M3) calibrate_fp8(layer, k, v);
  const PagedKv kv = layer_kv(layer);
  for (const Seq& s : seqs_) {
    ops_.store_kv(kv, s.block_table, s.start_pos, k.data + s.row * k.width, v.data + s.row * v.width, s.count);
  }
}

// The first store into a layer with a non-zero value fixes its scales
// (kernels/fp8.h kv_fp8_scale): the cache keeps codes of one scale for the
// life of the allocation, so cached prefixes stay valid.
void CpuBackend::calibrate_fp8(std::int32_t layer, Activation k, Activation v) {
  float& ks = kv_scales_[2 * static_cast<std::size_t>(layer)];
  float& vs = kv_scales_[2 * static_cast<std::size_t>(layer) + 1];
  if (ks > 0.0f && vs > 0.0f) return;
  float k_max = 0.0f, v_max = 0.0f;
  for (const Seq& s : seqs_) {
    for (std::int64_t i = s.row * k.width; i < (s.row + s.count) * k.width; ++i) {
      k_max = std::max(k_max, std::fabs(k.data[i]));
    }
    for (std::int64_t i = s.row * v.width; i < (s.row + s.count) * v.width; ++i) {
      v_max = std::max(v_max, std::fabs(v.data[i]));
    }
  }
  if (ks == 0.0f) ks = kernels::kv_fp8_scale(k_max);
  if (vs == 0.0f) vs = kernels::kv_fp8_scale(v_max);
}

void CpuBackend::do_attention(std::int32_t layer, Activation q, Activation out, float scale, std::int32_t window) {
  attention_.clear();
  for (const Seq& s : seqs_) {
    attention_.push_back(CpuOps::AttentionSeq{s.block_table, s.start_pos, q.data + s.row * q.width, s.count,
                                              out.data + s.row * out.width});
  }
  ops_.attention(layer_kv(layer), attention_, shape().n_head, scale, window);
}

void CpuBackend::do_glu(backend::GluKind kind, Activation gate, Activation up) {
  switch (kind) {
    case backend::GluKind::kSwiGlu:
      ops_.swiglu(gate.data, up.data, n_tokens_ * gate.width);
      return;
    case backend::GluKind::kGeGluTanh:
      ops_.geglu_tanh(gate.data, up.data, n_tokens_ * gate.width);
      return;
  }
}

void CpuBackend::do_add(Activation x, Activation y) {
  ops_.add(x.data, y.data, n_tokens_ * x.width);
}

// The wanted rows are normed into scratch in step order, then one matmul
// reads the output matrix once for all of them (the logits' layout is that order).
void CpuBackend::do_logits(Activation x, const backend::Vector& norm, float eps, Activation scratch,
                           std::span<float> logits) {
  std::int64_t wanted = 0;
  for (const Seq& s : seqs_) {
    if (s.logit_rows == 0) continue;
    ops_.rms_norm(x.data + (s.row + s.count - s.logit_rows) * x.width, norm.data, s.logit_rows, x.width, eps,
                  scratch.data + wanted * scratch.width);
    wanted += s.logit_rows;
  }
  if (wanted > 0) ops_.matmul(cpu_matrix(output_), scratch.data, wanted, logits.data());
}

Result<void> CpuBackend::write(Activation dst, std::span<const float> src) {
  std::memcpy(dst.data, src.data(), src.size_bytes());
  return {};
}

Result<void> CpuBackend::read(Activation src, std::span<float> dst) {
  std::memcpy(dst.data(), src.data, dst.size_bytes());
  return {};
}

ModelMemory CpuBackend::memory() const {
  std::size_t floats = 0;
  for (const auto& b : buffers_) floats += b.capacity();
  const std::size_t workspace = floats * sizeof(float) +
                                (tokens_.capacity() + positions_.capacity()) * sizeof(std::int32_t) +
                                seqs_.capacity() * sizeof(Seq) + attention_.capacity() * sizeof(CpuOps::AttentionSeq);
  return ModelMemory{weight_bytes_, (k_cache_.capacity() + v_cache_.capacity()) * sizeof(std::uint16_t), workspace};
}

}  // namespace hearth::cpu
