#include "models/synthetic.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "engine/gguf/gguf_file.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;
using gguf::GgmlType;

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, mant = h & 1023;
  if (exp == 31) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  const float v = exp ? std::ldexp(static_cast<float>(mant | 1024), static_cast<int>(exp) - 25)
                      : std::ldexp(static_cast<float>(mant), -24);
  return sign ? -v : v;
}

SyntheticSpec tiny_spec(const std::string& quant) {
  SyntheticSpec spec;
  spec.shape = {"custom", 256, 8, 4, 2, 512, 300, 512, 10000.0f, 1e-5f, false};
  spec.quant = parse_synthetic_quant(quant).value();
  spec.seed = 7;
  return spec;
}

fs::path temp_file(const std::string& tag) {
  return fs::temp_directory_path() / ("hearth-synth-" + tag + "-" + std::to_string(::getpid()) + ".gguf");
}

// Offset of the f16 scale d inside one block.
std::size_t d_offset(GgmlType t) {
  return t == GgmlType::kQ6_K ? 208 : 0;
}

class SyntheticQuantTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SyntheticQuantTest, WritesReadableModelWithFiniteScalesAndRandomQuants) {
  const SyntheticSpec spec = tiny_spec(GetParam());
  const fs::path path = temp_file(GetParam());
  auto written = write_synthetic_model(spec, path);
  ASSERT_TRUE(written.ok()) << written.error().describe();
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  const auto& f = **file;
  EXPECT_EQ(f.get<std::uint32_t>("llama.block_count").value(), 8u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").value().size(), 300u);
  EXPECT_EQ(f.tensors().size(), 2u + 8u * 9u + 1u);  // embd, output_norm, output + 9 per layer
  const auto* q = f.tensor("blk.3.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->ne[0], 256);
  EXPECT_EQ(q->ne[1], 256);
  for (const auto& t : f.tensors()) {
    const auto* traits = kernels::type_traits(t.type);
    ASSERT_NE(traits, nullptr);
    const auto bytes = t.bytes();
    bool any_nonzero = false;
    for (std::byte b : bytes) any_nonzero = any_nonzero || b != std::byte{0};
    EXPECT_TRUE(any_nonzero) << t.name;
    if (traits->block_elems == 1) continue;
    for (std::size_t b = 0; b < bytes.size() / traits->block_bytes; ++b) {
      std::uint16_t d;
      std::memcpy(&d, bytes.data() + b * traits->block_bytes + d_offset(t.type), 2);
      const float v = f16_to_float(d);
      ASSERT_TRUE(std::isfinite(v) && v != 0.0f) << t.name << " block " << b;
    }
  }
  fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(AllQuants, SyntheticQuantTest,
                         ::testing::Values("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K",
                                           "Q6_K", "Q4_K_M"));

TEST(Synthetic, KMixtureGivesMoreBitsWhereLlamaCppDoes) {
  SyntheticSpec spec = tiny_spec("Q4_K_M");
  spec.shape.n_layer = 32;
  EXPECT_EQ(synthetic_tensor_type(spec, "attn_q", 0, 4096), GgmlType::kQ4_K);
  EXPECT_EQ(synthetic_tensor_type(spec, "attn_v", 0, 4096), GgmlType::kQ6_K);     // first eighth
  EXPECT_EQ(synthetic_tensor_type(spec, "attn_v", 4, 4096), GgmlType::kQ4_K);     // (4-4)%3 = 0
  EXPECT_EQ(synthetic_tensor_type(spec, "ffn_down", 6, 4096), GgmlType::kQ6_K);   // (6-4)%3 = 2
  EXPECT_EQ(synthetic_tensor_type(spec, "ffn_down", 28, 4096), GgmlType::kQ6_K);  // last eighth
  EXPECT_EQ(synthetic_tensor_type(spec, "output", -1, 4096), GgmlType::kQ6_K);
  // Rows not a multiple of 256 fall back.
  EXPECT_EQ(synthetic_tensor_type(spec, "attn_q", 5, 576), GgmlType::kQ5_0);
  EXPECT_EQ(synthetic_tensor_type(spec, "output", -1, 576), GgmlType::kQ8_0);
}

TEST(Synthetic, RejectsBadShapesAndQuants) {
  SyntheticSpec spec = tiny_spec("Q4_0");
  spec.shape.n_head = 3;  // does not divide 256
  auto r = write_synthetic_model(spec, temp_file("bad"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("heads"), std::string::npos);
  EXPECT_FALSE(parse_synthetic_quant("IQ2_XS").ok());
  EXPECT_FALSE(parse_synthetic_quant("Q9").ok());
  EXPECT_FALSE(fs::exists(temp_file("bad")));
}

TEST(Synthetic, NamedShapesMatchTheRealModels) {
  const auto* smol = find_synthetic_shape("smollm2-135m");
  ASSERT_NE(smol, nullptr);
  EXPECT_EQ(smol->n_embd, 576u);
  EXPECT_EQ(smol->n_layer, 30u);
  const auto* l8 = find_synthetic_shape("llama-8b");
  ASSERT_NE(l8, nullptr);
  EXPECT_EQ(l8->n_ff, 14336u);
  EXPECT_EQ(l8->n_vocab, 128256u);
  EXPECT_EQ(l8->n_head_kv, 8u);
  const auto* q7 = find_synthetic_shape("qwen2-7b");
  ASSERT_NE(q7, nullptr);
  EXPECT_EQ(q7->architecture, "qwen2");
  EXPECT_EQ(q7->n_embd, 3584u);
  EXPECT_EQ(q7->n_ff, 18944u);
  EXPECT_EQ(q7->n_vocab, 152064u);
  EXPECT_EQ(q7->n_head / q7->n_head_kv, 7u);
}

}  // namespace
}  // namespace hearth::models
