// hearth-cli chat MODEL: an interactive terminal chat. Answers stream as they
// are generated; every turn resends the whole conversation and the engine's
// prefix cache skips what it has already computed. Commands: /reset,
// /system TEXT, /stats, /quit (or end of input).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/engine_session.h"

namespace hearth::cli {
namespace {

struct ChatOptions {
  EngineSetup setup;
  SamplingParams sampling;
  std::string system;
  int n = 512;
};

void print_stats(const Engine& engine, const Usage& last) {
  const EngineStats s = engine.stats();
  std::printf(
      "last answer: %d prompt tokens (%d cached), %d generated; TTFT %.1f ms; prefill %.1f tok/s; decode %.1f tok/s\n"
      "engine: prefix-cache hit rate %.1f%%; KV blocks %d used, %d cached, %d free of %d; TTFT p50 %.1f ms; "
      "inter-token p50 %.1f / p95 %.1f ms\n",
      last.prompt_tokens, last.cached_tokens, last.generated_tokens, last.ttft_ms, last.prefill_tps, last.decode_tps,
      100.0 * s.prefix_hit_rate, s.kv_blocks_used, s.kv_blocks_cached, s.kv_blocks_free, s.kv_blocks_total, s.ttft.p50,
      s.inter_token.p50, s.inter_token.p95);
  constexpr double kMiB = 1024.0 * 1024.0;
  std::printf("memory: weights %.1f MiB, KV pool %.1f MiB, workspace %.1f MiB",
              static_cast<double>(s.memory.weights) / kMiB, static_cast<double>(s.memory.kv_pool) / kMiB,
              static_cast<double>(s.memory.workspace) / kMiB);
  if (s.memory.device_total > 0) {
    std::printf("; GPU %.0f of %.0f MiB in use (all processes)",
                static_cast<double>(s.memory.device_total - s.memory.device_free) / kMiB,
                static_cast<double>(s.memory.device_total) / kMiB);
  }
  std::printf("\n");
  if (!s.step.forward_by_layer.empty()) {
    double sum = 0.0;
    for (const double ms : s.step.forward_by_layer) sum += ms;
    std::printf("step: schedule %.2f ms, forward %.2f ms (layers %.2f ms, %zu layers), sample %.2f ms\n",
                s.step.schedule, s.step.forward, sum, s.step.forward_by_layer.size(), s.step.sample);
  }
}

void run_chat(const ChatOptions& opt) {
  auto engine = start_engine(opt.setup);
  std::string system = opt.system;
  std::vector<ChatTurn> history;
  Usage last;
  std::fprintf(stderr, "Chatting with %s. Commands: /reset, /system TEXT, /stats, /quit.\n", opt.setup.model.c_str());
  for (std::string line;;) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line.empty()) continue;
    if (line == "/reset") {
      history.clear();
      std::puts("(conversation cleared)");
      continue;
    }
    if (line.rfind("/system", 0) == 0) {
      system = line.size() > 8 ? line.substr(8) : "";
      history.clear();
      std::puts(system.empty() ? "(system message removed; conversation cleared)"
                               : "(system message set; conversation cleared)");
      continue;
    }
    if (line == "/stats") {
      print_stats(*engine, last);
      continue;
    }
    history.push_back({"user", line});
    Request request;
    if (!system.empty()) request.messages.push_back({"system", system});
    request.messages.insert(request.messages.end(), history.begin(), history.end());
    request.sampling = opt.sampling;
    request.max_tokens = opt.n;
    auto sink = std::make_shared<StreamingSink>(stdout);
    engine->submit(std::move(request), sink);
    const FinishEvent finish = sink->wait();
    std::fputs("\n", stdout);
    if (finish.reason == FinishReason::kError) {
      history.pop_back();
      std::fprintf(stderr, "error: %s\n", finish.error ? finish.error->describe().c_str() : "generation failed");
      continue;
    }
    last = finish.usage;
    history.push_back({"assistant", sink->text()});
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto opt = std::make_shared<ChatOptions>();
  CLI::App* cmd = app.add_subcommand("chat", "Interactive chat in the terminal");
  add_engine_options(*cmd, opt->setup);
  add_sampling_options(*cmd, opt->sampling);
  cmd->add_option("--system", opt->system, "System message");
  cmd->add_option("-n,--max-tokens", opt->n, "Tokens per answer at most")->capture_default_str();
  cmd->callback([opt] { run_chat(*opt); });
}

}  // namespace hearth::cli
