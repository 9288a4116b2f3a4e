#include "gemma3_test_file.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::models::test {
namespace {

namespace k = hearth::kernels;
using gguf::GgmlType;

constexpr std::uint32_t kEmbd = 256, kLayers = 6, kHeads = 2, kKvHeads = 1, kHeadDim = 128, kFf = 512;

void add_vocabulary(gguf::GgufWriter& w) {
  std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"};
  std::vector<std::int32_t> types(tokens.size(), 3);  // CONTROL
  std::vector<float> scores(tokens.size(), 0.0f);
  while (tokens.size() < kTinyGemma3Vocab) {
    scores.push_back(-static_cast<float>(tokens.size()));
    tokens.push_back("\xe2\x96\x81t" + std::to_string(tokens.size()));  // "▁tN"
    types.push_back(1);
  }
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_array<float>("tokenizer.ggml.scores", scores);
  w.add_array<std::int32_t>("tokenizer.ggml.token_type", types);
  w.add_scalar<std::uint32_t>("tokenizer.ggml.bos_token_id", 2);
  w.add_scalar<std::uint32_t>("tokenizer.ggml.eos_token_id", 1);
  w.add_scalar<std::uint32_t>("tokenizer.ggml.unknown_token_id", 3);
  w.add_scalar<bool>("tokenizer.ggml.add_space_prefix", false);
}

// [rows][cols] random normals / sqrt(cols) in `type` (random bytes for a type the CPU cannot quantize to).
std::vector<std::byte> matrix(GgmlType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng) {
  const auto kt = static_cast<k::GgmlType>(type);
  const std::size_t stride = k::row_bytes(kt, cols);
  std::vector<std::byte> out(stride * static_cast<std::size_t>(rows));
  const k::QuantOps* q = k::quant_ops(kt, k::CpuLevel::kScalar);
  if (q == nullptr || q->quantize_row == nullptr) {
    for (auto& b : out) b = static_cast<std::byte>(rng() & 0x3f);
    return out;
  }
  std::normal_distribution<float> dist(0.0f, 1.0f / std::sqrt(static_cast<float>(cols)));
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (float& x : row) x = dist(rng);
    q->quantize_row(row.data(), out.data() + static_cast<std::size_t>(r) * stride, cols);
  }
  return out;
}

std::vector<std::byte> norm(std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(1.0f, 0.2f);
  std::vector<std::byte> out(static_cast<std::size_t>(n) * sizeof(float));
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    std::memcpy(out.data() + i * sizeof(float), &v, sizeof(float));
  }
  return out;
}

}  // namespace

Result<void> write_tiny_gemma3(const TinyGemma3& spec, const std::filesystem::path& path) {
  gguf::GgufWriter w;
  const std::string a = spec.architecture + ".";
  w.add_string("general.architecture", spec.architecture);
  w.add_string("general.name", "tiny gemma3");
  w.add_scalar<std::uint32_t>(a + "context_length", 1024);
  w.add_scalar<std::uint32_t>(a + "embedding_length", kEmbd);
  w.add_scalar<std::uint32_t>(a + "block_count", kLayers);
  w.add_scalar<std::uint32_t>(a + "feed_forward_length", kFf);
  w.add_scalar<std::uint32_t>(a + "attention.head_count", kHeads);
  w.add_scalar<std::uint32_t>(a + "attention.head_count_kv", kKvHeads);
  w.add_scalar<std::uint32_t>(a + "attention.key_length", kHeadDim);
  w.add_scalar<std::uint32_t>(a + "attention.value_length", kHeadDim);
  w.add_scalar<float>(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.add_scalar<float>(a + "rope.freq_base", 1e6f);
  w.add_scalar<std::uint32_t>(a + "attention.sliding_window", kTinyGemma3Window);
  add_vocabulary(w);
  std::mt19937 rng(static_cast<std::uint32_t>(spec.seed));
  const auto type_of = [&](const std::string& name, GgmlType t) {
    return spec.tensor_type ? spec.tensor_type(name, t) : t;
  };
  const auto mat = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    const GgmlType t = type_of(name, spec.matrix_type);
    w.add_tensor(name, t, {cols, rows}, matrix(t, rows, cols, rng));
  };
  const auto vec = [&](const std::string& name, std::int64_t n) {
    const GgmlType t = type_of(name, GgmlType::kF32);
    w.add_tensor(name, t, {n}, t == GgmlType::kF32 ? norm(n, rng) : matrix(t, 1, n, rng));
  };
  const std::int64_t q = kHeads * kHeadDim, kv = kKvHeads * kHeadDim;
  mat("token_embd.weight", kTinyGemma3Vocab, kEmbd);
  vec("output_norm.weight", kEmbd);
  for (std::uint32_t l = 0; l < kLayers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    vec(b + "attn_norm.weight", kEmbd);
    mat(b + "attn_q.weight", q, kEmbd);
    mat(b + "attn_k.weight", kv, kEmbd);
    mat(b + "attn_v.weight", kv, kEmbd);
    mat(b + "attn_output.weight", kEmbd, q);
    vec(b + "attn_q_norm.weight", kHeadDim);
    vec(b + "attn_k_norm.weight", kHeadDim);
    vec(b + "post_attention_norm.weight", kEmbd);
    vec(b + "ffn_norm.weight", kEmbd);
    mat(b + "ffn_gate.weight", kFf, kEmbd);
    mat(b + "ffn_up.weight", kFf, kEmbd);
    mat(b + "ffn_down.weight", kEmbd, kFf);
    vec(b + "post_ffw_norm.weight", kEmbd);
  }
  return w.write_file(path);
}

}  // namespace hearth::models::test
