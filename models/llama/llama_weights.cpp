#include "models/llama/llama_weights.h"

#include <cmath>
#include <string>

#include "kernels/cpu/ggml_type.h"

namespace hearth::models {
namespace {

Error tensor_error(std::string_view name, const std::string& what) {
  return make_error(ErrorCode::kCorruptFile, "tensor '" + std::string(name) + "': " + what);
}

std::string shape_text(std::int64_t a, std::int64_t b) {
  return "[" + std::to_string(a) + (b ? ", " + std::to_string(b) : "") + "]";
}

// Binds tensor `name` with GGUF shape [cols] (rows == 0) or [cols, rows].
Result<WeightRef> bind(const gguf::GgufFile& f, const std::string& name, std::int64_t cols, std::int64_t rows,
                       bool optional, bool f32_only) {
  const gguf::TensorInfo* t = f.tensor(name);
  if (!t) {
    if (optional) return WeightRef{};
    return make_error(ErrorCode::kCorruptFile, "missing tensor '" + name + "'");
  }
  const std::uint32_t want_dims = rows ? 2 : 1;
  if (t->n_dims != want_dims || t->ne[0] != cols || (rows && t->ne[1] != rows)) {
    std::string got = "[";
    for (std::uint32_t d = 0; d < t->n_dims; ++d) got += (d ? ", " : "") + std::to_string(t->ne[d]);
    return tensor_error(name, "shape " + got + "], expected " + shape_text(cols, rows));
  }
  const auto id = static_cast<std::uint32_t>(t->type);
  if (f32_only && t->type != gguf::GgmlType::kF32) {
    return tensor_error(name, "type " + gguf::ggml_type_name(id) + ", expected F32");
  }
  if (!kernels::is_weight_type(t->type)) {
    return make_error(ErrorCode::kUnsupported, "tensor '" + name + "' has type " + gguf::ggml_type_name(id) +
                                                   ", which Hearth cannot compute with");
  }
  WeightRef w;
  w.info = t;
  w.type = id;
  w.cols = cols;
  w.rows = rows ? rows : 1;
  w.data = t->data;
  return w;
}

Result<std::uint32_t> positive(const gguf::GgufFile& f, const std::string& key, std::uint64_t max) {
  HEARTH_ASSIGN_OR_RETURN(std::uint64_t v, f.get_uint(key));
  if (v == 0 || v > max) {
    return make_error(ErrorCode::kCorruptFile,
                      "key '" + key + "' = " + std::to_string(v) + " is outside 1.." + std::to_string(max));
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

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
  HEARTH_ASSIGN_OR_RETURN(hp.n_embd, positive(f, p + "embedding_length", 1 << 16));
  HEARTH_ASSIGN_OR_RETURN(hp.n_layer, positive(f, p + "block_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_head, positive(f, p + "attention.head_count", 1024));
  hp.n_head_kv = hp.n_head;
  if (f.has(p + "attention.head_count_kv")) {
    HEARTH_ASSIGN_OR_RETURN(hp.n_head_kv, positive(f, p + "attention.head_count_kv", hp.n_head));
  }
  HEARTH_ASSIGN_OR_RETURN(hp.n_ff, positive(f, p + "feed_forward_length", 1 << 20));
  HEARTH_ASSIGN_OR_RETURN(hp.n_ctx_train, positive(f, p + "context_length", 1 << 24));
  if (hp.n_embd % hp.n_head || hp.n_head % hp.n_head_kv) {
    return make_error(ErrorCode::kCorruptFile, "head counts (" + std::to_string(hp.n_head) + ", " +
                                                   std::to_string(hp.n_head_kv) + ") do not divide the width " +
                                                   std::to_string(hp.n_embd));
  }
  hp.head_dim = hp.n_embd / hp.n_head;
  if (f.has(p + "rope.dimension_count")) {
    HEARTH_ASSIGN_OR_RETURN(std::uint32_t rot, positive(f, p + "rope.dimension_count", hp.head_dim));
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
  const std::int64_t embd = hp.n_embd, vocab = hp.n_vocab, ff = hp.n_ff;
  const std::int64_t q_dim = static_cast<std::int64_t>(hp.n_head) * hp.head_dim;
  const std::int64_t kv_dim = static_cast<std::int64_t>(hp.n_head_kv) * hp.head_dim;
  const bool biases = hp.architecture == "qwen2";
  HEARTH_ASSIGN_OR_RETURN(w.token_embd, bind(f, "token_embd.weight", embd, vocab, false, false));
  HEARTH_ASSIGN_OR_RETURN(w.output_norm, bind(f, "output_norm.weight", embd, 0, false, true));
  HEARTH_ASSIGN_OR_RETURN(w.output, bind(f, "output.weight", embd, vocab, true, false));
  w.tied = !w.output;
  if (w.tied) w.output = w.token_embd;
  for (std::uint32_t i = 0; i < hp.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LlamaLayerWeights l;
    HEARTH_ASSIGN_OR_RETURN(l.attn_norm, bind(f, b + "attn_norm.weight", embd, 0, false, true));
    HEARTH_ASSIGN_OR_RETURN(l.wq, bind(f, b + "attn_q.weight", embd, q_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wk, bind(f, b + "attn_k.weight", embd, kv_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wv, bind(f, b + "attn_v.weight", embd, kv_dim, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.wo, bind(f, b + "attn_output.weight", q_dim, embd, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.bq, bind(f, b + "attn_q.bias", q_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.bk, bind(f, b + "attn_k.bias", kv_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.bv, bind(f, b + "attn_v.bias", kv_dim, 0, !biases, true));
    HEARTH_ASSIGN_OR_RETURN(l.ffn_norm, bind(f, b + "ffn_norm.weight", embd, 0, false, true));
    HEARTH_ASSIGN_OR_RETURN(l.w_gate, bind(f, b + "ffn_gate.weight", embd, ff, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.w_up, bind(f, b + "ffn_up.weight", embd, ff, false, false));
    HEARTH_ASSIGN_OR_RETURN(l.w_down, bind(f, b + "ffn_down.weight", ff, embd, false, false));
    w.layers.push_back(l);
  }
  return w;
}

std::size_t llama_weight_bytes(const LlamaFileWeights& w) {
  std::size_t bytes = 0;
  const auto add = [&](const WeightRef& r) { bytes += r ? r.info->n_bytes : 0; };
  add(w.token_embd);
  if (!w.tied) add(w.output);
  add(w.output_norm);
  for (const LlamaLayerWeights& l : w.layers) {
    for (const WeightRef* r :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
      add(*r);
    }
  }
  return bytes;
}

namespace {

backend::HostTensor host_tensor(const WeightRef& w) {
  return backend::HostTensor{w.info->name, w.type, w.rows, w.cols, w.data, w.info->n_bytes};
}

Result<backend::Matrix> upload(backend::Ops& ops, const WeightRef& w,
                               backend::MatrixUse use = backend::MatrixUse::kLinear) {
  return ops.upload_matrix(host_tensor(w), use);
}

Result<backend::Vector> upload_vector(backend::Ops& ops, const WeightRef& w) {
  if (!w) return backend::Vector{};
  return ops.upload_vector(host_tensor(w));
}

}  // namespace

Result<LlamaWeights> upload_llama_weights(const LlamaFileWeights& w, backend::Ops& ops) {
  HEARTH_TRY(ops.reserve_weights(llama_weight_bytes(w)));
  LlamaWeights out;
  out.hp = w.hp;
  out.tied = w.tied;
  HEARTH_ASSIGN_OR_RETURN(out.token_embd, upload(ops, w.token_embd, backend::MatrixUse::kEmbedding));
  if (w.tied) {
    out.output = out.token_embd;  // the same tensor, uploaded once
  } else {
    HEARTH_ASSIGN_OR_RETURN(out.output, upload(ops, w.output));
  }
  HEARTH_ASSIGN_OR_RETURN(out.output_norm, upload_vector(ops, w.output_norm));
  out.layers.resize(w.layers.size());
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LlamaLayerWeights& src = w.layers[i];
    auto& dst = out.layers[i];
    HEARTH_ASSIGN_OR_RETURN(dst.attn_norm, upload_vector(ops, src.attn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.wq, upload(ops, src.wq));
    HEARTH_ASSIGN_OR_RETURN(dst.wk, upload(ops, src.wk));
    HEARTH_ASSIGN_OR_RETURN(dst.wv, upload(ops, src.wv));
    HEARTH_ASSIGN_OR_RETURN(dst.wo, upload(ops, src.wo));
    HEARTH_ASSIGN_OR_RETURN(dst.bq, upload_vector(ops, src.bq));
    HEARTH_ASSIGN_OR_RETURN(dst.bk, upload_vector(ops, src.bk));
    HEARTH_ASSIGN_OR_RETURN(dst.bv, upload_vector(ops, src.bv));
    HEARTH_ASSIGN_OR_RETURN(dst.ffn_norm, upload_vector(ops, src.ffn_norm));
    HEARTH_ASSIGN_OR_RETURN(dst.w_gate, upload(ops, src.w_gate));
    HEARTH_ASSIGN_OR_RETURN(dst.w_up, upload(ops, src.w_up));
    HEARTH_ASSIGN_OR_RETURN(dst.w_down, upload(ops, src.w_down));
  }
  ops.set_output(out.output);
  return out;
}

}  // namespace hearth::models
