#include "models/llama/llama_model.h"

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/step_check.h"

namespace hearth::models {

using backend::OpName;

Result<std::unique_ptr<LlamaModel>> LlamaModel::load(std::unique_ptr<gguf::GgufFile> file,
                                                     const LlamaOptions& options) {
  auto ops = std::make_unique<cpu::CpuBackend>(cpu::CpuBackendOptions{options.n_threads, options.refine_activations});
  std::unique_ptr<LlamaModel> model(new LlamaModel(std::move(ops)));
  HEARTH_TRY(model->init(std::move(file), true));
  return model;
}

LlamaModel::LlamaModel(std::unique_ptr<backend::Ops> ops) : ops_(std::move(ops)) {}

LlamaModel::~LlamaModel() = default;

Result<void> LlamaModel::init(std::unique_ptr<gguf::GgufFile> file, bool keep_file) {
  HEARTH_ASSIGN_OR_RETURN(const LlamaFileWeights bound, bind_llama_weights(*file));
  const ModelHyperParams& hp = bound.hp;
  HEARTH_TRY(ops_->set_shape(
      backend::ModelShape{static_cast<std::int32_t>(hp.n_layer), static_cast<std::int32_t>(hp.n_head),
                          static_cast<std::int32_t>(hp.n_head_kv), static_cast<std::int32_t>(hp.head_dim)}));
  HEARTH_ASSIGN_OR_RETURN(w_, upload_llama_weights(bound, *ops_));
  declare_activations();
  if (keep_file) file_ = std::move(file);
  return {};
}

void LlamaModel::declare_activations() {
  const ModelHyperParams& hp = w_.hp;
  const std::int64_t q_dim = std::int64_t{hp.n_head} * hp.head_dim;
  const std::int64_t kv_dim = std::int64_t{hp.n_head_kv} * hp.head_dim;
  a_.x = ops_->add_activation(hp.n_embd, "activations (x)");
  a_.h = ops_->add_activation(hp.n_embd, "activations (h)");
  a_.q = ops_->add_activation(q_dim, "activations (q)");
  a_.k = ops_->add_activation(kv_dim, "activations (k)");
  a_.v = ops_->add_activation(kv_dim, "activations (v)");
  a_.attn = ops_->add_activation(q_dim, "activations (attention)");
  a_.gate = ops_->add_activation(hp.n_ff, "activations (gate)");
  a_.up = ops_->add_activation(hp.n_ff, "activations (up)");
}

std::size_t LlamaModel::kv_block_bytes(std::int32_t block_size) const {
  return ops_->kv_block_bytes(block_size);
}

Result<void> LlamaModel::allocate_kv(const KvLayout& layout) {
  kv_layout_ = {};
  HEARTH_TRY(ops_->allocate_kv(layout));
  kv_layout_ = layout;
  return {};
}

ModelMemory LlamaModel::memory() const {
  return ops_->memory();
}

std::span<const double> LlamaModel::last_layer_ms() const {
  if (!last_step_ok_) return {};
  return ops_->layer_ms();
}

Result<void> LlamaModel::forward(std::span<const SequenceStep> steps, std::span<float> logits) {
  last_step_ok_ = false;
  if (!ops_->has_kv()) return make_error(ErrorCode::kInvalidArgument, "forward before allocate_kv");
  HEARTH_TRY(hearth::check_steps(steps, w_.hp.n_vocab, kv_layout_, logits.size()));
  HEARTH_TRY(ops_->begin_step(steps));
  backend::Ops& ops = *ops_;
  ops.embed(OpName{"token_embd"}, w_.token_embd, ops.act(a_.x));
  ops.mark_layer(0);
  for (std::uint32_t l = 0; l < w_.hp.n_layer; ++l) {
    attention_block(static_cast<std::int32_t>(l));
    ffn_block(static_cast<std::int32_t>(l));
    ops.mark_layer(l + 1);
  }
  ops.logits(OpName{"output"}, ops.act(a_.x), w_.output_norm, w_.hp.rms_eps, ops.act(a_.h), logits);
  HEARTH_TRY(ops.finish_step());
  last_step_ok_ = true;
  return {};
}

void LlamaModel::attention_block(std::int32_t l) {
  const ModelHyperParams& hp = w_.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  backend::Ops& ops = *ops_;
  const backend::Activation x = ops.act(a_.x), h = ops.act(a_.h), q = ops.act(a_.q), k = ops.act(a_.k),
                            v = ops.act(a_.v), attn = ops.act(a_.attn);
  ops.rms_norm(OpName{"attn_norm", l}, x, lw.attn_norm, hp.rms_eps, h);
  const backend::LinearOut qkv[] = {{lw.wq, q, lw.bq}, {lw.wk, k, lw.bk}, {lw.wv, v, lw.bv}};
  ops.linear_many(OpName{"qkv", l}, h, qkv);
  const backend::RopeConfig rope{static_cast<std::int32_t>(hp.head_dim), hp.rope_base, hp.rope_scale, hp.rope_neox};
  ops.rope(OpName{"rope", l}, q, static_cast<std::int32_t>(hp.n_head), k, static_cast<std::int32_t>(hp.n_head_kv),
           rope);
  ops.store_kv(OpName{"store_kv", l}, l, k, v);
  ops.attention(OpName{"attention", l}, l, q, attn, 1.0f / std::sqrt(static_cast<float>(hp.head_dim)));
  ops.linear_residual(OpName{"attn_output", l}, lw.wo, attn, x, h);
}

void LlamaModel::ffn_block(std::int32_t l) {
  const ModelHyperParams& hp = w_.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  backend::Ops& ops = *ops_;
  const backend::Activation x = ops.act(a_.x), h = ops.act(a_.h), gate = ops.act(a_.gate), up = ops.act(a_.up);
  ops.rms_norm(OpName{"ffn_norm", l}, x, lw.ffn_norm, hp.rms_eps, h);
  const backend::LinearOut gate_up[] = {{lw.w_gate, gate, {}}, {lw.w_up, up, {}}};
  ops.linear_many(OpName{"gate_up", l}, h, gate_up);
  ops.glu(OpName{"ffn_glu", l}, backend::GluKind::kSwiGlu, gate, up);
  ops.linear_residual(OpName{"ffn_down", l}, lw.w_down, gate, x, h);
}

}  // namespace hearth::models
