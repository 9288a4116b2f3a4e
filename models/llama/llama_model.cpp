#include "models/llama/llama_model.h"

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"

namespace hearth::models {

using backend::OpName;

Result<std::unique_ptr<LlamaModel>> LlamaModel::load(std::unique_ptr<gguf::GgufFile> file,
                                                     const LlamaOptions& options) {
  auto ops = std::make_unique<cpu::CpuBackend>(
      cpu::CpuBackendOptions{options.n_threads, options.refine_activations, options.kv_precision});
  std::unique_ptr<LlamaModel> model(new LlamaModel(std::move(ops)));
  HEARTH_TRY(model->init(std::move(file), true));
  return model;
}

LlamaModel::LlamaModel(std::unique_ptr<backend::Ops> ops) : DecoderModel(std::move(ops)) {}

LlamaModel::~LlamaModel() = default;

Result<void> LlamaModel::init(std::unique_ptr<gguf::GgufFile> file, bool keep) {
  HEARTH_ASSIGN_OR_RETURN(const LlamaFileWeights bound, bind_llama_weights(*file));
  HEARTH_TRY(set_shape(bound.hp));
  HEARTH_ASSIGN_OR_RETURN(w_, upload_llama_weights(bound, ops()));
  declare_activations(w_.hp);
  if (keep) keep_file(std::move(file));
  return {};
}

void LlamaModel::run_layer(std::int32_t l) {
  attention_block(l);
  ffn_block(l);
}

void LlamaModel::attention_block(std::int32_t l) {
  const ModelHyperParams& hp = w_.hp;
  const auto& lw = w_.layers[static_cast<std::size_t>(l)];
  backend::Ops& ops = this->ops();
  const DecoderActs& a = acts();
  const backend::Activation x = ops.act(a.x), h = ops.act(a.h), q = ops.act(a.q), k = ops.act(a.k), v = ops.act(a.v),
                            attn = ops.act(a.attn);
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
  backend::Ops& ops = this->ops();
  const DecoderActs& a = acts();
  const backend::Activation x = ops.act(a.x), h = ops.act(a.h), gate = ops.act(a.gate), up = ops.act(a.up);
  ops.rms_norm(OpName{"ffn_norm", l}, x, lw.ffn_norm, hp.rms_eps, h);
  const backend::LinearOut gate_up[] = {{lw.w_gate, gate, {}}, {lw.w_up, up, {}}};
  ops.linear_many(OpName{"gate_up", l}, h, gate_up);
  ops.glu(OpName{"ffn_glu", l}, backend::GluKind::kSwiGlu, gate, up);
  ops.linear_residual(OpName{"ffn_down", l}, lw.w_down, gate, x, h);
}

}  // namespace hearth::models
