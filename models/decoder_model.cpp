#include "models/decoder_model.h"

#include "engine/model/step_check.h"

namespace hearth::models {

using backend::OpName;

Result<DecoderFileGlobals> bind_decoder_globals(const gguf::GgufFile& f, const ModelHyperParams& hp) {
  DecoderFileGlobals g;
  HEARTH_ASSIGN_OR_RETURN(g.token_embd, bind_tensor(f, "token_embd.weight", hp.n_embd, hp.n_vocab, false, false));
  HEARTH_ASSIGN_OR_RETURN(g.output_norm, bind_tensor(f, "output_norm.weight", hp.n_embd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(g.output, bind_tensor(f, "output.weight", hp.n_embd, hp.n_vocab, true, false));
  g.tied = !g.output;
  if (g.tied) g.output = g.token_embd;
  return g;
}

std::size_t decoder_globals_bytes(const DecoderFileGlobals& g) {
  return tensor_bytes(g.token_embd) + tensor_bytes(g.output_norm) + (g.tied ? 0 : tensor_bytes(g.output));
}

Result<DecoderGlobals> upload_decoder_globals(const DecoderFileGlobals& g, backend::Ops& ops) {
  DecoderGlobals out;
  out.tied = g.tied;
  HEARTH_ASSIGN_OR_RETURN(out.token_embd, upload_matrix(ops, g.token_embd, backend::MatrixUse::kEmbedding));
  if (g.tied) {
    out.output = out.token_embd;  // the same tensor, uploaded once
  } else {
    HEARTH_ASSIGN_OR_RETURN(out.output, upload_matrix(ops, g.output));
  }
  HEARTH_ASSIGN_OR_RETURN(out.output_norm, upload_vector(ops, g.output_norm));
  ops.set_output(out.output);
  return out;
}

DecoderModel::DecoderModel(std::unique_ptr<backend::Ops> ops) : ops_(std::move(ops)) {}

DecoderModel::~DecoderModel() = default;

Result<void> DecoderModel::set_shape(const ModelHyperParams& hp) {
  return ops_->set_shape(
      backend::ModelShape{static_cast<std::int32_t>(hp.n_layer), static_cast<std::int32_t>(hp.n_head),
                          static_cast<std::int32_t>(hp.n_head_kv), static_cast<std::int32_t>(hp.head_dim)});
}

void DecoderModel::declare_activations(const ModelHyperParams& hp) {
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

std::size_t DecoderModel::kv_block_bytes(std::int32_t block_size) const {
  return ops_->kv_block_bytes(block_size);
}

Result<void> DecoderModel::allocate_kv(const KvLayout& layout) {
  kv_layout_ = {};
  HEARTH_TRY(ops_->allocate_kv(layout));
  kv_layout_ = layout;
  return {};
}

ModelMemory DecoderModel::memory() const {
  return ops_->memory();
}

std::span<const double> DecoderModel::last_layer_ms() const {
  if (!last_step_ok_) return {};
  return ops_->layer_ms();
}

Result<void> DecoderModel::forward(std::span<const SequenceStep> steps, std::span<float> logits) {
  last_step_ok_ = false;
  if (!ops_->has_kv()) return make_error(ErrorCode::kInvalidArgument, "forward before allocate_kv");
  const ModelHyperParams& hp = hparams();
  HEARTH_TRY(hearth::check_steps(steps, hp.n_vocab, kv_layout_, logits.size()));
  HEARTH_TRY(ops_->begin_step(steps));
  backend::Ops& ops = *ops_;
  const DecoderGlobals& g = globals();
  ops.embed(OpName{"token_embd"}, g.token_embd, ops.act(a_.x));
  after_embed();
  ops.mark_layer(0);
  for (std::uint32_t l = 0; l < hp.n_layer; ++l) {
    run_layer(static_cast<std::int32_t>(l));
    ops.mark_layer(l + 1);
  }
  ops.logits(OpName{"output"}, ops.act(a_.x), g.output_norm, hp.rms_eps, ops.act(a_.h), logits);
  HEARTH_TRY(ops.finish_step());
  after_logits(logits);
  last_step_ok_ = true;
  return {};
}

}  // namespace hearth::models
