#include "models/llama/llama_weights.h"

#include <cmath>
#include <string>

namespace hearth::models {
bool is_llama_family(std::string_view architecture) {
  return architecture == "llama" || architecture == "qwen2";
}

Result<ModelHyperParams> read_llama_hparams(const gguf::GgufFile& f) {
  ModelHyperParams hp;
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, f.get_string("general.architecture"));
  if (!is_llama_family(arch)) {
    return make_error(ErrorCode::kUnsupported, "architecture '" + std::string(arch) + "' is not supported");
  }
  hp.architecture = std::string(arch);
  if (auto name = f.get_string("general.name")) hp.name = std::string(*name);
  const std::string p = hp.architecture + ".";
  HEARTH_ASSIGN_OR_RETURN(hp.n_embd, positive_key(f, p + "embedding_length", 1 << 16));
  HEARTH_ASSIGN_OR_RETURN(hp.n_layer, positive_key(f, p + "block_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_head, positive_key(f, p + "attention.head_count", 1024));
  hp.n_head_kv = hp.n_head;
  if (f.has(p + "attention.head_count_kv")) {
    HEARTH_ASSIGN_OR_RETURN(hp.n_head_kv, positive_key(f, p + "attention.head_count_kv", hp.n_head));
  }
  HEARTH_ASSIGN_OR_RETURN(hp.n_ff, positive_key(f, p + "feed_forward_length", 1 << 20));
  HEARTH_ASSIGN_OR_RETURN(hp.n_ctx_train, positive_key(f, p + "context_length", 1 << 24));
  if (hp.n_embd % hp.n_head || hp.n_head % hp.n_head_kv) {
    return make_error(ErrorCode::kCorruptFile, "head counts (" + std::to_string(hp.n_head) + ", " +
                                                   std::to_string(hp.n_head_kv) + ") do not divide the width " +
                                                   std::to_string(hp.n_embd));
  }
  hp.head_dim = hp.n_embd / hp.n_head;
  if (f.has(p + "rope.dimension_count")) {
    HEARTH_ASSIGN_OR_RETURN(std::uint32_t rot, positive_key(f, p + "rope.dimension_count", hp.head_dim));
    if (rot != hp.head_dim) {
      return make_error(ErrorCode::kUnsupported, "partial rotary embeddings (rope.dimension_count " +
                                                     std::to_string(rot) + " < head dim) are not supported");
    }
  }
  if (hp.head_dim % 2) return make_error(ErrorCode::kCorruptFile, "head dimension must be even");
  HEARTH_ASSIGN_OR_RETURN(double eps, f.get_float(p + "attention.layer_norm_rms_epsilon"));
  hp.rms_eps = static_cast<float>(eps);
  if (f.has(p + "rope.freq_base")) {
    HEARTH_ASSIGN_OR_RETURN(double base, f.get_float(p + "rope.freq_base"));
    hp.rope_base = static_cast<float>(base);
  }
  if (f.has(p + "rope.scaling.factor")) {
    HEARTH_ASSIGN_OR_RETURN(double scale, f.get_float(p + "rope.scaling.factor"));
    if (!std::isfinite(static_cast<float>(scale))) {
      return make_error(ErrorCode::kCorruptFile, p + "rope.scaling.factor is not a finite number");
    }
    if (scale > 0) hp.rope_scale = static_cast<float>(scale);
  }
  // inf passes `> 0` (NaN does not) and yields garbage, as does a double too
  // large for a float: both hyper-parameters must be finite once narrowed.
  if (!std::isfinite(hp.rms_eps) || !std::isfinite(hp.rope_base)) {
    return make_error(ErrorCode::kCorruptFile, "rms epsilon or RoPE base is not a finite number (" +
                                                   std::to_string(eps) + ", " + std::to_string(hp.rope_base) + ")");
  }
  if (!(hp.rms_eps > 0) || !(hp.rope_base > 1)) {
    return make_error(ErrorCode::kCorruptFile, "rms epsilon or RoPE base out of range");
  }
  hp.rope_neox = hp.architecture == "qwen2";
  HEARTH_ASSIGN_OR_RETURN(auto tokens, f.get_string_array("tokenizer.ggml.tokens"));
  hp.n_vocab = static_cast<std::uint32_t>(tokens.size());
  return hp;
}

Result<LlamaFileWeights> bind_llama_weights(const gguf::GgufFile& f) {
  LlamaFileWeights w;
  HEARTH_ASSIGN_OR_RETURN(w.hp, read_llama_hparams(f));
  const ModelHyperParams& hp = w.hp;
  const std::int64_t embd = hp.n_embd, ff = hp.n_ff;
  const std::int64_t q_dim = static_cast<std::int64_t>(hp.n_head) * hp.head_dim;
  const std::int64_t kv_dim = static_cast<std::int64_t>(hp.n_head_kv) * hp.head_dim;
  const bool biases = hp.architecture == "qwen2";
  HEARTH_ASSIGN_OR_RETURN(static_cast<DecoderFileGlobals&>(w), bind_decoder_globals(f, hp));
  for (std::uint32_t i = 0; i < hp.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LlamaLayerWeights l;
    HEARTH_ASSIGN_OR_RETURN(l.attn_norm, bind_tensor(f, b + "attn_norm.weight", embd, 0, false, true));
    HEARTH_ASSIGN_OR_RETURN(l.wq, bind_tensor(f, b + "attn_q.weight", embd, q_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wk, bind_tensor(f, b + "attn_k.weight", embd, kv_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wv, bind_tensor(f, b + "attn_v.weight", embd, kv_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wo, bind_tensor(f, b + "attn_output.weight", q_dim, embd, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.bq, bind_tensor(f, b + "attn_q.bias", q_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.bk, bind_tensor(f, b + "attn_k.bias", kv_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.bv, bind_tensor(f, b + "attn_v.bias", kv_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.ffn_norm, bind_tensor(f, b + "ffn_norm.weight", embd, 0, false, true));
    HEARTH_ASSIGN_OR_RETURN(l.w_gate, bind_tensor(f, b + "ffn_gate.weight", embd, ff, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.w_up, bind_tensor(f, b + "ffn_up.weight", embd, ff, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.w_down, bind_tensor(f, b + "ffn_down.weight", ff, embd, false, false));
    w.layers.push_back(l);
  }
  return w;
}

std::size_t llama_weight_bytes(const LlamaFileWeights& w) {
  std::size_t bytes = decoder_globals_bytes(w);
  for (const LlamaLayerWeights& l : w.layers) {
    for (const WeightRef* r :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
      bytes += tensor_bytes(*r);
    }
  }
  return bytes;
}

Result<LlamaWeights> upload_llama_weights(const LlamaFileWeights& w, backend::Ops& ops) {
  HEARTH_TRY(ops.reserve_weights(llama_weight_bytes(w)));
  LlamaWeights out;
  out.hp = w.hp;
  HEARTH_ASSIGN_OR_RETURN(static_cast<DecoderGlobals&>(out), upload_decoder_globals(w, ops));
  out.layers.resize(w.layers.size());
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LlamaLayerWeights& src = w.layers[i];
    auto& dst = out.layers[i];
    HEARTH_ASSIGN_OR_RETURN(dst.attn_norm, upload_vector(ops, src.attn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.wq, upload_matrix(ops, src.wq));
    HEARTH_ASSIGN_OR_RETURN(dst.wk, upload_matrix(ops, src.wk));
    HEARTH_ASSIGN_OR_RETURN(dst.wv, upload_matrix(ops, src.wv));
    HEARTH_ASSIGN_OR_RETURN(dst.wo, upload_matrix(ops, src.wo));
    HEARTH_ASSIGN_OR_RETURN(dst.bq, upload_vector(ops, src.bq));
    HEARTH_ASSIGN_OR_RETURN(dst.bk, upload_vector(ops, src.bk));
    HEARTH_ASSIGN_OR_RETURN(dst.bv, upload_vector(ops, src.bv));
    HEARTH_ASSIGN_OR_RETURN(dst.ffn_norm, upload_vector(ops, src.ffn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.w_gate, upload_matrix(ops, src.w_gate));
    HEARTH_ASSIGN_OR_RETURN(dst.w_up, upload_matrix(ops, src.w_up));
    HEARTH_ASSIGN_OR_RETURN(dst.w_down, upload_matrix(ops, src.w_down));
  }
  return out;
}

}  // namespace hearth::models
