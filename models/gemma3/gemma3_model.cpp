#include "models/gemma3/gemma3_model.h"

#include <cmath>

#include "engine/model/step_check.h"

namespace hearth::models {

using backend::OpName;

Result<std::unique_ptr<Gemma3Model>> Gemma3Model::load_on(std::unique_ptr<backend::Ops> ops,
                                                          std::unique_ptr<gguf::GgufFile> file, bool keep_file) {
  HEARTH_ASSIGN_OR_RETURN(const Gemma3FileWeights bound, bind_gemma3_weights(*file));
  const ModelHyperParams& hp = bound.p.hp;
  HEARTH_TRY(ops->set_shape(
      backend::ModelShape{static_cast<std::int32_t>(hp.n_layer), static_cast<std::int32_t>(hp.n_head),
                          static_cast<std::int32_t>(hp.n_head_kv), static_cast<std::int32_t>(hp.head_dim)}));
  std::unique_ptr<Gemma3Model> model(new Gemma3Model(std::move(ops)));
  HEARTH_ASSIGN_OR_RETURN(model->w_, upload_gemma3_weights(bound, *model->ops_));
  model->declare_activations();
  if (keep_file) model->file_ = std::move(file);
  return model;
}

Gemma3Model::Gemma3Model(std::unique_ptr<backend::Ops> ops) : ops_(std::move(ops)) {}

Gemma3Model::~Gemma3Model() = default;

void Gemma3Model::declare_activations() {
  const ModelHyperParams& hp = w_.p.hp;
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

std::size_t Gemma3Model::kv_block_bytes(std::int32_t block_size) const {
  return ops_->kv_block_bytes(block_size);
}

Result<void> Gemma3Model::allocate_kv(const KvLayout& layout) {
  kv_layout_ = {};
  HEARTH_TRY(ops_->allocate_kv(layout));
  kv_layout_ = layout;
  return {};
}

ModelMemory Gemma3Model::memory() const {
  return ops_->memory();
}

std::span<const double> Gemma3Model::last_layer_ms() const {
  if (!last_step_ok_) return {};
  return ops_->layer_ms();
}

Result<void> Gemma3Model::forward(std::span<const SequenceStep> steps, std::span<float> logits) {
  last_step_ok_ = false;
  if (!ops_->has_kv()) return make_error(ErrorCode::kInvalidArgument, "forward before allocate_kv");
  const ModelHyperParams& hp = w_.p.hp;
  HEARTH_TRY(hearth::check_steps(steps, hp.n_vocab, kv_layout_, logits.size()));
  HEARTH_TRY(ops_->begin_step(steps));
  backend::Ops& ops = *ops_;
  ops.embed(OpName{"token_embd"}, w_.token_embd, ops.act(a_.x));
  ops.scale(OpName{"embd_scale"}, ops.act(a_.x), w_.p.embd_scale);
  ops.mark_layer(0);
  for (std::uint32_t l = 0; l < hp.n_layer; ++l) {
    attention_block(static_cast<std::int32_t>(l));
    ffn_block(static_cast<std::int32_t>(l));
    ops.mark_layer(l + 1);
  }
  ops.logits(OpName{"output"}, ops.act(a_.x), w_.output_norm, hp.rms_eps, ops.act(a_.h), logits);
  HEARTH_TRY(ops.finish_step());
  soft_cap(logits);
  last_step_ok_ = true;
  return {};
}

// On the host, after the step: the logits are there anyway, and a file
// without the key (270M) pays nothing.
void Gemma3Model::soft_cap(std::span<float> logits) const {
  const float cap = w_.p.logit_softcap;
  if (cap <= 0) return;
  for (float& v : logits) v = cap * std::tanh(v / cap);
}

void Gemma3Model::attention_block(std::int32_t l) {
  const Gemma3Params& p = w_.p;
  const ModelHyperParams& hp = p.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  const bool local = p.local[static_cast<std::size_t>(l)];
  backend::Ops& ops = *ops_;
  const backend::Activation x = ops.act(a_.x), h = ops.act(a_.h), q = ops.act(a_.q), k = ops.act(a_.k),
                            v = ops.act(a_.v), attn = ops.act(a_.attn);
  const auto n_head = static_cast<std::int32_t>(hp.n_head), n_kv = static_cast<std::int32_t>(hp.n_head_kv);
  ops.rms_norm(OpName{"attn_norm", l}, x, lw.attn_norm, hp.rms_eps, h);
  const backend::LinearOut qkv[] = {{lw.wq, q, {}}, {lw.wk, k, {}}, {lw.wv, v, {}}};
  ops.linear_many(OpName{"qkv", l}, h, qkv);
  ops.head_rms_norm(OpName{"attn_q_norm", l}, q, n_head, lw.q_norm, hp.rms_eps);
  ops.head_rms_norm(OpName{"attn_k_norm", l}, k, n_kv, lw.k_norm, hp.rms_eps);
  const backend::RopeConfig rope{static_cast<std::int32_t>(hp.head_dim), local ? p.rope_base_local : hp.rope_base,
                                 local ? 1.0f : hp.rope_scale, true};
  ops.rope(OpName{"rope", l}, q, n_head, k, n_kv, rope);
  ops.store_kv(OpName{"store_kv", l}, l, k, v);
  ops.attention(OpName{"attention", l}, l, q, attn, p.attn_scale, local ? p.window : 0);
  ops.linear(OpName{"attn_output", l}, lw.wo, attn, h);
  ops.rms_norm(OpName{"post_attention_norm", l}, h, lw.post_attn_norm, hp.rms_eps, h);
  ops.add(OpName{"attn_residual", l}, x, h);
}

void Gemma3Model::ffn_block(std::int32_t l) {
  const ModelHyperParams& hp = w_.p.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  backend::Ops& ops = *ops_;
  const backend::Activation x = ops.act(a_.x), h = ops.act(a_.h), gate = ops.act(a_.gate), up = ops.act(a_.up);
  ops.rms_norm(OpName{"ffn_norm", l}, x, lw.ffn_norm, hp.rms_eps, h);
  const backend::LinearOut gate_up[] = {{lw.w_gate, gate, {}}, {lw.w_up, up, {}}};
  ops.linear_many(OpName{"gate_up", l}, h, gate_up);
  ops.glu(OpName{"ffn_glu", l}, backend::GluKind::kGeGluTanh, gate, up);
  ops.linear(OpName{"ffn_down", l}, lw.w_down, gate, h);
  ops.rms_norm(OpName{"post_ffw_norm", l}, h, lw.post_ffn_norm, hp.rms_eps, h);
  ops.add(OpName{"ffn_residual", l}, x, h);
}

}  // namespace hearth::models
