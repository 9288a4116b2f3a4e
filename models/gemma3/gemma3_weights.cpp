#include "models/gemma3/gemma3_weights.h"

#include <cmath>
#include <string>

namespace hearth::models {
namespace {

// An optional float key, `fallback` when absent.
Result<float> optional_float(const gguf::GgufFile& f, const std::string& key, float fallback) {
  if (!f.has(key)) return fallback;
  HEARTH_ASSIGN_OR_RETURN(double v, f.get_float(key));
  return static_cast<float>(v);
}

Result<void> read_shape(const gguf::GgufFile& f, const std::string& p, ModelHyperParams& hp) {
  HEARTH_ASSIGN_OR_RETURN(hp.n_embd, positive_key(f, p + "embedding_length", 1 << 16));
  HEARTH_ASSIGN_OR_RETURN(hp.n_layer, positive_key(f, p + "block_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_head, positive_key(f, p + "attention.head_count", 1024));
  hp.n_head_kv = hp.n_head;
  if (f.has(p + "attention.head_count_kv")) {
    HEARTH_ASSIGN_OR_RETURN(hp.n_head_kv, positive_key(f, p + "attention.head_count_kv", hp.n_head));
  }
  HEARTH_ASSIGN_OR_RETURN(hp.n_ff, positive_key(f, p + "feed_forward_length", 1 << 20));
  HEARTH_ASSIGN_OR_RETURN(hp.n_ctx_train, positive_key(f, p + "context_length", 1 << 24));
  if (hp.n_head % hp.n_head_kv) {
    return make_error(ErrorCode::kCorruptFile, "head counts (" + std::to_string(hp.n_head) + ", " +
                                                   std::to_string(hp.n_head_kv) + ") do not divide");
  }
  hp.head_dim = hp.n_embd / hp.n_head;
  if (f.has(p + "attention.key_length")) {
    HEARTH_ASSIGN_OR_RETURN(hp.head_dim, positive_key(f, p + "attention.key_length", 1024));
  }
  if (f.has(p + "attention.value_length")) {
    HEARTH_ASSIGN_OR_RETURN(const std::uint32_t v, positive_key(f, p + "attention.value_length", 1024));
    if (v != hp.head_dim) {
      return make_error(ErrorCode::kUnsupported, "attention.value_length " + std::to_string(v) +
                                                     " differs from key_length " + std::to_string(hp.head_dim));
    }
  }
  if (hp.head_dim % 2) return make_error(ErrorCode::kCorruptFile, "head dimension must be even");
  if (f.has(p + "rope.dimension_count")) {
    HEARTH_ASSIGN_OR_RETURN(std::uint32_t rot, positive_key(f, p + "rope.dimension_count", 1024));
    if (rot != hp.head_dim) {
      return make_error(ErrorCode::kUnsupported, "partial rotary embeddings (rope.dimension_count " +
                                                     std::to_string(rot) + " < head dim) are not supported");
    }
  }
  return {};
}

// Which layers are local: `pattern` N makes layer l global when (l + 1) % N == 0.
Result<void> read_layer_pattern(const gguf::GgufFile& f, const std::string& p, Gemma3Params& g) {
  std::uint32_t pattern = 6;  // llama.cpp's gemma3 default: 5 local layers per global one
  if (f.has(p + "attention.sliding_window_pattern")) {
    auto v = positive_key(f, p + "attention.sliding_window_pattern", 1024);
    if (!v) {
      return make_error(
          ErrorCode::kUnsupported,
          "key '" + p + "attention.sliding_window_pattern' must be a positive integer (" + v.error().message + ")");
    }
    pattern = *v;
  }
  g.local.assign(g.hp.n_layer, false);
  for (std::uint32_t l = 0; l < g.hp.n_layer; ++l) g.local[l] = (l + 1) % pattern != 0;
  HEARTH_ASSIGN_OR_RETURN(const std::uint32_t window, positive_key(f, p + "attention.sliding_window", 1u << 24));
  g.window = static_cast<std::int32_t>(window);
  return {};
}

}  // namespace

Result<Gemma3Params> read_gemma3_params(const gguf::GgufFile& f) {
  Gemma3Params g;
  ModelHyperParams& hp = g.hp;
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, f.get_string("general.architecture"));
  if (arch != "gemma3") {
    return make_error(ErrorCode::kUnsupported, "architecture '" + std::string(arch) + "' is not gemma3");
  }
  hp.architecture = std::string(arch);
  if (auto name = f.get_string("general.name")) hp.name = std::string(*name);
  const std::string p = hp.architecture + ".";
  HEARTH_TRY(read_shape(f, p, hp));
  HEARTH_ASSIGN_OR_RETURN(double eps, f.get_float(p + "attention.layer_norm_rms_epsilon"));
  hp.rms_eps = static_cast<float>(eps);
  HEARTH_ASSIGN_OR_RETURN(hp.rope_base, optional_float(f, p + "rope.freq_base", 1e6f));
  HEARTH_ASSIGN_OR_RETURN(g.rope_base_local, optional_float(f, p + "rope.freq_base_swa", 1e4f));
  HEARTH_ASSIGN_OR_RETURN(const float rope_scale, optional_float(f, p + "rope.scaling.factor", 1.0f));
  if (rope_scale > 0) hp.rope_scale = rope_scale;  // the global layers only, as llama.cpp
  hp.rope_neox = true;
  // Non-finite values (inf passes "> 0") are refused like out-of-range ones (issue 14).
  if (!(hp.rms_eps > 0) || !(hp.rope_base > 1) || !(g.rope_base_local > 1) || !std::isfinite(hp.rms_eps) ||
      !std::isfinite(hp.rope_base) || !std::isfinite(g.rope_base_local) || !std::isfinite(hp.rope_scale)) {
    return make_error(ErrorCode::kCorruptFile, "rms epsilon or RoPE base out of range");
  }
  HEARTH_TRY(read_layer_pattern(f, p, g));
  HEARTH_ASSIGN_OR_RETURN(g.attn_scale,
                          optional_float(f, p + "attention.scale", 1.0f / std::sqrt(static_cast<float>(hp.head_dim))));
  HEARTH_ASSIGN_OR_RETURN(g.logit_softcap, optional_float(f, p + "final_logit_softcapping", 0.0f));
  if (!(g.attn_scale > 0) || !(g.logit_softcap >= 0) || !std::isfinite(g.attn_scale) ||
      !std::isfinite(g.logit_softcap)) {
    return make_error(ErrorCode::kCorruptFile, "attention scale or logit soft-capping out of range");
  }
  g.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  HEARTH_ASSIGN_OR_RETURN(auto tokens, f.get_string_array("tokenizer.ggml.tokens"));
  hp.n_vocab = static_cast<std::uint32_t>(tokens.size());
  return g;
}

namespace {

Result<Gemma3LayerFileWeights> bind_layer(const gguf::GgufFile& f, const ModelHyperParams& hp, std::uint32_t i) {
  const std::int64_t embd = hp.n_embd, ff = hp.n_ff, hd = hp.head_dim;
  const std::int64_t q_dim = std::int64_t{hp.n_head} * hd, kv_dim = std::int64_t{hp.n_head_kv} * hd;
  const std::string b = "blk." + std::to_string(i) + ".";
  Gemma3LayerFileWeights l;
  HEARTH_ASSIGN_OR_RETURN(l.attn_norm, bind_tensor(f, b + "attn_norm.weight", embd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(l.wq, bind_tensor(f, b + "attn_q.weight", embd, q_dim, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.wk, bind_tensor(f, b + "attn_k.weight", embd, kv_dim, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.wv, bind_tensor(f, b + "attn_v.weight", embd, kv_dim, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.wo, bind_tensor(f, b + "attn_output.weight", q_dim, embd, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.q_norm, bind_tensor(f, b + "attn_q_norm.weight", hd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(l.k_norm, bind_tensor(f, b + "attn_k_norm.weight", hd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(l.post_attn_norm, bind_tensor(f, b + "post_attention_norm.weight", embd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_norm, bind_tensor(f, b + "ffn_norm.weight", embd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(l.w_gate, bind_tensor(f, b + "ffn_gate.weight", embd, ff, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.w_up, bind_tensor(f, b + "ffn_up.weight", embd, ff, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.w_down, bind_tensor(f, b + "ffn_down.weight", ff, embd, false, false));
  HEARTH_ASSIGN_OR_RETURN(l.post_ffn_norm, bind_tensor(f, b + "post_ffw_norm.weight", embd, 0, false, true));
  return l;
}

}  // namespace

Result<Gemma3FileWeights> bind_gemma3_weights(const gguf::GgufFile& f) {
  Gemma3FileWeights w;
  HEARTH_ASSIGN_OR_RETURN(w.p, read_gemma3_params(f));
  const ModelHyperParams& hp = w.p.hp;
  HEARTH_ASSIGN_OR_RETURN(static_cast<DecoderFileGlobals&>(w), bind_decoder_globals(f, hp));
  for (std::uint32_t i = 0; i < hp.n_layer; ++i) {
    HEARTH_ASSIGN_OR_RETURN(Gemma3LayerFileWeights l, bind_layer(f, hp, i));
    w.layers.push_back(l);
  }
  return w;
}

std::size_t gemma3_weight_bytes(const Gemma3FileWeights& w) {
  std::size_t bytes = decoder_globals_bytes(w);
  for (const Gemma3LayerFileWeights& l : w.layers) {
    for (const WeightRef* r : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.q_norm, &l.k_norm, &l.post_attn_norm,
                               &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down, &l.post_ffn_norm}) {
      bytes += tensor_bytes(*r);
    }
  }
  return bytes;
}

Result<Gemma3Weights> upload_gemma3_weights(const Gemma3FileWeights& w, backend::Ops& ops) {
  HEARTH_TRY(ops.reserve_weights(gemma3_weight_bytes(w)));
  Gemma3Weights out;
  out.p = w.p;
  HEARTH_ASSIGN_OR_RETURN(static_cast<DecoderGlobals&>(out), upload_decoder_globals(w, ops));
  out.layers.resize(w.layers.size());
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const Gemma3LayerFileWeights& s = w.layers[i];
    auto& d = out.layers[i];
    HEARTH_ASSIGN_OR_RETURN(d.attn_norm, upload_vector(ops, s.attn_norm));
    HEARTH_ASSIGN_OR_RETURN(d.wq, upload_matrix(ops, s.wq));
    HEARTH_ASSIGN_OR_RETURN(d.wk, upload_matrix(ops, s.wk));
    HEARTH_ASSIGN_OR_RETURN(d.wv, upload_matrix(ops, s.wv));
    HEARTH_ASSIGN_OR_RETURN(d.wo, upload_matrix(ops, s.wo));
    HEARTH_ASSIGN_OR_RETURN(d.q_norm, upload_vector(ops, s.q_norm));
    HEARTH_ASSIGN_OR_RETURN(d.k_norm, upload_vector(ops, s.k_norm));
    HEARTH_ASSIGN_OR_RETURN(d.post_attn_norm, upload_vector(ops, s.post_attn_norm));
    HEARTH_ASSIGN_OR_RETURN(d.ffn_norm, upload_vector(ops, s.ffn_norm));
    HEARTH_ASSIGN_OR_RETURN(d.w_gate, upload_matrix(ops, s.w_gate));
    HEARTH_ASSIGN_OR_RETURN(d.w_up, upload_matrix(ops, s.w_up));
    HEARTH_ASSIGN_OR_RETURN(d.w_down, upload_matrix(ops, s.w_down));
    HEARTH_ASSIGN_OR_RETURN(d.post_ffn_norm, upload_vector(ops, s.post_ffn_norm));
  }
  return out;
}

}  // namespace hearth::models
