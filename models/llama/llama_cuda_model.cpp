#include "models/llama/llama_cuda_model.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "engine/core/log.h"
#include "engine/model/step_check.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/glu.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/store_kv.h"

namespace hearth::models {
namespace kc = hearth::kernels::cuda;

namespace {

std::size_t element_bytes(bool fp8) {
  return fp8 ? 1 : sizeof(std::uint16_t);
}

std::size_t f32_bytes(std::int64_t n) {
  return static_cast<std::size_t>(n) * sizeof(float);
}

std::string bytes_text(std::size_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

// Bytes upload_weights() will put on the device: every tensor the forward pass
// reads, the tied output matrix once.
std::size_t upload_bytes(const LlamaWeights& w) {
  std::size_t bytes = 0;
  const auto add = [&](const WeightRef& r) { bytes += r ? r.info->n_bytes : 0; };
  add(w.token_embd);
  if (w.output.data != w.token_embd.data) add(w.output);
  add(w.output_norm);
  for (const LlamaLayerWeights& l : w.layers) {
    for (const WeightRef* r :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
      add(*r);
    }
  }
  return bytes;
}

// Checked before anything is uploaded, so a model that cannot fit fails at
// once (and "auto" falls back to the CPU) instead of after most of an upload.
Result<void> check_weights_fit(std::size_t weights, std::size_t budget, const cuda::CudaContext& ctx) {
  if (budget > 0 && weights > budget) {
    return make_error(ErrorCode::kOutOfMemory, "the weights need " + bytes_text(weights) +
                                                   " of GPU memory; the VRAM budget is " + bytes_text(budget));
  }
  HEARTH_ASSIGN_OR_RETURN(const cuda::DeviceMemoryInfo info, ctx.memory_info());
  if (weights > info.free_bytes) {
    return make_error(ErrorCode::kOutOfMemory, "the weights need " + bytes_text(weights) +
                                                   " of GPU memory; CUDA device " + std::to_string(ctx.device()) +
                                                   " (" + ctx.name() + ") has " + bytes_text(info.free_bytes) +
                                                   " free");
  }
  return {};
}

// memory() runs after every engine step (hundreds a second in decode), and
// cudaMemGetInfo is a driver call of some microseconds (it does not
// synchronize): refreshing it a few times a second is enough for the VRAM
// panel, and makes its cost vanish.
constexpr std::chrono::milliseconds kDeviceInfoRefresh{250};

}  // namespace

std::size_t LlamaCudaModel::Workspace::bytes() const {
  return x.bytes() + h.bytes() + q.bytes() + k.bytes() + v.bytes() + attn.bytes() + gate.bytes() + up.bytes() +
         logits.bytes() + ints.bytes() + gemm.bytes() + attn_split.bytes();
}

Result<std::unique_ptr<LlamaCudaModel>> LlamaCudaModel::load(std::unique_ptr<gguf::GgufFile> file,
                                                             const LlamaCudaOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(LlamaWeights weights, bind_llama_weights(*file));
  if (weights.hp.head_dim % 32 != 0 || weights.hp.head_dim > static_cast<std::uint32_t>(kc::kMaxAttnHeadDim)) {
    return make_error(ErrorCode::kUnsupported, "the CUDA attention needs head_dim a multiple of 32 up to 256, not " +
                                                   std::to_string(weights.hp.head_dim));
  }
  HEARTH_ASSIGN_OR_RETURN(auto ctx, cuda::CudaContext::create(options.device));
  HEARTH_TRY(check_weights_fit(upload_bytes(weights), options.vram_budget_bytes, *ctx));
  std::unique_ptr<LlamaCudaModel> model(new LlamaCudaModel(weights.hp, std::move(ctx), options));
  HEARTH_TRY(model->upload_weights(weights));
  return model;  // the file (and its mapping) goes here: the weights live on the device
}

LlamaCudaModel::LlamaCudaModel(ModelHyperParams hp, std::unique_ptr<cuda::CudaContext> ctx,
                               const LlamaCudaOptions& options)
    : hp_(std::move(hp)),
      ctx_(std::move(ctx)),
      kv_fp8_(options.kv_fp8),
      vram_budget_(options.vram_budget_bytes),
      layer_timing_interval_(options.layer_timing_interval) {}

LlamaCudaModel::~LlamaCudaModel() {
  // Buffers are freed on this context's device (cudaFree needs no stream, but
  // nothing may still be running on them).
  if (ctx_ && ctx_->make_current()) static_cast<void>(ctx_->synchronize());
}

Result<LlamaCudaModel::Matrix> LlamaCudaModel::upload_matrix(const WeightRef& w) {
  const std::string name(w.info->name);
  const auto type = static_cast<kernels::GgmlType>(w.type);
  Matrix m{type, nullptr, w.rows, w.cols, 0};
  if (!kc::cuda_supports_type(type)) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": its type has no CUDA kernel");
  }
  m.row_stride = kernels::row_bytes(type, w.cols);
  const std::size_t bytes = m.row_stride * static_cast<std::size_t>(w.rows);
  if (bytes != w.info->n_bytes) {
    return make_error(ErrorCode::kCorruptFile, "tensor " + name + ": size does not match its shape");
  }
  HEARTH_ASSIGN_OR_RETURN(cuda::DeviceBuffer buffer, cuda::DeviceBuffer::allocate(bytes, "tensor " + name));
  HEARTH_TRY(buffer.upload(w.data, bytes, "tensor " + name));
  m.data = buffer.get();
  if (!kc::validate_matrix(m).ok()) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": shape not supported by the CUDA kernels");
  }
  weight_bytes_ += bytes;
  weight_buffers_.push_back(std::move(buffer));
  return m;
}

Result<const float*> LlamaCudaModel::upload_vector(const WeightRef& w) {
  if (!w) return static_cast<const float*>(nullptr);
  const std::string name(w.info->name);
  if (static_cast<kernels::GgmlType>(w.type) != kernels::GgmlType::kF32) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": the CUDA path needs an f32 vector");
  }
  const std::size_t bytes = f32_bytes(w.rows * w.cols);
  HEARTH_ASSIGN_OR_RETURN(cuda::DeviceBuffer buffer, cuda::DeviceBuffer::allocate(bytes, "tensor " + name));
  HEARTH_TRY(buffer.upload(w.data, bytes, "tensor " + name));
  const auto* p = buffer.as<const float>();
  weight_bytes_ += bytes;
  weight_buffers_.push_back(std::move(buffer));
  return p;
}

Result<void> LlamaCudaModel::upload_weights(const LlamaWeights& w) {
  HEARTH_ASSIGN_OR_RETURN(token_embd_, upload_matrix(w.token_embd));
  // Tied embeddings (SmolLM2): the output matrix is the same tensor, uploaded once.
  if (w.output.data == w.token_embd.data) {
    output_ = token_embd_;
  } else {
    HEARTH_ASSIGN_OR_RETURN(output_, upload_matrix(w.output));
  }
  HEARTH_ASSIGN_OR_RETURN(output_norm_, upload_vector(w.output_norm));
  layers_.resize(w.layers.size());
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const LlamaLayerWeights& src = w.layers[l];
    LayerWeights& dst = layers_[l];
    HEARTH_ASSIGN_OR_RETURN(dst.attn_norm, upload_vector(src.attn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.wq, upload_matrix(src.wq));
    HEARTH_ASSIGN_OR_RETURN(dst.wk, upload_matrix(src.wk));
    HEARTH_ASSIGN_OR_RETURN(dst.wv, upload_matrix(src.wv));
    HEARTH_ASSIGN_OR_RETURN(dst.wo, upload_matrix(src.wo));
    HEARTH_ASSIGN_OR_RETURN(dst.bq, upload_vector(src.bq));
    HEARTH_ASSIGN_OR_RETURN(dst.bk, upload_vector(src.bk));
    HEARTH_ASSIGN_OR_RETURN(dst.bv, upload_vector(src.bv));
    HEARTH_ASSIGN_OR_RETURN(dst.ffn_norm, upload_vector(src.ffn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.w_gate, upload_matrix(src.w_gate));
    HEARTH_ASSIGN_OR_RETURN(dst.w_up, upload_matrix(src.w_up));
    HEARTH_ASSIGN_OR_RETURN(dst.w_down, upload_matrix(src.w_down));
  }
  return {};
}

std::size_t LlamaCudaModel::kv_block_bytes(std::int32_t block_size) const {
  return 2ull * hp_.n_layer * static_cast<std::size_t>(block_size) * hp_.n_head_kv * hp_.head_dim *
         element_bytes(kv_fp8_);
}

Result<void> LlamaCudaModel::allocate_kv(const KvLayout& layout) {
  if (layout.num_blocks <= 0 || layout.block_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "KV layout needs a positive number of blocks and block size");
  }
  HEARTH_TRY(ctx_->make_current());
  HEARTH_TRY(ctx_->synchronize());
  k_pool_ = {};
  v_pool_ = {};
  kv_layout_ = {};
  const std::size_t per_pool = kv_block_bytes(layout.block_size) / 2 * static_cast<std::size_t>(layout.num_blocks);
  refresh_device_info();
  HEARTH_TRY(fits_budget(weight_bytes_ + ws_.bytes(), 2 * per_pool,
                         "a KV pool of " + std::to_string(layout.num_blocks) + " blocks"));
  HEARTH_ASSIGN_OR_RETURN(k_pool_, cuda::DeviceBuffer::allocate(per_pool, "the KV cache (K)"));
  auto v = cuda::DeviceBuffer::allocate(per_pool, "the KV cache (V)");
  if (!v) {
    k_pool_ = {};
    return std::move(v).error();
  }
  v_pool_ = std::move(v).value();
  kv_layout_ = layout;
  return {};
}

kc::PagedKvCache LlamaCudaModel::layer_cache(std::uint32_t layer) const {
  kc::PagedKvCache c;
  const std::size_t layer_bytes = k_pool_.bytes() / hp_.n_layer;
  c.k = k_pool_.as<std::byte>() + layer * layer_bytes;
  c.v = v_pool_.as<std::byte>() + layer * layer_bytes;
  // FP8 scale 1: K/V values of these models stay well inside +-448, and E4M3's
  // relative step (1/16) is the same at every magnitude above 2^-6.
  c.dtype = kv_fp8_ ? kc::KvCacheDtype::kFp8E4M3 : kc::KvCacheDtype::kF16;
  c.n_blocks = kv_layout_.num_blocks;
  c.block_size = kv_layout_.block_size;
  c.n_kv_heads = static_cast<int>(hp_.n_head_kv);
  c.head_dim = static_cast<int>(hp_.head_dim);
  return c;
}

ModelMemory LlamaCudaModel::memory() const {
  ModelMemory m{weight_bytes_, k_pool_.bytes() + v_pool_.bytes(), ws_.bytes()};
  std::lock_guard<std::mutex> lock(device_info_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (device_info_.total_bytes == 0 || now - device_info_time_ >= kDeviceInfoRefresh) {
    if (auto info = ctx_->memory_info()) {  // on failure the last figures stay (0 before any)
      device_info_ = *info;
      device_info_time_ = now;
    }
  }
  m.device_free = device_info_.free_bytes;
  m.device_total = device_info_.total_bytes;
  return m;
}

void LlamaCudaModel::refresh_device_info() {
  std::lock_guard<std::mutex> lock(device_info_mu_);
  device_info_.total_bytes = 0;  // memory() asks the driver again
}

Result<void> LlamaCudaModel::fits_budget(std::size_t held, std::size_t need, const std::string& what) const {
  if (vram_budget_ == 0 || (need <= vram_budget_ && held <= vram_budget_ - need)) return {};
  return make_error(ErrorCode::kOutOfMemory, what + " needs " + bytes_text(need) + " of GPU memory beside the " +
                                                 bytes_text(held) + " the model holds; the VRAM budget is " +
                                                 bytes_text(vram_budget_));
}

Result<cuda::DeviceMemoryInfo> LlamaCudaModel::device_memory() const {
  return ctx_->memory_info();
}

Result<void> LlamaCudaModel::check_steps(std::span<const SequenceStep> steps, std::size_t logits_size) const {
  if (!k_pool_) return make_error(ErrorCode::kInvalidArgument, "forward before allocate_kv");
  return hearth::check_steps(steps, hp_.n_vocab, kv_layout_, logits_size);
}

std::size_t LlamaCudaModel::workspace_bytes_for(const StepSizes& sz) const {
  const std::int64_t q_dim = std::int64_t{hp_.n_head} * hp_.head_dim;
  const std::int64_t kv_dim = std::int64_t{hp_.n_head_kv} * hp_.head_dim;
  // The activation buffers of reserve(): x, h, q, k, v, attn, gate, up.
  const std::int64_t per_token = 2 * std::int64_t{hp_.n_embd} + 2 * q_dim + 2 * kv_dim + 2 * std::int64_t{hp_.n_ff};
  const std::int64_t tokens = sz.n_tokens > ws_.tokens ? std::max<std::int64_t>(sz.n_tokens, 16) : ws_.tokens;
  return f32_bytes(tokens * per_token) + std::max(ws_.logits.bytes(), f32_bytes(sz.n_logit_rows * hp_.n_vocab)) +
         std::max(ws_.ints.bytes(), sz.n_ints * sizeof(std::int32_t)) + std::max(ws_.gemm.bytes(), sz.gemm_bytes) +
         std::max(ws_.attn_split.bytes(), sz.attn_bytes);
}

Result<void> LlamaCudaModel::reserve(const StepSizes& sz) {
  // Something grows exactly when the target exceeds what is held. Checked
  // before anything is freed: a step over the budget leaves the workspace as
  // it was, ready for the next (smaller) step.
  if (const std::size_t target = workspace_bytes_for(sz); target > ws_.bytes()) {
    HEARTH_TRY(fits_budget(weight_bytes_ + k_pool_.bytes() + v_pool_.bytes(), target,
                           "the workspace of a " + std::to_string(sz.n_tokens) + "-token step"));
    refresh_device_info();
  }
  if (sz.n_tokens > ws_.tokens) {
    ws_.tokens = 0;  // stays 0 if an allocation below fails: the next step retries
    const std::int64_t n = std::max<std::int64_t>(sz.n_tokens, 16);
    const std::int64_t q_dim = std::int64_t{hp_.n_head} * hp_.head_dim;
    const std::int64_t kv_dim = std::int64_t{hp_.n_head_kv} * hp_.head_dim;
    const auto grow = [](cuda::DeviceBuffer& b, std::size_t bytes, const char* what) -> Result<void> {
      b = {};
      HEARTH_ASSIGN_OR_RETURN(b, cuda::DeviceBuffer::allocate(bytes, what));
      return {};
    };
    HEARTH_TRY(grow(ws_.x, f32_bytes(n * hp_.n_embd), "activations (x)"));
    HEARTH_TRY(grow(ws_.h, f32_bytes(n * hp_.n_embd), "activations (h)"));
    HEARTH_TRY(grow(ws_.q, f32_bytes(n * q_dim), "activations (q)"));
    HEARTH_TRY(grow(ws_.k, f32_bytes(n * kv_dim), "activations (k)"));
    HEARTH_TRY(grow(ws_.v, f32_bytes(n * kv_dim), "activations (v)"));
    HEARTH_TRY(grow(ws_.attn, f32_bytes(n * q_dim), "activations (attention)"));
    HEARTH_TRY(grow(ws_.gate, f32_bytes(n * hp_.n_ff), "activations (gate)"));
    HEARTH_TRY(grow(ws_.up, f32_bytes(n * hp_.n_ff), "activations (up)"));
    ws_.tokens = n;
  }
  const auto at_least = [](cuda::DeviceBuffer& b, std::size_t bytes, const char* what) -> Result<void> {
    if (b.bytes() >= bytes) return {};
    b = {};
    HEARTH_ASSIGN_OR_RETURN(b, cuda::DeviceBuffer::allocate(bytes, what));
    return {};
  };
  HEARTH_TRY(at_least(ws_.logits, f32_bytes(sz.n_logit_rows * hp_.n_vocab), "logits"));
  HEARTH_TRY(at_least(ws_.ints, sz.n_ints * sizeof(std::int32_t), "step inputs"));
  HEARTH_TRY(at_least(ws_.gemm, sz.gemm_bytes, "the f16 matmul scratch"));
  return at_least(ws_.attn_split, sz.attn_bytes, "the split-KV attention scratch");
}

std::size_t LlamaCudaModel::gemm_workspace_bytes(std::int64_t n, std::int64_t n_logit_rows) const {
  std::size_t bytes = 0;
  const auto need = [&](const Matrix& m, std::int64_t rows) {
    if (rows > kc::kMaxGemvTokens) bytes = std::max(bytes, kc::matmul_f16_workspace_bytes(m, rows));
  };
  for (const LayerWeights& lw : layers_) {
    for (const Matrix* m : {&lw.wq, &lw.wk, &lw.wv, &lw.wo, &lw.w_gate, &lw.w_up, &lw.w_down}) need(*m, n);
  }
  need(output_, n_logit_rows);
  return bytes;
}

// Fills host_ints_ (see StepInputs) and returns the step's sizes.
LlamaCudaModel::StepSizes LlamaCudaModel::stage_inputs(std::span<const SequenceStep> steps) {
  StepSizes sz;
  std::size_t max_blocks = 1;
  for (const auto& s : steps) {
    sz.n_tokens += static_cast<std::int64_t>(s.tokens.size());
    max_blocks = std::max(max_blocks, s.block_table.size());
    const std::int64_t end = s.start_pos + static_cast<std::int64_t>(s.tokens.size());
    sz.max_context = std::max(sz.max_context, static_cast<int>(end));
    if (s.want_logits) sz.n_logit_rows += s.all_logits ? static_cast<std::int64_t>(s.tokens.size()) : 1;
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

Result<void> LlamaCudaModel::forward(std::span<const SequenceStep> steps, std::span<float> logits) {
  layer_ms_.clear();
  HEARTH_TRY(check_steps(steps, logits.size()));
  HEARTH_TRY(ctx_->make_current());
  StepSizes sz = stage_inputs(steps);
  sz.split_len = kc::choose_split_len(static_cast<int>(sz.n_tokens), static_cast<int>(hp_.n_head),
                                      static_cast<int>(hp_.n_head_kv), sz.max_context, ctx_->sm_count());
  sz.gemm_bytes = gemm_workspace_bytes(sz.n_tokens, sz.n_logit_rows);
  sz.attn_bytes = kc::paged_attention_workspace_bytes(static_cast<int>(sz.n_tokens), static_cast<int>(hp_.n_head),
                                                      static_cast<int>(hp_.head_dim), sz.max_context, sz.split_len);
  HEARTH_TRY(reserve(sz));
  const bool timed =
      layer_timing_interval_ > 0 && forward_count_++ % static_cast<unsigned>(layer_timing_interval_) == 0;
  if (timed) HEARTH_TRY(layer_timer_.init(hp_.n_layer));
  cudaStream_t stream = ctx_->stream();
  HEARTH_TRY(
      cuda::to_result(kc::Status{cudaMemcpyAsync(ws_.ints.get(), host_ints_.data(), sz.n_ints * sizeof(std::int32_t),
                                                 cudaMemcpyHostToDevice, stream),
                                 "cudaMemcpyAsync (step inputs)"},
                      "forward"));
  HEARTH_TRY(run_layers(sz, timed));
  HEARTH_TRY(output_logits(steps));
  const std::size_t out_bytes = f32_bytes(sz.n_logit_rows * hp_.n_vocab);
  HEARTH_TRY(cuda::to_result(
      kc::Status{cudaMemcpyAsync(logits.data(), ws_.logits.get(), out_bytes, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync (logits)"},
      "forward"));
  HEARTH_TRY(ctx_->synchronize());
  if (timed) {
    layer_ms_.resize(hp_.n_layer);
    if (Result<void> r = layer_timer_.read(layer_ms_); !r) {
      layer_ms_.clear();  // the logits are good: the step succeeds untimed
      log::get("cuda")->warn("{}", r.error().message);
    }
  }
  return {};
}

Result<void> LlamaCudaModel::run_layers(const StepSizes& sz, bool timed) {
  const auto n = static_cast<int>(sz.n_tokens);
  const auto* ids = ws_.ints.as<const std::int32_t>();
  HEARTH_TRY(
      cuda::to_result(kc::embedding_lookup(token_embd_, ids, n, ws_.x.as<float>(), ctx_->stream()), "token embedding"));
  if (timed) HEARTH_TRY(layer_timer_.record(0, ctx_->stream()));
  for (std::uint32_t l = 0; l < hp_.n_layer; ++l) {
    HEARTH_TRY(attention_layer(l, sz));
    HEARTH_TRY(ffn_layer(l, sz.n_tokens));
    if (timed) HEARTH_TRY(layer_timer_.record(l + 1, ctx_->stream()));
  }
  return {};
}

Result<void> LlamaCudaModel::attention_layer(std::uint32_t l, const StepSizes& sz) {
  const LayerWeights& lw = layers_[l];
  const std::int64_t n = sz.n_tokens;
  cudaStream_t stream = ctx_->stream();
  float* q = ws_.q.as<float>();
  float* k = ws_.k.as<float>();
  float* v = ws_.v.as<float>();
  const float* h = ws_.h.as<const float>();
  HEARTH_TRY(cuda::to_result(
      kc::rmsnorm(ws_.x.as<float>(), lw.attn_norm, ws_.h.as<float>(), n, hp_.n_embd, hp_.rms_eps, stream),
      "attention norm"));
  HEARTH_TRY(linear(lw.wq, h, n, q, lw.bq));
  HEARTH_TRY(linear(lw.wk, h, n, k, lw.bk));
  HEARTH_TRY(linear(lw.wv, h, n, v, lw.bv));
  const auto* ints = ws_.ints.as<const std::int32_t>();
  const std::int32_t* positions = ints + n;
  kernels::RopeParams rp;
  rp.head_dim = static_cast<int>(hp_.head_dim);
  rp.n_rot = rp.head_dim;
  rp.freq_base = hp_.rope_base;
  rp.freq_scale = 1.0f / hp_.rope_scale;
  rp.order = hp_.rope_neox ? kernels::RopeOrder::kNeox : kernels::RopeOrder::kAdjacent;
  HEARTH_TRY(cuda::to_result(kc::rope(q, n, static_cast<int>(hp_.n_head), positions, rp, stream), "rope (q)"));
  HEARTH_TRY(cuda::to_result(kc::rope(k, n, static_cast<int>(hp_.n_head_kv), positions, rp, stream), "rope (k)"));
  const kc::PagedKvCache cache = layer_cache(l);
  HEARTH_TRY(cuda::to_result(kc::store_kv(cache, k, v, ints + 2 * n, n, stream), "store_kv"));
  kc::AttentionBatch batch;
  batch.q = q;
  batch.positions = positions;
  batch.token_seq = ints + 3 * n;
  batch.block_tables = ints + 4 * n;
  batch.max_blocks_per_seq = sz.max_blocks;
  batch.n_tokens = static_cast<int>(n);
  batch.max_context = sz.max_context;
  kc::PagedAttentionParams params;
  params.n_heads = static_cast<int>(hp_.n_head);
  params.scale = 1.0f / std::sqrt(static_cast<float>(hp_.head_dim));
  params.split_len = sz.split_len;
  HEARTH_TRY(cuda::to_result(kc::paged_attention(cache, batch, params, ws_.attn.as<float>(), ws_.attn_split.get(),
                                                 ws_.attn_split.bytes(), stream),
                             "paged attention"));
  return linear(lw.wo, ws_.attn.as<const float>(), n, ws_.x.as<float>(), nullptr, true);
}

Result<void> LlamaCudaModel::ffn_layer(std::uint32_t l, std::int64_t n) {
  const LayerWeights& lw = layers_[l];
  cudaStream_t stream = ctx_->stream();
  float* gate = ws_.gate.as<float>();
  HEARTH_TRY(cuda::to_result(
      kc::rmsnorm(ws_.x.as<float>(), lw.ffn_norm, ws_.h.as<float>(), n, hp_.n_embd, hp_.rms_eps, stream), "ffn norm"));
  HEARTH_TRY(linear(lw.w_gate, ws_.h.as<const float>(), n, gate));
  HEARTH_TRY(linear(lw.w_up, ws_.h.as<const float>(), n, ws_.up.as<float>()));
  HEARTH_TRY(cuda::to_result(kc::swiglu(gate, ws_.up.as<const float>(), gate, n * hp_.n_ff, stream), "swiglu"));
  return linear(lw.w_down, gate, n, ws_.x.as<float>(), nullptr, true);
}

// Final norm of the rows that want logits, packed into h in step order, then
// the output projection into ws_.logits.
Result<void> LlamaCudaModel::output_logits(std::span<const SequenceStep> steps) {
  const std::int64_t embd = hp_.n_embd;
  std::int64_t row = 0, out_rows = 0;
  for (const auto& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    row += count;
    if (!s.want_logits) continue;
    const std::int64_t rows = s.all_logits ? count : 1;
    HEARTH_TRY(
        cuda::to_result(kc::rmsnorm(ws_.x.as<float>() + (row - rows) * embd, output_norm_,
                                    ws_.h.as<float>() + out_rows * embd, rows, embd, hp_.rms_eps, ctx_->stream()),
                        "output norm"));
    out_rows += rows;
  }
  if (out_rows == 0) return {};
  return linear(output_, ws_.h.as<const float>(), out_rows, ws_.logits.as<float>());
}

Result<void> LlamaCudaModel::linear(const Matrix& w, const float* x, std::int64_t n, float* y, const float* bias,
                                    bool accumulate) {
  cudaStream_t stream = ctx_->stream();
  if (n <= kc::kMaxGemvTokens) {
    kc::GemvEpilogue ep;
    ep.bias = bias;
    ep.residual = accumulate ? y : nullptr;
    return cuda::to_result(kc::gemv(w, x, static_cast<int>(n), y, stream, ep), "gemv");
  }
  float* out = accumulate ? ws_.h.as<float>() : y;
  HEARTH_TRY(cuda::to_result(kc::matmul_f16(ctx_->cublas(), w, x, n, out, ws_.gemm.get(), ws_.gemm.bytes(), stream),
                             "matmul_f16"));
  if (bias != nullptr) HEARTH_TRY(cuda::to_result(kc::add_bias(out, bias, n, w.rows, stream), "bias"));
  if (accumulate) HEARTH_TRY(cuda::to_result(kc::add(y, out, y, n * w.rows, stream), "residual add"));
  return {};
}

}  // namespace hearth::models
