// Gemma 3 on the CPU through models::load_model, on the tiny file of
// gemma3_test_file.h: prefill and decode agree across the sliding window,
// the model reads its layer pattern and window, and files Hearth cannot run
// are refused at load naming what is missing. (Numerical correctness against
// the float64 reference: models_gemma3_logits_*.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "gemma3_test_file.h"
#include "models/gemma3/gemma3_model.h"
#include "models/loader.h"

namespace hearth::models::test {
namespace {

std::filesystem::path temp_path(const std::string& what) {
  return std::filesystem::temp_directory_path() /
         ("hearth-gemma3-" + what + "-" + std::to_string(::getpid()) + ".gguf");
}

struct TempFile {
  explicit TempFile(const std::string& what) : path(temp_path(what)) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * double{a[i] - b[i]};
    n += b[i] * double{b[i]};
  }
  return std::sqrt(d / n);
}

TEST(Gemma3Model, ReadsItsLayerPatternWindowAndScales) {
  TempFile f("params");
  ASSERT_TRUE(write_tiny_gemma3({}, f.path).ok());
  auto bundle = load_model(f.path, {});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  const auto* g = dynamic_cast<const Gemma3Model*>(bundle->model.get());
  ASSERT_NE(g, nullptr);
  const Gemma3Params& p = g->params();
  EXPECT_EQ(p.window, kTinyGemma3Window);
  EXPECT_EQ(p.local, (std::vector<bool>{true, true, true, true, true, false}));  // 5 local per global
  EXPECT_EQ(p.hp.head_dim, 128u);
  EXPECT_FLOAT_EQ(p.attn_scale, 1.0f / std::sqrt(128.0f));
  EXPECT_FLOAT_EQ(p.embd_scale, 16.0f);
  EXPECT_FLOAT_EQ(p.rope_base_local, 1e4f);
  EXPECT_FLOAT_EQ(p.hp.rope_base, 1e6f);
  EXPECT_EQ(bundle->run.chat_format, "fallback gemma-turns (the model has no chat template)");
}

// 30 tokens (past the window of 8): in one step, and as 20 + one by one.
TEST(Gemma3Model, PrefillAndDecodeAgreeAcrossTheWindow) {
  TempFile f("steps");
  TinyGemma3 spec;
  spec.matrix_type = gguf::GgmlType::kQ8_0;
  spec.seed = 3;
  ASSERT_TRUE(write_tiny_gemma3(spec, f.path).ok());
  auto bundle = load_model(f.path, {});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  Model& m = *bundle->model;
  ASSERT_TRUE(m.allocate_kv(KvLayout{8, 16}).ok());
  std::mt19937 rng(5);
  std::vector<std::int32_t> ids(30);
  for (auto& t : ids) t = static_cast<std::int32_t>(rng() % kTinyGemma3Vocab);
  const std::vector<std::int32_t> a{0, 1}, b{5, 3};  // two block tables
  std::vector<float> whole(kTinyGemma3Vocab), step(kTinyGemma3Vocab);
  SequenceStep all{ids, 0, a, true};
  ASSERT_TRUE(m.forward(std::span(&all, 1), whole).ok());
  SequenceStep head{std::span(ids).first(20), 0, b, false};
  ASSERT_TRUE(m.forward(std::span(&head, 1), step).ok());
  for (std::size_t i = 20; i < ids.size(); ++i) {
    SequenceStep one{std::span(ids).subspan(i, 1), static_cast<std::int32_t>(i), b, true};
    ASSERT_TRUE(m.forward(std::span(&one, 1), step).ok());
  }
  EXPECT_LT(relative_l2(step, whole), 1e-4);
}

TEST(Gemma3Model, UnknownArchitecturesAreRefusedNamingTheSupportedOnes) {
  TempFile f("arch");
  TinyGemma3 spec;
  spec.architecture = "mamba9";
  ASSERT_TRUE(write_tiny_gemma3(spec, f.path).ok());
  auto bundle = load_model(f.path, {});
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(bundle.error().message, "model architecture 'mamba9' is not supported (supported: llama, qwen2, gemma3)");
}

TEST(Gemma3Model, UnsupportedTensorTypesAreRefusedNamingTheTensor) {
  TempFile f("type");
  TinyGemma3 spec;
  spec.tensor_type = [](const std::string& name, gguf::GgmlType t) {
    return name == "blk.3.ffn_up.weight" ? gguf::GgmlType::kQ8_K : t;
  };
  ASSERT_TRUE(write_tiny_gemma3(spec, f.path).ok());
  auto bundle = load_model(f.path, {});
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(bundle.error().message, "tensor 'blk.3.ffn_up.weight' has type Q8_K, which Hearth cannot compute with");

  TinyGemma3 f16_norm;
  f16_norm.tensor_type = [](const std::string& name, gguf::GgmlType t) {
    return name == "blk.0.attn_q_norm.weight" ? gguf::GgmlType::kF16 : t;
  };
  ASSERT_TRUE(write_tiny_gemma3(f16_norm, f.path).ok());
  bundle = load_model(f.path, {});
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.error().message, "tensor 'blk.0.attn_q_norm.weight' has type F16, expected F32");
}

}  // namespace
}  // namespace hearth::models::test
