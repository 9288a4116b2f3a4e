#include "models/synthetic.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <span>

#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/fp16.h"

namespace hearth::models {
namespace {

using gguf::GgmlType;

// splitmix64: tiny, fast, and good enough for filler bytes.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24); }  // [0, 1)
};

void put_f16(std::byte* p, float f) {
  const std::uint16_t h = kernels::f32_to_fp16(f);
  std::memcpy(p, &h, 2);
}

void fill_random_bytes(std::span<std::byte> out, Rng& rng) {
  std::size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) {
    const std::uint64_t r = rng.next();
    std::memcpy(out.data() + i, &r, 8);
  }
  for (const std::uint64_t r = rng.next(); i < out.size(); ++i) out[i] = static_cast<std::byte>(r >> (8 * (i % 8)));
}

// Where the f16 scale `d` (and min `m`) of one block sit, and the value spread
// one unit of `d` produces, so d can be chosen for a target weight std sigma.
struct BlockScales {
  std::size_t d_at;
  int m_at;         // -1: no min
  float spread;     // std of the de-scaled values (q - offset) x sub-scale
  float min_per_d;  // m = -min_per_d * d centres the values (types with a min)
};

BlockScales block_scales(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0:
      return {0, -1, 4.6f, 0};
    case GgmlType::kQ4_1:
      return {0, 2, 4.6f, 7.5f};
    case GgmlType::kQ5_0:
      return {0, -1, 9.2f, 0};
    case GgmlType::kQ5_1:
      return {0, 2, 9.2f, 15.5f};
    case GgmlType::kQ8_0:
      return {0, -1, 74.0f, 0};
    case GgmlType::kQ4_K:
      return {0, 2, 31.5f * 4.6f, 7.5f};  // 6-bit sub-scales (avg 31.5) x 4-bit quants
    case GgmlType::kQ5_K:
      return {0, 2, 31.5f * 9.2f, 15.5f};
    case GgmlType::kQ6_K:
      return {208, -1, 64.0f * 18.5f, 0};  // int8 sub-scales x (q - 32)
    default:
      return {0, -1, 1.0f, 0};
  }
}

// Fills a weight tensor whose rows have `fan_in` elements.
void fill_weights(GgmlType type, std::span<std::byte> out, std::uint64_t fan_in, Rng& rng, float gain) {
  const float sigma = gain / std::sqrt(static_cast<float>(fan_in));
  const auto* traits = kernels::type_traits(type);
  if (type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16) {
    const std::size_t n = out.size() / traits->block_bytes;
    for (std::size_t i = 0; i < n; ++i) {
      const float v = (rng.uniform() * 2.0f - 1.0f) * sigma * 1.7320508f;  // uniform with std sigma
      std::byte* p = out.data() + i * traits->block_bytes;
      if (type == GgmlType::kF32) std::memcpy(p, &v, 4);
      if (type == GgmlType::kF16) put_f16(p, v);
      if (type == GgmlType::kBF16) {
        const std::uint16_t b = kernels::f32_to_bf16(v);
        std::memcpy(p, &b, 2);
      }
    }
    return;
  }
  fill_random_bytes(out, rng);
  const BlockScales s = block_scales(type);
  const std::size_t n_blocks = out.size() / traits->block_bytes;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    std::byte* block = out.data() + b * traits->block_bytes;
    const float d = sigma / s.spread * (0.75f + 0.5f * rng.uniform());
    put_f16(block + s.d_at, d);
    if (s.m_at >= 0) {
      // K-types subtract dmin x m (m averages like the sub-scales); Q4_1/Q5_1 add m.
      const bool k_type = type == GgmlType::kQ4_K || type == GgmlType::kQ5_K;
      put_f16(block + s.m_at, k_type ? s.min_per_d * d : -s.min_per_d * d);
    }
  }
}

// f32 values uniform in [centre - spread, centre + spread].
void fill_f32(std::span<std::byte> out, Rng& rng, float centre, float spread) {
  for (std::size_t i = 0; i + 4 <= out.size(); i += 4) {
    const float v = centre + spread * (2.0f * rng.uniform() - 1.0f);
    std::memcpy(out.data() + i, &v, 4);
  }
}

// GPT-2's byte-to-unicode table: printable bytes stand for themselves, the
// others are shifted to code points from 256 up, in byte order.
std::vector<std::string> byte_tokens() {
  auto printable = [](int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); };
  std::vector<std::string> out;
  int shifted = 0;
  for (int b = 0; b < 256; ++b) {
    const std::uint32_t cp = printable(b) ? static_cast<std::uint32_t>(b) : static_cast<std::uint32_t>(256 + shifted++);
    std::string s;
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else {
      s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

constexpr const char* kChatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + "
    "'\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

void add_vocabulary(gguf::GgufWriter& w, std::uint32_t n_vocab) {
  std::vector<std::string> tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  std::vector<std::int32_t> types = {3, 3, 3};  // CONTROL
  for (auto& b : byte_tokens()) {
    tokens.push_back(std::move(b));
    types.push_back(1);  // NORMAL
  }
  while (tokens.size() < n_vocab) {
    tokens.push_back("tok" + std::to_string(tokens.size()));
    types.push_back(1);
  }
  tokens.resize(n_vocab);
  types.resize(n_vocab);
  w.add_string("tokenizer.ggml.model", "gpt2");
  // "gpt-2": the GPT-2 pattern under the name llama.cpp knows too ("gpt2" it refuses), so the peer
  // benchmark runs on the very same files.
  w.add_string("tokenizer.ggml.pre", "gpt-2");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_array<std::int32_t>("tokenizer.ggml.token_type", types);
  w.add_string_array("tokenizer.ggml.merges", std::vector<std::string>{});
  w.add_scalar<std::uint32_t>("tokenizer.ggml.bos_token_id", 0);
  w.add_scalar<std::uint32_t>("tokenizer.ggml.eos_token_id", 2);
  w.add_scalar<bool>("tokenizer.ggml.add_bos_token", false);
  w.add_string("tokenizer.chat_template", kChatMlTemplate);
}

// llama.cpp's file_type numbers (general.file_type) for the quantizations synth makes.
std::uint32_t file_type(const SyntheticQuant& q) {
  if (q.k_mixture) return 15;  // MOSTLY_Q4_K_M
  switch (q.base) {
    case GgmlType::kF32:
      return 0;
    case GgmlType::kF16:
      return 1;
    case GgmlType::kQ4_0:
      return 2;
    case GgmlType::kQ4_1:
      return 3;
    case GgmlType::kQ8_0:
      return 7;
    case GgmlType::kQ5_0:
      return 8;
    case GgmlType::kQ5_1:
      return 9;
    case GgmlType::kQ4_K:
      return 14;  // Q4_K_S
    case GgmlType::kQ5_K:
      return 16;  // Q5_K_S
    case GgmlType::kQ6_K:
      return 18;
    case GgmlType::kBF16:
      return 32;
    default:
      return 0;
  }
}

Result<void> check_shape(const SyntheticShape& s) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalidArgument, "synthetic shape '" + s.name + "': " + why);
  };
  if (!s.n_embd || !s.n_layer || !s.n_head || !s.n_head_kv || !s.n_ff || !s.n_vocab || !s.n_ctx)
    return bad("every size must be positive");
  if (s.n_embd % s.n_head) return bad("heads (" + std::to_string(s.n_head) + ") must divide the width");
  if (s.n_head % s.n_head_kv) return bad("KV heads must divide heads");
  if ((s.n_embd / s.n_head) % 2) return bad("head dimension must be even (RoPE)");
  if (s.n_embd % 32 || s.n_ff % 32) return bad("width and FFN width must be multiples of 32 (block size)");
  if (s.n_layer > 512 || s.n_embd > 65536 || s.n_ff > 262144 || s.n_vocab > 1048576 || s.n_vocab < 259)
    return bad("sizes out of the plausible range");
  return {};
}

}  // namespace

const std::vector<SyntheticShape>& synthetic_shapes() {
  static const std::vector<SyntheticShape> shapes = {
      {"smollm2-135m", 576, 30, 9, 3, 1536, 49152, 8192, 100000.0f, 1e-5f, true},
      {"llama-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true},
      {"llama-8b", 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0f, 1e-5f, false},
      // Qwen2-7B: 28 query heads over 4 KV heads of 128, QKV biases, NeoX RoPE.
      {"qwen2-7b", 3584, 28, 28, 4, 18944, 152064, 32768, 1000000.0f, 1e-6f, false, "qwen2"},
  };
  return shapes;
}

const SyntheticShape* find_synthetic_shape(std::string_view name) {
  for (const auto& s : synthetic_shapes()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Result<SyntheticQuant> parse_synthetic_quant(std::string_view name) {
  if (name == "Q4_K_M") return SyntheticQuant{std::string(name), GgmlType::kQ4_K, true};
  for (const auto& t : kernels::all_types()) {
    if (t.name != name) continue;
    // Q8_1 / Q8_K exist only as activations: no weight file holds them.
    const bool supported = kernels::is_weight_type(t.type);
    if (!supported) break;
    return SyntheticQuant{std::string(name), t.type, false};
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "quantization '" + std::string(name) +
                        "' is not one synth makes (F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K Q4_K_M)");
}

GgmlType synthetic_tensor_type(const SyntheticSpec& spec, std::string_view role, int layer, std::uint64_t row_elems) {
  GgmlType t = spec.quant.base;
  if (spec.quant.k_mixture) {
    const int n = static_cast<int>(spec.shape.n_layer);
    const bool more_bits = layer >= 0 && (layer < n / 8 || layer >= 7 * n / 8 || (layer - n / 8) % 3 == 2);
    if (role == "output" || ((role == "attn_v" || role == "ffn_down") && more_bits)) t = GgmlType::kQ6_K;
  }
  if (row_elems % 256 != 0) {
    if (t == GgmlType::kQ4_K) return GgmlType::kQ5_0;
    if (t == GgmlType::kQ5_K) return GgmlType::kQ5_1;
    if (t == GgmlType::kQ6_K) return GgmlType::kQ8_0;
  }
  return t;
}

Result<void> write_synthetic_model(const SyntheticSpec& spec, const std::filesystem::path& path) {
  const SyntheticShape& s = spec.shape;
  HEARTH_TRY(check_shape(s));
  gguf::GgufWriter w;
  if (s.architecture != "llama" && s.architecture != "qwen2") {
    return make_error(ErrorCode::kInvalidArgument, "synthetic architecture must be llama or qwen2");
  }
  const std::string a = s.architecture + ".";
  w.add_string("general.architecture", s.architecture);
  w.add_string("general.name", "synthetic " + s.name + " " + spec.quant.name);
  w.add_scalar<std::uint32_t>("general.file_type", file_type(spec.quant));
  w.add_scalar<std::uint32_t>(a + "context_length", s.n_ctx);
  w.add_scalar<std::uint32_t>(a + "embedding_length", s.n_embd);
  w.add_scalar<std::uint32_t>(a + "block_count", s.n_layer);
  w.add_scalar<std::uint32_t>(a + "feed_forward_length", s.n_ff);
  w.add_scalar<std::uint32_t>(a + "attention.head_count", s.n_head);
  w.add_scalar<std::uint32_t>(a + "attention.head_count_kv", s.n_head_kv);
  w.add_scalar<float>(a + "rope.freq_base", s.rope_base);
  w.add_scalar<float>(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_scalar<std::uint32_t>(a + "vocab_size", s.n_vocab);
  w.add_scalar<std::uint32_t>(a + "rope.dimension_count", s.n_embd / s.n_head);
  add_vocabulary(w, s.n_vocab);

  std::uint64_t tensor_index = 0;
  auto weight = [&](const std::string& name, std::string_view role, int layer, std::uint64_t in, std::uint64_t out) {
    const GgmlType t = synthetic_tensor_type(spec, role, layer, in);
    const std::uint64_t seed = spec.seed * 0x100000001b3ULL + tensor_index++;
    const float gain = layer >= 0 && layer == spec.boosted_layer ? spec.boost : 1.0f;
    w.add_tensor(name, t, {static_cast<std::int64_t>(in), static_cast<std::int64_t>(out)},
                 [t, in, seed, gain](std::span<std::byte> bytes) {
                   Rng rng{seed};
                   fill_weights(t, bytes, in, rng, gain);
                 });
  };
  // Norm weights near 1; biases small, as trained models have them.
  auto vector = [&](const std::string& name, std::uint64_t n, float centre, float spread) {
    const std::uint64_t seed = spec.seed * 0x100000001b3ULL + tensor_index++;
    w.add_tensor(name, GgmlType::kF32, {static_cast<std::int64_t>(n)},
                 [seed, centre, spread](std::span<std::byte> bytes) {
                   Rng rng{seed};
                   fill_f32(bytes, rng, centre, spread);
                 });
  };
  auto norm = [&](const std::string& name, std::uint64_t n) { vector(name, n, 1.0f, 0.2f); };
  auto bias = [&](const std::string& name, std::uint64_t n) { vector(name, n, 0.0f, 0.1f); };
  const std::uint64_t head_dim = s.n_embd / s.n_head;
  weight("token_embd.weight", "token_embd", -1, s.n_embd, s.n_vocab);
  for (std::uint32_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const int layer = static_cast<int>(i);
    norm(p + "attn_norm.weight", s.n_embd);
    weight(p + "attn_q.weight", "attn_q", layer, s.n_embd, s.n_head * head_dim);
    weight(p + "attn_k.weight", "attn_k", layer, s.n_embd, s.n_head_kv * head_dim);
    weight(p + "attn_v.weight", "attn_v", layer, s.n_embd, s.n_head_kv * head_dim);
    if (s.architecture == "qwen2") {
      bias(p + "attn_q.bias", s.n_head * head_dim);
      bias(p + "attn_k.bias", s.n_head_kv * head_dim);
      bias(p + "attn_v.bias", s.n_head_kv * head_dim);
    }
    weight(p + "attn_output.weight", "attn_output", layer, s.n_head * head_dim, s.n_embd);
    norm(p + "ffn_norm.weight", s.n_embd);
    weight(p + "ffn_gate.weight", "ffn_gate", layer, s.n_embd, s.n_ff);
    weight(p + "ffn_up.weight", "ffn_up", layer, s.n_embd, s.n_ff);
    weight(p + "ffn_down.weight", "ffn_down", layer, s.n_ff, s.n_embd);
  }
  norm("output_norm.weight", s.n_embd);
  if (!s.tied_embeddings) weight("output.weight", "output", -1, s.n_embd, s.n_vocab);
  return w.write_file(path);
}

}  // namespace hearth::models
