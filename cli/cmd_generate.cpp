// hearth-cli generate MODEL (--prompt TEXT | --prompt-file F) [--chat]
//   [--system TEXT] [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P]
//   [--repeat-penalty R] [--seed S] [--threads N] [--ctx N] [--json] [--check-overflow]
// Streams the answer to stdout. With --json, the last line is one JSON object
// whose field names are a documented interface: add fields, never rename.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/engine_session.h"
#include "cli/profile_output.h"

namespace hearth::cli {
namespace {

struct GenerateOptions {
  EngineSetup setup;
  std::string prompt;
  std::string prompt_file;
  bool chat = false;
  std::string system;
  int n = 128;
  SamplingParams sampling;
  bool json = false;
  bool check_overflow = false;
};

nlohmann::json result_json(const std::string& text, const FinishEvent& f, const ModelRunInfo& run,
                           const MemoryByCategory& memory) {
  const nlohmann::json mem = {{"weights_bytes", memory.weights},
                              {"kv_bytes", memory.kv_pool},
                              {"workspace_bytes", memory.workspace},
                              {"total_bytes", memory.weights + memory.kv_pool + memory.workspace}};
  return {{"text", text},
          {"prompt_token_ids", f.prompt_token_ids},
          {"generated_token_ids", f.generated_token_ids},
          {"prompt_tokens", f.usage.prompt_tokens},
          {"cached_tokens", f.usage.cached_tokens},
          {"generated_tokens", f.usage.generated_tokens},
          {"ttft_ms", f.usage.ttft_ms},
          {"prefill_tps", f.usage.prefill_tps},
          {"decode_tps", f.usage.decode_tps},
          {"total_ms", f.usage.total_ms},
          {"itl_p50_ms", f.usage.itl_p50_ms},
          {"itl_p95_ms", f.usage.itl_p95_ms},
          {"itl_p99_ms", f.usage.itl_p99_ms},
          {"finish_reason", to_string(f.reason)},
          {"device", run.device},
          {"kv_precision", to_string(run.kv_precision)},
          {"weight_format", run.weight_format},
          {"chat_format", run.chat_format},
          {"weights_converted_from", run.weights_converted_from},
          {"conversion_ms", run.conversion_ms},
          {"memory", mem}};
}

void run_generate(GenerateOptions opt) {
  if (!opt.prompt_file.empty()) opt.prompt = read_text_file(opt.prompt_file);
  auto engine = start_engine(opt.setup);
  engine->set_overflow_check(opt.check_overflow);
  Request request;
  if (opt.chat) {
    if (!opt.system.empty()) request.messages.push_back({"system", opt.system});
    request.messages.push_back({"user", opt.prompt});
  } else {
    request.prompt_text = opt.prompt;
  }
  request.sampling = opt.sampling;
  request.max_tokens = opt.n;
  auto sink = std::make_shared<StreamingSink>(stdout);
  engine->submit(std::move(request), sink);
  const FinishEvent finish = sink->wait();
  std::fputs("\n", stdout);
  if (finish.reason == FinishReason::kError) fail(finish.error ? finish.error->describe() : "generation failed");
  const std::optional<OverflowFinding> overflow = engine->first_overflow();
  if (opt.check_overflow) print_overflow(stderr, overflow);
  if (!opt.json) return;
  nlohmann::json j = result_json(sink->text(), finish, engine->run_info(), engine->stats().memory);
  if (opt.check_overflow) j["overflow"] = overflow_json(overflow);
  std::cout << j.dump() << "\n";
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text from a prompt (streams to stdout)");
  add_engine_options(*cmd, opt->setup);
  auto* prompt = cmd->add_option("--prompt", opt->prompt, "Prompt text");
  auto* file = cmd->add_option("--prompt-file", opt->prompt_file, "Read the prompt from a file");
  prompt->excludes(file);
  cmd->add_flag("--chat", opt->chat, "Render the prompt as a user message through the chat template");
  cmd->add_option("--system", opt->system, "System message (with --chat)");
  cmd->add_option("-n,--max-tokens", opt->n, "Tokens to generate at most")->capture_default_str();
  add_sampling_options(*cmd, opt->sampling);
  cmd->add_flag("--json", opt->json, "Print a JSON summary as the last line");
  cmd->add_flag("--check-overflow", opt->check_overflow,
                "Check every op's output for NaN, Inf and values beyond 95% of the FP16 range; report the first "
                "(stderr, and \"overflow\" in --json)");
  cmd->callback([opt, prompt, file] {
    if (prompt->count() + file->count() == 0) fail("give --prompt or --prompt-file");
    run_generate(*opt);
  });
}

}  // namespace hearth::cli
