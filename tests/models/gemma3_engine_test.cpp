// Gemma 3 through the engine, on the tiny file of gemma3_test_file.h (sliding
// window 8, blocks of 16): prompts that share a 48-token prefix (three full
// blocks, far past the window) give the same greedy tokens with the prefix
// cache as without it, served partly from the cache; the local layers read
// only their window of the shared blocks, which all stay allocated.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <random>

#include <unistd.h>

#include "gemma3_test_file.h"
#include "hearth/engine.h"
#include "models/loader.h"

namespace hearth::models::test {
namespace {

class WaitSink final : public Sink {
 public:
  void on_text(const TextEvent&) override {}
  void on_finish(const FinishEvent& e) override {
    std::lock_guard lock(mu_);
    finish_ = e;
    done_ = true;
    cv_.notify_all();
  }
  FinishEvent wait() {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; })) << "no finish in 60 s";
    return finish_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  FinishEvent finish_;
};

// Greedy continuations of `prompts`, one after another.
std::vector<FinishEvent> generate(const std::filesystem::path& path, bool prefix_cache,
                                  const std::vector<std::vector<std::int32_t>>& prompts) {
  LoadOptions load;
  load.n_threads = 2;
  auto bundle = load_model(path, load);
  EXPECT_TRUE(bundle.ok()) << bundle.error().message;
  if (!bundle) return {};
  EngineOptions o;
  o.context_length = 256;
  o.max_sequences = 2;
  o.prefix_cache = prefix_cache;
  auto engine = Engine::create(std::move(bundle).value(), o);
  EXPECT_TRUE(engine.ok()) << engine.error().message;
  if (!engine) return {};
  std::vector<FinishEvent> out;
  for (const auto& p : prompts) {
    Request r;
    r.prompt_tokens = p;
    r.sampling.temperature = 0;
    r.max_tokens = 12;
    r.ignore_eos = true;
    auto sink = std::make_shared<WaitSink>();
    (*engine)->submit(r, sink);
    out.push_back(sink->wait());
  }
  return out;
}

TEST(Gemma3Engine, PrefixCacheAcrossTheSlidingWindowGivesTheSameTokens) {
  const auto path =
      std::filesystem::temp_directory_path() / ("hearth-gemma3-engine-" + std::to_string(::getpid()) + ".gguf");
  TinyGemma3 spec;
  spec.matrix_type = gguf::GgmlType::kQ8_0;
  spec.seed = 9;
  ASSERT_TRUE(write_tiny_gemma3(spec, path).ok());
  std::mt19937 rng(4);
  const auto tokens = [&](std::size_t n) {
    std::vector<std::int32_t> v(n);
    for (auto& t : v) t = static_cast<std::int32_t>(6 + rng() % (kTinyGemma3Vocab - 6));
    return v;
  };
  const std::vector<std::int32_t> shared = tokens(48);
  std::vector<std::vector<std::int32_t>> prompts;
  for (const std::size_t tail : {5u, 11u, 3u}) {
    prompts.push_back(shared);
    const auto t = tokens(tail);
    prompts.back().insert(prompts.back().end(), t.begin(), t.end());
  }
  const auto cold = generate(path, false, prompts);
  const auto warm = generate(path, true, prompts);
  std::filesystem::remove(path);
  ASSERT_EQ(cold.size(), prompts.size());
  ASSERT_EQ(warm.size(), prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(warm[i].generated_token_ids, cold[i].generated_token_ids) << "prompt " << i;
    EXPECT_EQ(cold[i].usage.cached_tokens, 0);
    if (i > 0) {
      EXPECT_EQ(warm[i].usage.cached_tokens, 48) << "prompt " << i;  // three full blocks
    }
  }
}

}  // namespace
}  // namespace hearth::models::test
