// hearth-bench concurrent MODEL --streams N: N simultaneous greedy streams
// after one alone; aggregate and per-stream decode tok/s. Target on 2 CPU
// threads: 8 streams give at least 2x the aggregate decode of 1 stream.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_common.h"

namespace hearth::bench {
namespace {

struct Options {
  ModelArgs model;
  int streams = 8;
  std::int32_t tokens = 64;  // generated per stream
  bool profile = false;      // per-op profile of the many-stream run (steps run eagerly)
};

Request stream_request(int i, std::int32_t tokens) {
  static const char* const topics[] = {"rivers", "volcanoes", "bread", "trains", "owls", "glaciers", "chess", "bees"};
  Request r;
  r.messages = {
      {"user", std::string("Tell me a few facts about ") + topics[i % 8] + " (stream " + std::to_string(i) + ")."}};
  r.sampling.temperature = 0;
  r.max_tokens = tokens;
  r.ignore_eos = true;  // every stream decodes the same number of tokens
  return r;
}

struct Measured {
  double aggregate_tps = 0;
  std::vector<double> per_stream_tps;
};

// Aggregate: decode tokens (after each stream's first) over the wall time from
// the earliest first token to the latest last token.
Measured measure(Engine& engine, int streams, std::int32_t tokens) {
  std::vector<Request> requests;
  for (int i = 0; i < streams; ++i) requests.push_back(stream_request(i, tokens));
  std::vector<std::shared_ptr<WaitingSink>> sinks;
  const std::vector<FinishEvent> done = run_requests(engine, requests, &sinks);
  Measured m;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  std::int64_t decoded = 0;
  for (std::size_t i = 0; i < done.size(); ++i) {
    m.per_stream_tps.push_back(done[i].usage.decode_tps);
    decoded += std::max(0, done[i].usage.generated_tokens - 1);
    first = std::min(first, sinks[i]->first_token());
    last = std::max(last, sinks[i]->last_token());
  }
  const double seconds = std::chrono::duration<double>(last - first).count();
  m.aggregate_tps = seconds > 0 ? static_cast<double>(decoded) / seconds : 0.0;
  return m;
}

// The profiled steps of `tokens` rows (the pure decode steps of the
// many-stream run): mean forward, host wait and GPU idle, and each op name's
// mean microseconds per step, largest first.
void print_profile(const ProfileReport& r, std::int64_t tokens) {
  std::map<std::string, double> by_name;
  double forward = 0, wait = 0, idle = 0;
  int steps = 0;
  for (const StepProfile& s : r.recent) {
    if (s.tokens != tokens) continue;
    ++steps;
    forward += s.forward_us, wait += s.host_wait_us, idle += s.gpu_idle_us;
    for (const OpProfileEntry& e : s.ops)
      by_name[std::string(kernel_kind_name(e.kind)) + " " + e.name] += e.duration_us;
  }
  if (steps == 0) {
    std::fprintf(stderr, "profile: no step of %lld rows kept\n", static_cast<long long>(tokens));
    return;
  }
  std::fprintf(stderr, "profile: %d steps of %lld rows: forward %.0f us, host wait %.0f us, GPU idle %.0f us\n", steps,
               static_cast<long long>(tokens), forward / steps, wait / steps, idle / steps);
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [name, us] : by_name) rows.emplace_back(us / steps, name);
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [us, name] : rows) std::fprintf(stderr, "  %-28s %9.1f us\n", name.c_str(), us);
}

void run(const Options& o) {
  if (o.streams < 1) fail("--streams must be at least 1");
  models::RunConfig config = o.model.run_config();
  config.context_length = 1024;
  config.max_sequences = std::max(o.streams, 2);
  // The KV pool holds every stream at once (its prompt, its tokens and 256 of
  // slack), as llama-batched-bench's -c does; never less than the engine's
  // default of two full contexts. (With only the default, 1024-token contexts
  // held ~14 streams of 128 tokens: 64 streams ran a few at a time.)
  if (config.kv_budget_bytes == 0) {
    Result<models::DevicePlan> dp = models::plan_device(o.model.model, config);
    if (!dp) fail(dp.error());
    const std::int64_t block = config.kv_block_size;
    const std::int64_t need = std::int64_t{o.streams} * ((256 + o.tokens + block - 1) / block);
    if (need > dp->plan.kv_blocks) config.kv_budget_bytes = static_cast<std::size_t>(need) * dp->plan.kv_block_bytes;
  }
  auto engine = open_engine(o.model, config);
  (void)measure(*engine, 1, 8);  // warm-up: first-touch of the weights and workspace
  const Measured single = measure(*engine, 1, o.tokens);
  if (o.profile) engine->set_profiling(ProfileOptions{true, 256});
  const Measured many = measure(*engine, o.streams, o.tokens);
  if (o.profile) print_profile(engine->profile(), o.streams);
  if (o.model.json) {
    const nlohmann::json out = {{"streams", o.streams},
                                {"aggregate_decode_tps", many.aggregate_tps},
                                {"single_stream_decode_tps", single.aggregate_tps},
                                {"per_stream_decode_tps", many.per_stream_tps}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("streams %d, %d tokens each\n", o.streams, o.tokens);
  std::printf("single stream decode:  %8.1f tok/s\n", single.aggregate_tps);
  std::printf("aggregate decode:      %8.1f tok/s (%.2fx)\n", many.aggregate_tps,
              single.aggregate_tps > 0 ? many.aggregate_tps / single.aggregate_tps : 0.0);
  for (std::size_t i = 0; i < many.per_stream_tps.size(); ++i) {
    std::printf("  stream %2zu:           %8.1f tok/s\n", i, many.per_stream_tps[i]);
  }
}

}  // namespace

void add_concurrent_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("concurrent", "Aggregate and per-stream decode tok/s of N simultaneous streams");
  auto o = std::make_shared<Options>();
  add_model_args(*cmd, o->model);
  cmd->add_option("--streams", o->streams, "Simultaneous requests")->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "Tokens generated per stream")->capture_default_str();
  cmd->add_flag("--profile", o->profile, "Print the per-op profile of the many-stream run's decode steps to stderr");
  cmd->callback([o] { run(*o); });
}

}  // namespace hearth::bench
