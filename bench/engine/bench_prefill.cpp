// hearth-bench prefill MODEL --tokens N: warm prompt throughput. One warm-up
// request, then --reps requests of N random token ids each (different ones,
// so the prefix cache serves none), one generated token each; the median
// prompt tok/s (Usage::prefill_tps) and time to first token. The number to
// set beside llama-bench's pp512, which is also warm and repeated.
#include <algorithm>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "bench_common.h"

namespace hearth::bench {
namespace {

struct Options {
  ModelArgs model;
  std::int32_t tokens = 512;
  int reps = 3;
  std::int32_t max_batch_tokens = 0;  // 0: the engine's default
};

Request prompt_request(std::mt19937& rng, std::int32_t tokens, std::uint32_t n_vocab) {
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(n_vocab) - 1);
  Request r;
  for (std::int32_t i = 0; i < tokens; ++i) r.prompt_tokens.push_back(pick(rng));
  r.sampling.temperature = 0;
  r.max_tokens = 1;
  r.ignore_eos = true;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void run(const Options& o) {
  if (o.tokens < 1) fail("--tokens must be at least 1");
  if (o.reps < 1) fail("--reps must be at least 1");
  models::RunConfig config = o.model.run_config();
  config.context_length = std::max(config.context_length, o.tokens + 16);
  if (o.max_batch_tokens > 0) config.max_batch_tokens = o.max_batch_tokens;
  auto engine = open_engine(o.model, config);
  const std::uint32_t vocab = engine->model_info().n_vocab;
  std::mt19937 rng(1234);
  (void)run_requests(*engine, {prompt_request(rng, o.tokens, vocab)});  // warm-up: workspace, kernels, handles
  std::vector<double> tps, ttft;
  for (int i = 0; i < o.reps; ++i) {
    const std::vector<FinishEvent> done = run_requests(*engine, {prompt_request(rng, o.tokens, vocab)});
    tps.push_back(done.front().usage.prefill_tps);
    ttft.push_back(done.front().usage.ttft_ms);
  }
  if (o.model.json) {
    const nlohmann::json out = {{"prompt_tokens", o.tokens},
                                {"prefill_tps", median(tps)},
                                {"ttft_ms", median(ttft)},
                                {"reps", o.reps},
                                {"prefill_tps_each", tps}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("prompt %d tokens, %d reps after a warm-up: median %.1f tok/s, time to first token %.1f ms\n", o.tokens,
              o.reps, median(tps), median(ttft));
}

}  // namespace

void add_prefill_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("prefill", "Warm prompt tok/s: N-token prompts after a warm-up, median of --reps");
  auto o = std::make_shared<Options>();
  add_model_args(*cmd, o->model);
  cmd->add_option("--tokens", o->tokens, "Prompt tokens")->capture_default_str();
  cmd->add_option("--reps", o->reps, "Measured requests")->capture_default_str();
  cmd->add_option("--max-batch-tokens", o->max_batch_tokens,
                  "Tokens per engine step (prefill chunk); 0: the device's default (512 on a GPU, 256 on the CPU)");
  cmd->callback([o] { run(*o); });
}

}  // namespace hearth::bench
