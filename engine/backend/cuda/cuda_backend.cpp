// CudaBackend: a step (staging, the ops on the stream, the end of the step).
#include "engine/backend/cuda/cuda_backend.h"

#include <algorithm>

#include "engine/core/log.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/store_kv.h"

namespace hearth::cuda {
namespace kc = hearth::kernels::cuda;
using backend::Activation;

namespace {

kc::DeviceMatrix device_matrix(const backend::Matrix& m) {
  return kc::DeviceMatrix{static_cast<kernels::GgmlType>(m.type), m.data, m.rows, m.cols, m.row_stride};
}

}  // namespace

// Fills host_ints_ (see StepSizes) and logit_rows_, and returns the step's sizes.
CudaBackend::StepSizes CudaBackend::stage_inputs(std::span<const SequenceStep> steps) {
  StepSizes sz;
  std::size_t max_blocks = 1;
  logit_rows_.clear();
  for (const auto& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    max_blocks = std::max(max_blocks, s.block_table.size());
    sz.max_context = std::max(sz.max_context, static_cast<int>(s.start_pos + count));
    if (s.want_logits) {
      const std::int64_t rows = s.all_logits ? count : 1;
      logit_rows_.push_back(LogitRows{sz.n_tokens + count - rows, rows});
      sz.n_logit_rows += rows;
    }
    sz.n_tokens += count;
  }
  sz.max_blocks = static_cast<int>(max_blocks);
  const auto n = static_cast<std::size_t>(sz.n_tokens);
  sz.n_ints = 4 * n + steps.size() * max_blocks;
  host_ints_.assign(sz.n_ints, 0);
  std::int32_t* ids = host_ints_.data();
  std::int32_t* positions = ids + n;
  std::int32_t* slots = positions + n;
  std::int32_t* token_seq = slots + n;
  std::int32_t* tables = token_seq + n;
  const std::int32_t bs = kv_layout_.block_size;
  std::size_t t = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& s = steps[i];
    std::copy(s.block_table.begin(), s.block_table.end(), tables + i * max_blocks);
    for (std::size_t j = 0; j < s.tokens.size(); ++j, ++t) {
      const std::int32_t pos = s.start_pos + static_cast<std::int32_t>(j);
      ids[t] = s.tokens[j];
      positions[t] = pos;
      slots[t] = s.block_table[static_cast<std::size_t>(pos / bs)] * bs + pos % bs;
      token_seq[t] = static_cast<std::int32_t>(i);
    }
  }
  return sz;
}

Result<void> CudaBackend::begin_step(std::span<const SequenceStep> steps) {
  layer_ms_.clear();
  step_result_ = {};
  timed_ = false;
  HEARTH_TRY(ctx_->make_current());
  StepSizes sz = stage_inputs(steps);
  sz.split_len = kc::choose_split_len(static_cast<int>(sz.n_tokens), shape_.n_head, shape_.n_head_kv, sz.max_context,
                                      ctx_->sm_count());
  sz.gemm_bytes = gemm_workspace_bytes(sz.n_tokens, sz.n_logit_rows);
  sz.attn_bytes = kc::paged_attention_workspace_bytes(static_cast<int>(sz.n_tokens), shape_.n_head, shape_.head_dim,
                                                      sz.max_context, sz.split_len);
  HEARTH_TRY(reserve(sz));
  sz_ = sz;
  n_tokens_ = sz.n_tokens;
  timed_ = layer_timing_interval_ > 0 && step_count_++ % static_cast<unsigned>(layer_timing_interval_) == 0;
  if (timed_) HEARTH_TRY(layer_timer_.init(static_cast<std::uint32_t>(shape_.n_layer)));
  return to_result(kc::Status{cudaMemcpyAsync(ws_.ints.get(), host_ints_.data(), sz.n_ints * sizeof(std::int32_t),
                                              cudaMemcpyHostToDevice, ctx_->stream()),
                              "cudaMemcpyAsync (step inputs)"},
                   "forward");
}

Result<void> CudaBackend::finish_step() {
  // The step's work (and the logits' copy) is done when the stream is.
  const Result<void> synced = ctx_->synchronize();
  if (!step_result_) return step_result_;
  HEARTH_TRY(synced);
  if (timed_) {
    layer_ms_.resize(static_cast<std::size_t>(shape_.n_layer));
    if (Result<void> r = layer_timer_.read(layer_ms_); !r) {
      layer_ms_.clear();  // the logits are good: the step succeeds untimed
      log::get("cuda")->warn("{}", r.error().message);
    }
  }
  return {};
}

bool CudaBackend::check(kc::Status status, const char* what) {
  if (failed()) return false;
  if (status.ok()) return true;
  step_result_ = to_result(status, what);
  return false;
}

void CudaBackend::mark_layer(std::uint32_t boundary) {
  if (!timed_ || failed()) return;
  if (Result<void> r = layer_timer_.record(boundary, ctx_->stream()); !r) step_result_ = std::move(r);
}

void CudaBackend::do_embed(const backend::Matrix& table, Activation out) {
  if (failed()) return;
  const auto* ids = ws_.ints.as<const std::int32_t>();
  check(kc::embedding_lookup(device_matrix(table), ids, static_cast<int>(n_tokens_), out.data, ctx_->stream()),
        "token embedding");
}

void CudaBackend::do_rms_norm(Activation x, const backend::Vector& weight, float eps, Activation out) {
  if (failed()) return;
  check(kc::rmsnorm(x.data, weight.data, out.data, n_tokens_, x.width, eps, ctx_->stream()), "rms_norm");
}

// Each head's row of weight.n floats is one rmsnorm row.
void CudaBackend::do_head_rms_norm(Activation x, std::int32_t n_heads, const backend::Vector& weight, float eps) {
  if (failed()) return;
  check(kc::rmsnorm(x.data, weight.data, x.data, n_tokens_ * n_heads, weight.n, eps, ctx_->stream()), "head rms_norm");
}

void CudaBackend::do_scale(Activation x, float s) {
  if (failed()) return;
  check(kc::scale(x.data, s, n_tokens_ * x.width, ctx_->stream()), "scale");
}

void CudaBackend::linear(const backend::Matrix& w, const float* x, std::int64_t n, float* y, const float* bias,
                         float* residual, float* scratch) {
  if (failed()) return;
  cudaStream_t stream = ctx_->stream();
  const kc::DeviceMatrix m = device_matrix(w);
  if (n <= kc::kMaxGemvTokens) {
    kc::GemvEpilogue ep;
    ep.bias = bias;
    ep.residual = residual;
    check(kc::gemv(m, x, static_cast<int>(n), residual != nullptr ? residual : y, stream, ep), "gemv");
    return;
  }
  float* out = residual != nullptr ? scratch : y;
  if (!check(kc::matmul_f16(ctx_->cublas(), m, x, n, out, ws_.gemm.get(), ws_.gemm.bytes(), stream), "matmul_f16")) {
    return;
  }
  if (bias != nullptr && !check(kc::add_bias(out, bias, n, w.rows, stream), "bias")) return;
  if (residual != nullptr) check(kc::add(residual, out, residual, n * w.rows, stream), "residual add");
}

void CudaBackend::do_linear(const backend::Matrix& w, Activation x, Activation y, const backend::Vector& bias) {
  linear(w, x.data, n_tokens_, y.data, bias.data, nullptr, nullptr);
}

// One product per matrix for now (a fused q/k/v GEMV is the next step).
void CudaBackend::do_linear_many(Activation x, std::span<const backend::LinearOut> outs) {
  for (const backend::LinearOut& o : outs) linear(o.w, x.data, n_tokens_, o.y.data, o.bias.data, nullptr, nullptr);
}

void CudaBackend::do_linear_residual(const backend::Matrix& w, Activation x, Activation residual, Activation scratch) {
  linear(w, x.data, n_tokens_, residual.data, nullptr, residual.data, scratch.data);
}

void CudaBackend::do_rope(Activation q, std::int32_t n_q_heads, Activation k, std::int32_t n_k_heads,
                          const backend::RopeConfig& c) {
  if (failed()) return;
  const std::int32_t* positions = ws_.ints.as<const std::int32_t>() + n_tokens_;
  kernels::RopeParams rp;
  rp.head_dim = c.head_dim;
  rp.n_rot = c.head_dim;
  rp.freq_base = c.base;
  rp.freq_scale = 1.0f / c.scale;
  rp.order = c.neox ? kernels::RopeOrder::kNeox : kernels::RopeOrder::kAdjacent;
  if (!check(kc::rope(q.data, n_tokens_, n_q_heads, positions, rp, ctx_->stream()), "rope (q)")) return;
  check(kc::rope(k.data, n_tokens_, n_k_heads, positions, rp, ctx_->stream()), "rope (k)");
}

void CudaBackend::do_store_kv(std::int32_t layer, Activation k, Activation v) {
  if (failed()) return;
  const std::int32_t* slots = ws_.ints.as<const std::int32_t>() + 2 * n_tokens_;
  check(kc::store_kv(layer_cache(layer), k.data, v.data, slots, n_tokens_, ctx_->stream()), "store_kv");
}

void CudaBackend::do_attention(std::int32_t layer, Activation q, Activation out, float scale, std::int32_t window) {
  if (failed()) return;
  const auto* ints = ws_.ints.as<const std::int32_t>();
  kc::AttentionBatch batch;
  batch.q = q.data;
  batch.positions = ints + n_tokens_;
  batch.token_seq = ints + 3 * n_tokens_;
  batch.block_tables = ints + 4 * n_tokens_;
  batch.max_blocks_per_seq = sz_.max_blocks;
  batch.n_tokens = static_cast<int>(n_tokens_);
  batch.max_context = sz_.max_context;
  kc::PagedAttentionParams params;
  params.n_heads = shape_.n_head;
  params.scale = scale;
  params.window = window;
  params.split_len = sz_.split_len;
  check(kc::paged_attention(layer_cache(layer), batch, params, out.data, ws_.attn_split.get(), ws_.attn_split.bytes(),
                            ctx_->stream()),
        "paged attention");
}

void CudaBackend::do_glu(backend::GluKind kind, Activation gate, Activation up) {
  if (failed()) return;
  const std::int64_t n = n_tokens_ * gate.width;
  if (kind == backend::GluKind::kGeGluTanh) {
    check(kc::geglu_tanh(gate.data, up.data, gate.data, n, ctx_->stream()), "geglu_tanh");
    return;
  }
  check(kc::swiglu(gate.data, up.data, gate.data, n, ctx_->stream()), "swiglu");
}

void CudaBackend::do_add(Activation x, Activation y) {
  if (failed()) return;
  check(kc::add(x.data, y.data, x.data, n_tokens_ * x.width, ctx_->stream()), "add");
}

// Final norm of the rows that want logits, packed into scratch in step order,
// the output projection into ws_.logits, and the copy back to the host.
void CudaBackend::do_logits(Activation x, const backend::Vector& norm, float eps, Activation scratch,
                            std::span<float> logits) {
  if (failed() || sz_.n_logit_rows == 0) return;
  std::int64_t out_rows = 0;
  for (const LogitRows& r : logit_rows_) {
    if (!check(kc::rmsnorm(x.data + r.row * x.width, norm.data, scratch.data + out_rows * scratch.width, r.count,
                           x.width, eps, ctx_->stream()),
               "output norm")) {
      return;
    }
    out_rows += r.count;
  }
  linear(output_, scratch.data, out_rows, ws_.logits.as<float>(), nullptr, nullptr, nullptr);
  const std::size_t bytes = static_cast<std::size_t>(out_rows * output_.rows) * sizeof(float);
  check(kc::Status{cudaMemcpyAsync(logits.data(), ws_.logits.get(), bytes, cudaMemcpyDeviceToHost, ctx_->stream()),
                   "cudaMemcpyAsync (logits)"},
        "forward");
}

}  // namespace hearth::cuda
