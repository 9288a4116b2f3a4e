#include "models/gemma3/gemma3_model.h"

#include <cmath>

namespace hearth::models {

using backend::OpName;

Result<std::unique_ptr<Gemma3Model>> Gemma3Model::load_on(std::unique_ptr<backend::Ops> ops,
                                                          std::unique_ptr<gguf::GgufFile> file, bool keep) {
  HEARTH_ASSIGN_OR_RETURN(const Gemma3FileWeights bound, bind_gemma3_weights(*file));
  std::unique_ptr<Gemma3Model> model(new Gemma3Model(std::move(ops)));
  HEARTH_TRY(model->set_shape(bound.p.hp));
  HEARTH_ASSIGN_OR_RETURN(model->w_, upload_gemma3_weights(bound, model->ops()));
  model->declare_activations(model->w_.p.hp);
  if (keep) model->keep_file(std::move(file));
  return model;
}

Gemma3Model::Gemma3Model(std::unique_ptr<backend::Ops> ops) : DecoderModel(std::move(ops)) {}

Gemma3Model::~Gemma3Model() = default;

void Gemma3Model::after_embed() {
  backend::Ops& ops = this->ops();
  ops.scale(OpName{"embd_scale"}, ops.act(acts().x), w_.p.embd_scale);
}

void Gemma3Model::run_layer(std::int32_t l) {
  attention_block(l);
  ffn_block(l);
}

// On the host, after the step: the logits are there anyway, and a file
// without the key (270M) pays nothing.
void Gemma3Model::after_logits(std::span<float> logits) const {
  const float cap = w_.p.logit_softcap;
  if (cap <= 0) return;
  for (float& v : logits) v = cap * std::tanh(v / cap);
}

void Gemma3Model::attention_block(std::int32_t l) {
  const Gemma3Params& p = w_.p;
  const ModelHyperParams& hp = p.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  const bool local = p.local[static_cast<std::size_t>(l)];
  backend::Ops& ops = this->ops();
  const DecoderActs& a = acts();
  const backend::Activation x = ops.act(a.x), h = ops.act(a.h), q = ops.act(a.q), k = ops.act(a.k), v = ops.act(a.v),
                            attn = ops.act(a.attn);
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
  backend::Ops& ops = this->ops();
  const DecoderActs& a = acts();
  const backend::Activation x = ops.act(a.x), h = ops.act(a.h), gate = ops.act(a.gate), up = ops.act(a.up);
  ops.rms_norm(OpName{"ffn_norm", l}, x, lw.ffn_norm, hp.rms_eps, h);
  const backend::LinearOut gate_up[] = {{lw.w_gate, gate, {}}, {lw.w_up, up, {}}};
  ops.linear_many(OpName{"gate_up", l}, h, gate_up);
  ops.glu(OpName{"ffn_glu", l}, backend::GluKind::kGeGluTanh, gate, up);
  ops.linear(OpName{"ffn_down", l}, lw.w_down, gate, h);
  ops.rms_norm(OpName{"post_ffw_norm", l}, h, lw.post_ffn_norm, hp.rms_eps, h);
  ops.add(OpName{"ffn_residual", l}, x, h);
}

}  // namespace hearth::models
