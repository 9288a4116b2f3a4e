#include "models/llama/llama_model.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "engine/model/step_check.h"

namespace hearth::models {
namespace {

cpu::Matrix matrix(const WeightRef& w) {
  return cpu::Matrix{w.type, w.rows, w.cols, w.data};
}

const float* f32(const WeightRef& w) {
  return static_cast<const float*>(w.data);
}

void grow(std::vector<float>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
}

void add_bias(float* x, const WeightRef& bias, std::int64_t n_tokens, std::int64_t width) {
  if (!bias) return;
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    for (std::int64_t i = 0; i < width; ++i) x[t * width + i] += f32(bias)[i];
  }
}

}  // namespace

std::size_t LlamaModel::Workspace::bytes() const {
  const std::size_t floats = x.capacity() + h.capacity() + q.capacity() + k.capacity() + v.capacity() +
                             attn.capacity() + gate.capacity() + up.capacity();
  return floats * sizeof(float) + positions.capacity() * sizeof(std::int32_t) +
         attention.capacity() * sizeof(cpu::CpuOps::AttentionSeq);
}

Result<std::unique_ptr<LlamaModel>> LlamaModel::load(std::unique_ptr<gguf::GgufFile> file,
                                                     const LlamaOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(LlamaWeights weights, bind_llama_weights(*file));
  int threads = options.n_threads > 0 ? options.n_threads : static_cast<int>(std::thread::hardware_concurrency());
  return std::unique_ptr<LlamaModel>(
      new LlamaModel(std::move(file), std::move(weights), std::max(threads, 1), options.refine_activations));
}

LlamaModel::LlamaModel(std::unique_ptr<gguf::GgufFile> file, LlamaWeights weights, int n_threads,
                       bool refine_activations)
    : file_(std::move(file)), w_(std::move(weights)), ops_(n_threads, refine_activations) {}

std::size_t LlamaModel::kv_block_bytes(std::int32_t block_size) const {
  const ModelHyperParams& hp = w_.hp;
  return 2ull * hp.n_layer * static_cast<std::size_t>(block_size) * hp.n_head_kv * hp.head_dim * sizeof(std::uint16_t);
}

Result<void> LlamaModel::allocate_kv(const KvLayout& layout) {
  if (layout.num_blocks <= 0 || layout.block_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "KV layout needs a positive number of blocks and block size");
  }
  const std::size_t per_cache = kv_block_bytes(layout.block_size) / 2 / sizeof(std::uint16_t) * layout.num_blocks;
  try {
    k_cache_.assign(per_cache, 0);
    v_cache_.assign(per_cache, 0);
  } catch (const std::bad_alloc&) {
    k_cache_ = {};
    v_cache_ = {};
    return make_error(
        ErrorCode::kOutOfMemory,
        "cannot allocate a KV cache of " + std::to_string(2 * per_cache * sizeof(std::uint16_t) >> 20) + " MiB");
  }
  kv_layout_ = layout;
  return {};
}

ModelMemory LlamaModel::memory() const {
  return ModelMemory{w_.weight_bytes, (k_cache_.capacity() + v_cache_.capacity()) * sizeof(std::uint16_t), ws_.bytes()};
}

Result<void> LlamaModel::check_steps(std::span<const SequenceStep> steps, std::size_t logits_size) const {
  if (k_cache_.empty()) return make_error(ErrorCode::kInvalidArgument, "forward before allocate_kv");
  return hearth::check_steps(steps, w_.hp.n_vocab, kv_layout_, logits_size);
}

Result<void> LlamaModel::forward(std::span<const SequenceStep> steps, std::span<float> logits) {
  layer_ms_.clear();
  HEARTH_TRY(check_steps(steps, logits.size()));
  const ModelHyperParams& hp = w_.hp;
  std::int64_t n = 0;
  for (const auto& s : steps) n += static_cast<std::int64_t>(s.tokens.size());
  const std::int64_t embd = hp.n_embd;
  grow(ws_.x, n * embd);
  grow(ws_.h, n * embd);
  std::int64_t row = 0;
  for (const auto& s : steps) {
    for (std::int32_t t : s.tokens) ops_.get_row(matrix(w_.token_embd), t, ws_.x.data() + (row++) * embd);
  }
  layer_ms_.resize(hp.n_layer);
  auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t l = 0; l < hp.n_layer; ++l) {
    attention_layer(l, steps);
    ffn_layer(l, n);
    const auto t1 = std::chrono::steady_clock::now();
    layer_ms_[l] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    t0 = t1;
  }
  // Logits of each sequence's last token (or all its tokens) only: those
  // rows are normed into h in step order, then one matmul reads the output
  // matrix once for all of them (the logits' layout is that order).
  std::int64_t wanted = 0;
  row = 0;
  for (const auto& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    row += count;
    if (!s.want_logits) continue;
    const std::int64_t rows = s.all_logits ? count : 1;
    ops_.rms_norm(ws_.x.data() + (row - rows) * embd, f32(w_.output_norm), rows, embd, hp.rms_eps,
                  ws_.h.data() + wanted * embd);
    wanted += rows;
  }
  if (wanted > 0) ops_.matmul(matrix(w_.output), ws_.h.data(), wanted, logits.data());
  return {};
}

void LlamaModel::attention_layer(std::uint32_t l, std::span<const SequenceStep> steps) {
  const ModelHyperParams& hp = w_.hp;
  const LlamaLayerWeights& lw = w_.layers[l];
  std::int64_t n = 0;
  for (const auto& s : steps) n += static_cast<std::int64_t>(s.tokens.size());
  const std::int64_t embd = hp.n_embd, q_dim = std::int64_t{hp.n_head} * hp.head_dim;
  const std::int64_t kv_dim = std::int64_t{hp.n_head_kv} * hp.head_dim;
  grow(ws_.q, n * q_dim);
  grow(ws_.k, n * kv_dim);
  grow(ws_.v, n * kv_dim);
  grow(ws_.attn, n * q_dim);
  ops_.rms_norm(ws_.x.data(), f32(lw.attn_norm), n, embd, hp.rms_eps, ws_.h.data());
  const cpu::Matrix qkv[] = {matrix(lw.wq), matrix(lw.wk), matrix(lw.wv)};
  float* const qkv_out[] = {ws_.q.data(), ws_.k.data(), ws_.v.data()};
  ops_.matmul_many(qkv, ws_.h.data(), n, qkv_out);
  add_bias(ws_.q.data(), lw.bq, n, q_dim);
  add_bias(ws_.k.data(), lw.bk, n, kv_dim);
  add_bias(ws_.v.data(), lw.bv, n, kv_dim);
  ws_.positions.resize(static_cast<std::size_t>(n));
  std::int64_t row = 0;
  for (const auto& s : steps) {
    for (std::size_t i = 0; i < s.tokens.size(); ++i) ws_.positions[row++] = s.start_pos + static_cast<std::int32_t>(i);
  }
  ops_.rope(ws_.q.data(), n, hp.n_head, hp.head_dim, ws_.positions, hp.rope_base, hp.rope_scale, hp.rope_neox);
  ops_.rope(ws_.k.data(), n, hp.n_head_kv, hp.head_dim, ws_.positions, hp.rope_base, hp.rope_scale, hp.rope_neox);
  const std::size_t layer_elems = k_cache_.size() / hp.n_layer;
  const cpu::PagedKv kv{k_cache_.data() + l * layer_elems, v_cache_.data() + l * layer_elems, kv_layout_.block_size,
                        hp.n_head_kv, hp.head_dim};
  row = 0;
  ws_.attention.clear();
  for (const auto& s : steps) {
    const auto count = static_cast<std::int64_t>(s.tokens.size());
    ops_.store_kv(kv, s.block_table, s.start_pos, ws_.k.data() + row * kv_dim, ws_.v.data() + row * kv_dim, count);
    ws_.attention.push_back(cpu::CpuOps::AttentionSeq{s.block_table, s.start_pos, ws_.q.data() + row * q_dim, count,
                                                      ws_.attn.data() + row * q_dim});
    row += count;
  }
  ops_.attention(kv, ws_.attention, hp.n_head);
  ops_.matmul(matrix(lw.wo), ws_.attn.data(), n, ws_.h.data());
  ops_.add(ws_.x.data(), ws_.h.data(), n * embd);
}

void LlamaModel::ffn_layer(std::uint32_t l, std::int64_t n) {
  const ModelHyperParams& hp = w_.hp;
  const LlamaLayerWeights& lw = w_.layers[l];
  const std::int64_t embd = hp.n_embd, ff = hp.n_ff;
  grow(ws_.gate, n * ff);
  grow(ws_.up, n * ff);
  ops_.rms_norm(ws_.x.data(), f32(lw.ffn_norm), n, embd, hp.rms_eps, ws_.h.data());
  const cpu::Matrix gate_up[] = {matrix(lw.w_gate), matrix(lw.w_up)};
  float* const gate_up_out[] = {ws_.gate.data(), ws_.up.data()};
  ops_.matmul_many(gate_up, ws_.h.data(), n, gate_up_out);
  ops_.swiglu(ws_.gate.data(), ws_.up.data(), n * ff);
  ops_.matmul(matrix(lw.w_down), ws_.gate.data(), n, ws_.h.data());
  ops_.add(ws_.x.data(), ws_.h.data(), n * embd);
}

}  // namespace hearth::models
