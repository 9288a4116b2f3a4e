#include "engine/eval/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include <unistd.h>

#include "engine/gguf/gguf_file.h"
#include "models/llama/llama_model.h"
#include "models/synthetic.h"

namespace hearth::eval {
namespace {

namespace fs = std::filesystem;

class PerplexityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("hearth-ppl-" + std::to_string(::getpid()) + ".gguf");
    models::SyntheticSpec spec;
    spec.shape = {"custom", 128, 2, 2, 1, 256, 300, 256, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("F16").value();
    ASSERT_TRUE(models::write_synthetic_model(spec, path_).ok());
    auto file = gguf::GgufFile::open(path_);
    ASSERT_TRUE(file.ok());
    auto model = models::LlamaModel::load(std::move(file).value(), {1});
    ASSERT_TRUE(model.ok());
    model_ = std::move(model).value();
  }
  void TearDown() override { fs::remove(path_); }

  // The definition, computed independently: one token per step, every
  // window from an empty cache, second half scored.
  double reference(const std::vector<std::int32_t>& tokens, std::int32_t ctx, std::optional<std::int32_t> bos) {
    const std::int32_t per_window = ctx - (bos ? 1 : 0);
    std::vector<std::int32_t> table(64);
    std::iota(table.begin(), table.end(), 0);
    EXPECT_TRUE(model_->allocate_kv({64, 16}).ok());
    const std::size_t vocab = model_->hparams().n_vocab;
    std::vector<float> logits(vocab);
    double sum = 0;
    int n = 0;
    for (std::size_t w = 0; w + per_window <= tokens.size(); w += per_window) {
      std::vector<std::int32_t> window;
      if (bos) window.push_back(*bos);
      window.insert(window.end(), tokens.begin() + w, tokens.begin() + w + per_window);
      for (std::int32_t p = 0; p + 1 < ctx; ++p) {
        const SequenceStep step{std::span(window).subspan(p, 1), p, table, true, false};
        EXPECT_TRUE(model_->forward(std::span(&step, 1), logits).ok());
        if (p < ctx / 2) continue;
        double z = 0;
        for (float l : logits) z += std::exp(static_cast<double>(l));
        sum += std::log(z) - logits[window[p + 1]];
        ++n;
      }
    }
    return std::exp(sum / n);
  }

  fs::path path_;
  std::unique_ptr<models::LlamaModel> model_;
};

TEST_F(PerplexityTest, MatchesTokenByTokenDefinition) {
  std::mt19937 rng(3);
  std::vector<std::int32_t> tokens(200);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % 300);
  for (std::optional<std::int32_t> bos : {std::optional<std::int32_t>{}, std::optional<std::int32_t>{0}}) {
    PerplexityOptions opt;
    opt.context = 64;
    opt.batch = 24;  // windows span several steps
    opt.bos = bos;
    auto r = perplexity(*model_, tokens, opt);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const double want = reference(tokens, 64, bos);
    EXPECT_NEAR(r->perplexity / want, 1.0, 1e-4);
    EXPECT_EQ(r->windows, 3);  // 200 tokens in windows of 64 (or 63 + BOS)
    EXPECT_EQ(r->scored_tokens, r->windows * 31);
    EXPECT_GT(r->standard_error, 0.0);
    EXPECT_LT(r->standard_error, r->perplexity);
  }
}

TEST_F(PerplexityTest, TooShortTextIsAnError) {
  std::vector<std::int32_t> tokens(10, 5);
  PerplexityOptions opt;
  opt.context = 64;
  auto r = perplexity(*model_, tokens, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("10 tokens"), std::string::npos);
}

}  // namespace
}  // namespace hearth::eval
