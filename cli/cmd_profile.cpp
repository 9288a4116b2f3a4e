// hearth-cli profile MODEL [--device D] [--prompt T] [-n N] [--json]
//   [--trace FILE] [--check-overflow]
// Runs one greedy generation with per-op profiling on (hearth/profile.h) and
// prints where the time went: by kernel kind, by layer, by op. --json prints
// one object instead (profile_output.h); --trace also writes a Chrome /
// Perfetto trace. The numbers include the instruments' own cost (a few
// percent on the CPU; CUDA steps run eagerly, without graphs, while profiled).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/engine_session.h"
#include "cli/profile_output.h"

namespace hearth::cli {
namespace {

struct ProfileCmdOptions {
  EngineSetup setup;
  std::string prompt = "The quick brown fox jumps over the lazy dog.";
  int n = 16;
  bool json = false;
  std::string trace;
  bool check_overflow = false;
};

void run_profile(const ProfileCmdOptions& opt) {
  auto engine = start_engine(opt.setup);
  ProfileOptions po;
  po.enabled = true;
  po.keep_steps = static_cast<std::size_t>(opt.n) + 4096;  // every step of the run (prefill chunks too)
  engine->set_profiling(po);
  engine->set_overflow_check(opt.check_overflow);
  Request request;
  request.prompt_text = opt.prompt;
  request.max_tokens = opt.n;
  request.sampling.temperature = 0;
  request.ignore_eos = true;
  auto sink = std::make_shared<StreamingSink>(nullptr);
  engine->submit(std::move(request), sink);
  const FinishEvent finish = sink->wait();
  if (finish.reason == FinishReason::kError) fail(finish.error ? finish.error->describe() : "generation failed");
  const ProfileReport report = engine->profile();
  const std::optional<OverflowFinding> overflow = engine->first_overflow();
  if (!opt.trace.empty()) {
    std::ofstream f(opt.trace, std::ios::binary | std::ios::trunc);
    f << trace_json(report).dump();
    if (!f.good()) fail("cannot write the trace to " + opt.trace);
  }
  const ModelRunInfo& run = engine->run_info();
  if (opt.json) {
    nlohmann::json j = profile_json(report);
    j["device"] = run.device;
    j["device_name"] = run.device_name;
    j["weight_format"] = run.weight_format;
    j["generated_tokens"] = finish.usage.generated_tokens;
    j["prompt_tokens"] = finish.usage.prompt_tokens;
    j["decode_tps"] = finish.usage.decode_tps;
    if (opt.check_overflow) j["overflow"] = overflow_json(overflow);
    std::cout << j.dump() << "\n";
    return;
  }
  std::printf("%s on %s: %d prompt tokens, %d generated, decode %.1f tok/s (profiled)\n", run.weight_format.c_str(),
              run.device.c_str(), finish.usage.prompt_tokens, finish.usage.generated_tokens, finish.usage.decode_tps);
  print_profile_table(stdout, report);
  if (opt.check_overflow) print_overflow(stdout, overflow);
  if (!opt.trace.empty()) std::printf("trace written to %s\n", opt.trace.c_str());
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opt = std::make_shared<ProfileCmdOptions>();
  CLI::App* cmd = app.add_subcommand("profile", "Run a generation with per-op profiling and show where the time goes");
  add_engine_options(*cmd, opt->setup);
  cmd->add_option("--prompt", opt->prompt, "Prompt text")->capture_default_str();
  cmd->add_option("-n,--max-tokens", opt->n, "Tokens to generate")->capture_default_str();
  cmd->add_flag("--json", opt->json, "Print one JSON object (layers, kernels, matrix_us, forward_us, entries...)");
  cmd->add_option("--trace", opt->trace, "Write a Chrome / Perfetto trace (traceEvents) to this file");
  cmd->add_flag("--check-overflow", opt->check_overflow,
                "Check every op's output for NaN, Inf and values beyond 95% of the FP16 range");
  cmd->callback([opt] { run_profile(*opt); });
}

}  // namespace hearth::cli
