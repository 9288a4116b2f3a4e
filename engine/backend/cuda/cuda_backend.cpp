// CudaBackend: a step (begin, the ops on the stream, the end of the step; its inputs are staged in
// cuda_backend_inputs.cpp).
#include "engine/backend/cuda/cuda_backend.h"

#include <algorithm>
#include <array>

#include "engine/backend/cuda/env_switch.h"
#include "engine/core/log.h"
#include "kernels/cuda/argmax.h"
#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/mmq.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/quantize_q8.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/store_kv.h"
#include "kernels/fp8.h"

namespace hearth::cuda {
namespace kc = hearth::kernels::cuda;
using backend::Activation;

namespace {

bool fuse_norm_on() {
  static const bool on = env_switch_on("HEARTH_CUDA_FUSE_NORM");
  return on;
}

bool fuse_rope_kv_on() {
  static const bool on = env_switch_on("HEARTH_CUDA_FUSE_ROPE_KV");
  return on;
}

// The GLU in the down GEMV's prologue is off unless HEARTH_CUDA_FUSE_GLU=1:
// it did not pay (docs/perf-notes.md v15: every block computes the whole row
// before its products; 8B decode -3%, the 135M shape -2% to +2% across two
// calls). Where it is on, rows up to this wide.
constexpr std::int64_t kFuseGluMaxWidth = 4096;

bool fuse_glu_on() {
  static const bool on = env_opt_in("HEARTH_CUDA_FUSE_GLU");
  return on;
}

// Op tags of skip_op (store_kv and attention carry their layer above the low byte).
constexpr std::uint64_t kTagLinear = 3, kTagLinearMany = 4, kTagLinearResidual = 5, kTagStoreKv = 7;

kernels::RopeParams rope_params(const backend::RopeConfig& c) {
  kernels::RopeParams rp;
  rp.head_dim = c.head_dim;
  rp.n_rot = c.head_dim;
  rp.freq_base = c.base;
  rp.freq_scale = 1.0f / c.scale;
  rp.order = c.neox ? kernels::RopeOrder::kNeox : kernels::RopeOrder::kAdjacent;
  return rp;
}

}  // namespace

kc::DeviceMatrix CudaBackend::device_matrix(const backend::Matrix& m) {
  return kc::DeviceMatrix{static_cast<kernels::GgmlType>(m.type), m.data, m.rows, m.cols, m.row_stride};
}

Result<void> CudaBackend::do_begin_step(std::span<const SequenceStep> steps) {
  layer_ms_.clear();
  step_result_ = {};
  timed_ = false;
  HEARTH_TRY(ctx_->make_current());
  if (graph_mode_ == StepGraphs::Mode::kCapture) {  // the last step never finished: close its capture
    static_cast<void>(graphs_.end_capture(ctx_->stream(), graph_key_, 0, true));
  }
  graph_mode_ = StepGraphs::Mode::kEager;
  pending_norm_ = {};
  pending_rope_ = {};
  pending_glu_ = {};
  greedy_ready_ = false;
  StepSizes sz = stage_inputs(steps);
  greedy_host_.assign(sz.argmax ? static_cast<std::size_t>(sz.n_logit_rows) : 0, 0);
  sz.split_len =
      kc::choose_split_len(sz.n_split_rows, shape_.n_head, shape_.n_head_kv, sz.max_context, ctx_->sm_count());
  sz.gemm_bytes = gemm_workspace_bytes(sz.n_tokens, sz.n_logit_rows);
  if (kc::default_gemv_activations() == kc::GemvActivations::kQ8) {
    const std::int64_t rows = std::max(sz.n_tokens, sz.n_logit_rows);
    const std::int64_t cols = std::max(max_linear_cols_, output_.cols);
    sz.xq_bytes = rows > 1 ? static_cast<std::size_t>(rows * cols) * sizeof(float) : 0;
    if (rows > 1 && kc::mmq_enabled()) {  // mmq: the codes, then the largest split-K scratch
      std::size_t scratch = 0;
      for (const backend::Matrix& m : linear_matrices_) {
        const kc::DeviceMatrix dm = device_matrix(m);
        if (use_mmq(dm, sz.n_tokens)) scratch = std::max(scratch, kc::mmq_scratch_bytes(dm, sz.n_tokens));
      }
      if (use_mmq(device_matrix(output_), sz.n_logit_rows)) {
        scratch = std::max(scratch, kc::mmq_scratch_bytes(device_matrix(output_), sz.n_logit_rows));
      }
      sz.xq_bytes = std::max(sz.xq_bytes, kc::mmq_act_bytes(rows, cols) + scratch);
    }
  }
  sz.attn_bytes = kc::paged_attention_workspace_bytes(sz.n_split_rows, shape_.n_head, shape_.head_dim, sz.max_context,
                                                      sz.split_len);
  HEARTH_TRY(reserve(sz));
  sz_ = sz;
  n_tokens_ = sz.n_tokens;
  timed_ = layer_timing_interval_ > 0 && step_count_++ % static_cast<unsigned>(layer_timing_interval_) == 0;
  if (timed_) HEARTH_TRY(layer_timer_.init(static_cast<std::uint32_t>(shape_.n_layer)));
  HEARTH_TRY(to_result(kc::Status{cudaMemcpyAsync(ws_.ints.get(), host_ints_.data(), sz.n_ints * sizeof(std::int32_t),
                                                  cudaMemcpyHostToDevice, ctx_->stream()),
                                  "cudaMemcpyAsync (step inputs)"},
                       "forward"));
  plan_graph();
  if (profiling()) {
    op_events_ok_ = true;
    events_t0_ = std::chrono::steady_clock::now();
    profile_record(0);
  }
  return {};
}

Result<void> CudaBackend::do_finish_step() {
  flush_pending();
  run_graph();
  // The step's work (and the logits' copy) is done when the stream is.
  const auto wait_t0 = std::chrono::steady_clock::now();
  const Result<void> synced = ctx_->synchronize();
  host_wait_us_ = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wait_t0).count();
  if (!step_result_) return step_result_;
  HEARTH_TRY(synced);
  greedy_ready_ = sz_.argmax;
  if (timed_) {
    layer_ms_.resize(static_cast<std::size_t>(shape_.n_layer));
    if (Result<void> r = layer_timer_.read(layer_ms_); !r) {
      layer_ms_.clear();  // the logits are good: the step succeeds untimed
      log::get("cuda")->warn("{}", r.error().message);
    }
  }
  return {};
}

void CudaBackend::plan_graph() {
  graph_mode_ = StepGraphs::Mode::kEager;
  op_fingerprint_ = 0;
  graph_logits_ = {};
  // Instrumented steps (profiling, overflow check, an op observer) run
  // eagerly: per-op events and host reads cannot live inside a replay.
  if (!graphs_enabled_ || !sz_.decode || instrumented() || !fp8_all_calibrated()) return;
  StepGraphKey key;
  key.n_tokens = sz_.n_tokens;
  key.max_context = sz_.max_context;
  key.max_blocks = sz_.max_blocks;
  key.argmax = sz_.argmax;
  std::uint64_t h = 0;
  for (const Activation& a : acts_) h = fingerprint_mix(h, reinterpret_cast<std::uintptr_t>(a.data));
  for (const void* p :
       {ws_.ints.get(), ws_.logits.get(), ws_.attn_split.get(), ws_.xq.get(), k_pool_.get(), v_pool_.get()}) {
    h = fingerprint_mix(h, reinterpret_cast<std::uintptr_t>(p));
  }
  key.buffers = h;
  key.gemv_mode = static_cast<int>(kc::default_gemv_activations());
  key.timed = timed_;
  graph_key_ = key;
  graph_mode_ = graphs_.plan(key);
  if (graph_mode_ != StepGraphs::Mode::kCapture) return;
  if (Result<void> r = graphs_.begin_capture(ctx_->stream()); !r) {
    log::get("cuda")->warn("{}; decode steps run without graphs", r.error().message);
    graphs_enabled_ = false;
    graph_mode_ = StepGraphs::Mode::kEager;
  }
}

void CudaBackend::run_graph() {
  const StepGraphs::Mode mode = graph_mode_;
  graph_mode_ = StepGraphs::Mode::kEager;
  if (mode == StepGraphs::Mode::kEager) return;
  cudaStream_t stream = ctx_->stream();
  if (mode == StepGraphs::Mode::kCapture) {
    const bool op_failed = failed();
    if (Result<void> r = graphs_.end_capture(stream, graph_key_, op_fingerprint_, op_failed); !r && !op_failed) {
      log::get("cuda")->warn("{}; decode steps run without graphs", r.error().message);
      graphs_enabled_ = false;
      step_result_ = std::move(r);
    }
  } else if (op_fingerprint_ != graphs_.fingerprint(graph_key_)) {
    graphs_.clear();
    if (!failed()) {
      step_result_ = make_error(ErrorCode::kInternal,
                                "CUDA graph: this decode step's ops differ from the captured step's (a model must "
                                "make the same op calls on every decode step of one shape)");
    }
  }
  if (failed()) return;
  if (Result<void> r = graphs_.launch(graph_key_, stream); !r) {
    step_result_ = std::move(r);
    return;
  }
  ++graph_launches_;
  if (sz_.n_logit_rows == 0) return;
  if (sz_.argmax) {
    copy_argmax(stream);
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(sz_.n_logit_rows * output_.rows) * sizeof(float);
  check(kc::Status{cudaMemcpyAsync(graph_logits_.data(), ws_.logits.get(), bytes, cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (logits)"},
        "forward");
}

void CudaBackend::copy_argmax(cudaStream_t stream) {
  check(kc::Status{cudaMemcpyAsync(greedy_host_.data(), ws_.ints.as<const std::int32_t>() + sz_.argmax_at,
                                   greedy_host_.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (arg-maxes)"},
        "forward");
}

bool CudaBackend::skip_op(std::uint64_t tag, const void* a, const void* b) {
  // What waits for a fused neighbour goes first unless this op is that neighbour.
  if (any_pending()) {
    flush_pending(tag == kTagLinearMany, (tag & 0xffu) == kTagStoreKv, tag == kTagLinear || tag == kTagLinearResidual);
  }
  if (graph_mode_ != StepGraphs::Mode::kEager) {
    op_fingerprint_ = fingerprint_mix(op_fingerprint_, tag);
    op_fingerprint_ = fingerprint_mix(op_fingerprint_, reinterpret_cast<std::uintptr_t>(a));
    op_fingerprint_ = fingerprint_mix(op_fingerprint_, reinterpret_cast<std::uintptr_t>(b));
  }
  return failed() || graph_mode_ == StepGraphs::Mode::kReplay;
}

bool CudaBackend::check(kc::Status status, const char* what) {
  if (failed()) return false;
  if (status.ok()) return true;
  step_result_ = to_result(status, what);
  return false;
}

void CudaBackend::flush_pending(bool keep_norm, bool keep_rope, bool keep_glu) {
  if (pending_glu_.set && !keep_glu) {
    const PendingGlu g = pending_glu_;
    pending_glu_ = {};
    launch_glu(g);
  }
  if (pending_norm_.set && !keep_norm) {
    const PendingNorm p = pending_norm_;
    pending_norm_ = {};
    check(kc::rmsnorm(p.x.data, p.weight, p.out.data, n_tokens_, p.x.width, p.eps, ctx_->stream()), "rms_norm");
  }
  if (pending_rope_.set && !keep_rope) {
    const PendingRope p = pending_rope_;
    pending_rope_ = {};
    launch_rope(p);
  }
}

void CudaBackend::launch_rope(const PendingRope& r) {
  const std::int32_t* positions = ws_.ints.as<const std::int32_t>() + n_tokens_;
  const kernels::RopeParams rp = rope_params(r.config);
  if (!check(kc::rope(r.q.data, n_tokens_, r.n_q_heads, positions, rp, ctx_->stream()), "rope (q)")) return;
  check(kc::rope(r.k.data, n_tokens_, r.n_k_heads, positions, rp, ctx_->stream()), "rope (k)");
}

void CudaBackend::mark_layer(std::uint32_t boundary) {
  if (any_pending()) flush_pending();
  // A replayed graph records its own events.
  if (!timed_ || failed() || graph_mode_ == StepGraphs::Mode::kReplay) return;
  const bool capturing = graph_mode_ == StepGraphs::Mode::kCapture;
  if (Result<void> r = layer_timer_.record(boundary, ctx_->stream(), capturing); !r) step_result_ = std::move(r);
}

void CudaBackend::do_embed(const backend::Matrix& table, Activation out) {
  if (skip_op(1, table.data, out.data)) return;
  const auto* ids = ws_.ints.as<const std::int32_t>();
  check(kc::embedding_lookup(device_matrix(table), ids, static_cast<int>(n_tokens_), out.data, ctx_->stream()),
        "token embedding");
}

void CudaBackend::do_rms_norm(Activation x, const backend::Vector& weight, float eps, Activation out) {
  if (skip_op(2, x.data, out.data)) return;
  if (fuse_norm_on() && n_tokens_ == 1 && !instrumented() && out.data != x.data && weight.data != nullptr) {
    pending_norm_ = PendingNorm{true, x, out, weight.data, eps};  // for the linear_many after it
    return;
  }
  check(kc::rmsnorm(x.data, weight.data, out.data, n_tokens_, x.width, eps, ctx_->stream()), "rms_norm");
}

// Each head's row of weight.n floats is one rmsnorm row.
void CudaBackend::do_head_rms_norm(Activation x, std::int32_t n_heads, const backend::Vector& weight, float eps) {
  if (skip_op(12, x.data, weight.data)) return;
  check(kc::rmsnorm(x.data, weight.data, x.data, n_tokens_ * n_heads, weight.n, eps, ctx_->stream()), "head rms_norm");
}

void CudaBackend::do_scale(Activation x, float s) {
  if (skip_op(13, x.data, nullptr)) return;
  check(kc::scale(x.data, s, n_tokens_ * x.width, ctx_->stream()), "scale");
}

bool CudaBackend::use_mmq(const kc::DeviceMatrix& w, std::int64_t n) {
  return n >= 2 && n <= kc::mmq_max_tokens() && kc::mmq_enabled() &&
         kc::default_gemv_activations() == kc::GemvActivations::kQ8 && kc::mmq_applies(w);
}

void CudaBackend::linear(const backend::Matrix& w, const float* x, std::int64_t n, float* y, const float* bias,
                         float* residual, float* scratch, bool x_quantized) {
  if (failed()) return;
  cudaStream_t stream = ctx_->stream();
  const kc::DeviceMatrix m = device_matrix(w);
  if (use_mmq(m, n)) {
    // ws_.xq: the quantized rows, then the split-K scratch (sized in do_begin_step).
    const std::size_t act = kc::mmq_act_bytes(n, m.cols);
    if (!x_quantized && !check(kc::mmq_quantize(x, n, m.cols, ws_.xq.get(), stream), "mmq activations")) return;
    kc::GemvEpilogue ep;
    ep.bias = bias;
    ep.residual = residual;
    auto* rest = static_cast<std::uint8_t*>(ws_.xq.get()) + act;
    check(kc::mmq(m, ws_.xq.get(), n, residual != nullptr ? residual : y, ep, rest,
                  ws_.xq.bytes() > act ? ws_.xq.bytes() - act : 0, stream),
          "mmq");
    return;
  }
  x = q8_rows(m, x, n);
  if (x == nullptr) return;
  if (n <= std::max<std::int64_t>(kc::kMaxGemvTokens, gemv_max_tokens_)) {
    // Chunks of <= kMaxGemvTokens rows, each a pass over the weights.
    float* out = residual != nullptr ? residual : y;
    for (std::int64_t t = 0; t < n; t += kc::kMaxGemvTokens) {
      const auto rows = static_cast<int>(std::min<std::int64_t>(kc::kMaxGemvTokens, n - t));
      kc::GemvEpilogue ep;
      ep.bias = bias;
      ep.residual = residual != nullptr ? residual + t * w.rows : nullptr;
      if (!check(kc::gemv(m, x + t * w.cols, rows, out + t * w.rows, stream, ep), "gemv")) return;
    }
    return;
  }
  float* out = residual != nullptr ? scratch : y;
  if (!check(kc::matmul_f16(ctx_->cublas(), m, x, n, out, ws_.gemm.get(), ws_.gemm.bytes(), stream), "matmul_f16")) {
    return;
  }
  if (bias != nullptr && !check(kc::add_bias(out, bias, n, w.rows, stream), "bias")) return;
  if (residual != nullptr) check(kc::add(residual, out, residual, n * w.rows, stream), "residual add");
}

const float* CudaBackend::q8_rows(const kc::DeviceMatrix& w, const float* x, std::int64_t n) {
  if (n <= 1 || kc::default_gemv_activations() != kc::GemvActivations::kQ8 || !kc::gemv_q8_applies(w, 1)) return x;
  float* out = ws_.xq.as<float>();
  if (!check(kc::quantize_dequantize_q8(x, n, w.cols, out, ctx_->stream()), "8-bit activation rows")) return nullptr;
  return out;
}

void CudaBackend::do_linear(const backend::Matrix& w, Activation x, Activation y, const backend::Vector& bias) {
  if (skip_op(kTagLinear, w.data, y.data)) return;
  if (pending_glu_.set && linear_after_glu(w, x, y.data, bias.data, nullptr)) return;
  linear(w, x.data, n_tokens_, y.data, bias.data, nullptr, nullptr);
}

bool CudaBackend::linear_after_glu(const backend::Matrix& w, Activation x, float* y, const float* bias,
                                   float* residual) {
  const PendingGlu g = pending_glu_;
  pending_glu_ = {};
  const kc::DeviceMatrix m = device_matrix(w);
  kc::GemvOutput out{&m, residual != nullptr ? residual : y, {}};
  out.epilogue.bias = bias;
  out.epilogue.residual = residual;
  const kc::GemvInputGlu glu{
      g.up.data, g.kind == backend::GluKind::kGeGluTanh ? kc::GluInputKind::kGeGluTanh : kc::GluInputKind::kSwiGlu};
  if (g.gate.data == x.data && g.gate.width == x.width &&
      kc::gemv_glu_fuses(kc::GemvOptions{}, &out, 1, x.data, static_cast<int>(n_tokens_), glu)) {
    check(kc::gemv_fused_glu(kc::GemvOptions{}, &out, 1, x.data, glu, ctx_->stream()), "gemv (fused, glu input)");
    return true;
  }
  launch_glu(g);
  return false;
}

// One token: one gemv_fused call (one launch over the matrices' rows, x
// quantized once, where the 8-bit path applies; each output bit-identical to
// its own gemv either way). Larger steps: one product per matrix.
void CudaBackend::do_linear_many(Activation x, std::span<const backend::LinearOut> outs) {
  if (skip_op(kTagLinearMany, x.data, outs.empty() ? nullptr : outs.front().y.data)) return;
  if (n_tokens_ == 1 && outs.size() <= static_cast<std::size_t>(kc::kMaxFused)) {
    std::array<kc::DeviceMatrix, kc::kMaxFused> m;
    std::array<kc::GemvOutput, kc::kMaxFused> y;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      m[i] = device_matrix(outs[i].w);
      y[i].w = &m[i];
      y[i].y = outs[i].y.data;
      y[i].epilogue.bias = outs[i].bias.data;
    }
    const int n = static_cast<int>(outs.size());
    if (pending_norm_.set) {
      const PendingNorm p = pending_norm_;
      pending_norm_ = {};
      const kc::GemvInputNorm norm{p.weight, p.eps, p.out.data};
      if (p.out.data == x.data && p.x.width == x.width &&
          kc::gemv_norm_fuses(kc::GemvOptions{}, y.data(), n, p.x.data, 1, norm)) {
        check(kc::gemv_fused_norm(kc::GemvOptions{}, y.data(), n, p.x.data, norm, ctx_->stream()),
              "gemv (fused, rms_norm input)");
        return;
      }
      check(kc::rmsnorm(p.x.data, p.weight, p.out.data, n_tokens_, p.x.width, p.eps, ctx_->stream()), "rms_norm");
    }
    check(kc::gemv_fused(kc::GemvOptions{}, y.data(), static_cast<int>(outs.size()), x.data,
                         static_cast<int>(n_tokens_), ctx_->stream()),
          "gemv (fused)");
    return;
  }
  flush_pending();
  // mmq for all of them: x quantized once.
  bool quantized = false;
  if (!outs.empty() && n_tokens_ > 1) {
    const kc::DeviceMatrix first = device_matrix(outs.front().w);
    bool all = true;
    for (const backend::LinearOut& o : outs)
      all = all && o.w.cols == first.cols && use_mmq(device_matrix(o.w), n_tokens_);
    if (all) {
      if (!check(kc::mmq_quantize(x.data, n_tokens_, first.cols, ws_.xq.get(), ctx_->stream()), "mmq activations")) {
        return;
      }
      quantized = true;
    }
  }
  for (const backend::LinearOut& o : outs) {
    linear(o.w, x.data, n_tokens_, o.y.data, o.bias.data, nullptr, nullptr, quantized);
  }
}

void CudaBackend::do_linear_residual(const backend::Matrix& w, Activation x, Activation residual, Activation scratch) {
  if (skip_op(kTagLinearResidual, w.data, residual.data)) return;
  if (pending_glu_.set && linear_after_glu(w, x, residual.data, nullptr, residual.data)) return;
  linear(w, x.data, n_tokens_, residual.data, nullptr, residual.data, scratch.data);
}

void CudaBackend::do_rope(Activation q, std::int32_t n_q_heads, Activation k, std::int32_t n_k_heads,
                          const backend::RopeConfig& c) {
  if (skip_op(6, q.data, k.data)) return;
  const PendingRope r{true, q, k, n_q_heads, n_k_heads, c};
  if (fuse_rope_kv_on() && !instrumented() && n_k_heads == shape_.n_head_kv && c.head_dim == shape_.head_dim &&
      k.width == std::int64_t{n_k_heads} * c.head_dim) {
    pending_rope_ = r;  // for the store_kv after it
    return;
  }
  launch_rope(r);
}

bool CudaBackend::fp8_uncalibrated(std::int32_t layer) const {
  if (kv_precision_ != KvPrecision::kFp8E4M3) return false;
  const auto i = 2 * static_cast<std::size_t>(layer);
  return i + 1 < kv_scales_.size() && (kv_scales_[i] == 0.0f || kv_scales_[i + 1] == 0.0f);
}

bool CudaBackend::fp8_all_calibrated() const {
  for (std::int32_t l = 0; l < shape_.n_layer; ++l) {
    if (fp8_uncalibrated(l)) return false;
  }
  return true;
}

// The step's K (rotated) and V maxima, read back once per layer in its first
// (eager: plan_graph captures no step before every layer is calibrated) step.
void CudaBackend::calibrate_fp8(std::int32_t layer, Activation k, Activation v) {
  cudaStream_t stream = ctx_->stream();
  if (!check(kc::abs_max2(k.data, v.data, n_tokens_ * k.width, kv_amax_.as<float>(), stream), "fp8 KV calibration")) {
    return;
  }
  float amax[2] = {0.0f, 0.0f};
  if (!check(kc::Status{cudaMemcpyAsync(amax, kv_amax_.get(), sizeof(amax), cudaMemcpyDeviceToHost, stream),
                        "cudaMemcpyAsync"},
             "fp8 KV calibration") ||
      !check(kc::Status{cudaStreamSynchronize(stream), "cudaStreamSynchronize"}, "fp8 KV calibration")) {
    return;
  }
  for (int i = 0; i < 2; ++i) {
    float& s = kv_scales_[2 * static_cast<std::size_t>(layer) + static_cast<std::size_t>(i)];
    if (s == 0.0f) s = kernels::kv_fp8_scale(amax[i]);
  }
}

void CudaBackend::do_store_kv(std::int32_t layer, Activation k, Activation v) {
  if (skip_op(kTagStoreKv + (static_cast<std::uint64_t>(layer) << 8), k.data, v.data)) return;
  const std::int32_t* slots = ws_.ints.as<const std::int32_t>() + 2 * n_tokens_;
  if (fp8_uncalibrated(layer) && graph_mode_ == StepGraphs::Mode::kEager) {
    if (pending_rope_.set) {  // the maxima of the rotated K: rope first, unfused (once)
      const PendingRope r = pending_rope_;
      pending_rope_ = {};
      launch_rope(r);
    }
    calibrate_fp8(layer, k, v);
  }
  if (pending_rope_.set) {
    const PendingRope r = pending_rope_;
    pending_rope_ = {};
    if (r.k.data != k.data) {
      launch_rope(r);
    } else {
      const std::int32_t* positions = ws_.ints.as<const std::int32_t>() + n_tokens_;
      check(kc::rope_store_kv(layer_cache(layer), r.q.data, r.n_q_heads, k.data, v.data, positions, slots, n_tokens_,
                              rope_params(r.config), ctx_->stream()),
            "rope + store_kv");
      return;
    }
  }
  check(kc::store_kv(layer_cache(layer), k.data, v.data, slots, n_tokens_, ctx_->stream()), "store_kv");
}

void CudaBackend::do_attention(std::int32_t layer, Activation q, Activation out, float scale, std::int32_t window) {
  if (skip_op(8 + (static_cast<std::uint64_t>(layer) << 8), q.data, out.data)) return;
  const auto* ints = ws_.ints.as<const std::int32_t>();
  kc::PagedAttentionParams params;
  params.n_heads = shape_.n_head;
  params.scale = scale;
  params.window = window;
  params.split_len = sz_.split_len;
  if (sz_.n_tiles > 0) {
    kc::PrefillBatch tiles;
    tiles.q = q.data;
    tiles.tiles = reinterpret_cast<const kc::PrefillTile*>(ints + sz_.tiles_at);
    tiles.n_tiles = sz_.n_tiles;
    tiles.block_tables = ints + 4 * n_tokens_;
    tiles.max_blocks_per_seq = sz_.max_blocks;
    if (!check(kc::paged_attention_prefill(layer_cache(layer), tiles, params, out.data, ctx_->stream()),
               "prompt attention")) {
      return;
    }
  }
  if (sz_.n_split_rows == 0) return;
  kc::AttentionBatch batch;
  batch.q = q.data;
  batch.positions = ints + n_tokens_;
  batch.token_seq = ints + 3 * n_tokens_;
  batch.block_tables = ints + 4 * n_tokens_;
  batch.max_blocks_per_seq = sz_.max_blocks;
  batch.n_tokens = sz_.n_split_rows;
  batch.max_context = sz_.max_context;
  batch.token_index = sz_.n_tiles > 0 ? ints + sz_.split_rows_at : nullptr;
  check(kc::paged_attention(layer_cache(layer), batch, params, out.data, ws_.attn_split.get(), ws_.attn_split.bytes(),
                            ctx_->stream()),
        "paged attention");
}

void CudaBackend::do_glu(backend::GluKind kind, Activation gate, Activation up) {
  if (skip_op(9, gate.data, up.data)) return;
  const PendingGlu g{true, kind, gate, up};
  if (fuse_glu_on() && n_tokens_ == 1 && !instrumented() && gate.width == up.width && gate.width <= kFuseGluMaxWidth) {
    pending_glu_ = g;  // for the product after it
    return;
  }
  launch_glu(g);
}

void CudaBackend::launch_glu(const PendingGlu& g) {
  const std::int64_t n = n_tokens_ * g.gate.width;
  if (g.kind == backend::GluKind::kGeGluTanh) {
    check(kc::geglu_tanh(g.gate.data, g.up.data, g.gate.data, n, ctx_->stream()), "geglu_tanh");
    return;
  }
  check(kc::swiglu(g.gate.data, g.up.data, g.gate.data, n, ctx_->stream()), "swiglu");
}

void CudaBackend::do_add(Activation x, Activation y) {
  if (skip_op(10, x.data, y.data)) return;
  check(kc::add(x.data, y.data, x.data, n_tokens_ * x.width, ctx_->stream()), "add");
}

// Final norm of the rows that want logits, packed into scratch in step order,
// the output projection into ws_.logits, and the copy back to the host (for
// a graph step, after the launch: run_graph).
void CudaBackend::do_logits(Activation x, const backend::Vector& norm, float eps, Activation scratch,
                            std::span<float> logits) {
  graph_logits_ = logits;
  if (skip_op(11, x.data, scratch.data) || sz_.n_logit_rows == 0) return;
  const kc::DeviceMatrix out_m = device_matrix(output_);
  const kc::GemvOutput one{&out_m, ws_.logits.as<float>(), {}};
  const float* first = x.data + logit_rows_.front().row * x.width;
  const kc::GemvInputNorm fused_norm{norm.data, eps, scratch.data};
  std::int64_t out_rows = 0;
  if (fuse_norm_on() && !instrumented() && sz_.n_logit_rows == 1 &&
      kc::gemv_norm_fuses(kc::GemvOptions{}, &one, 1, first, 1, fused_norm)) {
    // One row: the output norm runs in the output product's prologue.
    if (!check(kc::gemv_fused_norm(kc::GemvOptions{}, &one, 1, first, fused_norm, ctx_->stream()),
               "output norm + gemv")) {
      return;
    }
    out_rows = 1;
  } else {
    for (const LogitRows& r : logit_rows_) {
      if (!check(kc::rmsnorm(x.data + r.row * x.width, norm.data, scratch.data + out_rows * scratch.width, r.count,
                             x.width, eps, ctx_->stream()),
                 "output norm")) {
        return;
      }
      out_rows += r.count;
    }
    linear(output_, scratch.data, out_rows, ws_.logits.as<float>(), nullptr, nullptr, nullptr);
  }
  if (sz_.argmax) {  // greedy rows: their arg-maxes only (4 bytes a row, not n_vocab floats)
    if (!check(kc::argmax(ws_.logits.as<const float>(), out_rows, output_.rows,
                          ws_.ints.as<std::int32_t>() + sz_.argmax_at, ctx_->stream()),
               "argmax")) {
      return;
    }
    if (graph_mode_ == StepGraphs::Mode::kEager) copy_argmax(ctx_->stream());
    return;
  }
  if (graph_mode_ != StepGraphs::Mode::kEager) return;
  const std::size_t bytes = static_cast<std::size_t>(out_rows * output_.rows) * sizeof(float);
  check(kc::Status{cudaMemcpyAsync(logits.data(), ws_.logits.get(), bytes, cudaMemcpyDeviceToHost, ctx_->stream()),
                   "cudaMemcpyAsync (logits)"},
        "forward");
}

}  // namespace hearth::cuda
