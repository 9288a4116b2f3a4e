// hearth-cli estimate MODEL [--ctx N] [--kv P] [--quant Q] [--device D] [--threads N] [--json] [--explain]
// What a model will take before it is loaded (models::plan_device: the same
// device decision and sizing open_engine() makes): weights, KV cache (total and
// per token), workspace and their total against the device's free memory, a
// verdict, and when it does not fit, the changes that would make it fit
// (a shorter context, an fp8 KV cache on CUDA, a coarser weight format, the
// CPU). Nothing is allocated. --explain also says what Hearth recommends for
// this machine when nothing is chosen (models/recommend.h), and why.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/engine_session.h"
#include "engine/gguf/gguf_file.h"
#include "hearth/devices.h"
#include "models/architecture.h"
#include "models/recommend.h"
#include "models/run_config.h"

namespace hearth::cli {
namespace {

struct EstimateOptions {
  EngineSetup setup;
  bool json = false;
  bool explain = false;
};

std::string size_text(std::size_t bytes) {
  char text[48];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (std::size_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / (1 << 10));
  }
  return text;
}

bool fits(const models::RunPlan& p, std::size_t free_bytes) {
  return p.total_bytes() <= free_bytes;
}

// How the defaults were chosen, one line each (--explain).
std::vector<std::string> explain(const ModelHyperParams& hp, const models::RunConfig& config,
                                 const models::DevicePlan& dp) {
  const models::RunPlan& p = dp.plan;
  std::vector<std::string> lines;
  lines.push_back("device " + dp.device + " (" + dp.device_name +
                  "): " + (dp.reason.empty() ? std::string("as asked (--device ") + config.device + ")" : dp.reason));
  if (config.context_length > 0) {
    lines.push_back("context " + std::to_string(p.context_length) + " tokens: as asked (--ctx)");
  } else {
    lines.push_back("context " + std::to_string(p.context_length) + " tokens: the model's trained context (" +
                    std::to_string(hp.n_ctx_train) + ") capped at 8192, the default");
  }
  lines.push_back("KV cache " + std::string(to_string(config.kv_precision)) + ": " + std::to_string(p.kv_blocks) +
                  " blocks of " + std::to_string(config.kv_block_size) + " tokens, " +
                  (config.kv_budget_bytes > 0 ? std::string("as the KV budget allows")
                                              : std::string("room for two full contexts (the default)")));
  lines.push_back("batch: " + std::to_string(models::for_device(config, dp.device).max_batch_tokens) + " tokens and " +
                  std::to_string(config.max_sequences) + " sequences per step; the workspace is sized for a full step");
  return lines;
}

nlohmann::json suggestion_json(const models::FitSuggestion& s) {
  return {{"option", s.option}, {"why", s.why}, {"total_bytes", s.total_bytes}, {"free_bytes", s.free_bytes}};
}

nlohmann::json recommendation_json(const models::Recommendation& r) {
  return {{"device", r.config.device},
          {"device_name", r.device_name},
          {"context_length", r.plan.context_length},
          {"kv_precision", to_string(r.config.kv_precision)},
          {"max_sequences", r.config.max_sequences},
          {"max_batch_tokens", r.config.max_batch_tokens},
          {"total_bytes", r.plan.total_bytes()},
          {"free_bytes", r.free_bytes},
          {"fits", r.fits},
          {"decode_tokens_per_s", r.decode_tokens_per_s},
          {"reasons", r.reasons}};
}

void print_recommendation(const models::Recommendation& r) {
  std::printf("recommended for this machine: --device %s --ctx %d --kv %s (%d sequences, %d tokens per step)%s\n",
              r.config.device.c_str(), r.plan.context_length, to_string(r.config.kv_precision), r.config.max_sequences,
              r.config.max_batch_tokens, r.fits ? "" : ": does not fit");
  for (const std::string& l : r.reasons) std::printf("  because: %s\n", l.c_str());
}

void print_table(const models::DevicePlan& dp, std::int32_t block_size, bool fit,
                 const std::vector<models::FitSuggestion>& suggestions, const std::vector<std::string>& lines) {
  const models::RunPlan& p = dp.plan;
  std::printf("model      %s (%s, %s)\n", dp.path.string().c_str(), p.weight_format.c_str(), p.architecture.c_str());
  std::printf("device     %s (%s)%s%s\n", dp.device.c_str(), dp.device_name.c_str(), dp.reason.empty() ? "" : ": ",
              dp.reason.c_str());
  std::printf("context    %d tokens\n", p.context_length);
  std::printf("weights    %s\n", size_text(p.weights_bytes).c_str());
  std::printf("KV cache   %s (%d blocks; %s per token)\n", size_text(p.kv_bytes).c_str(), p.kv_blocks,
              size_text(p.kv_block_bytes / static_cast<std::size_t>(block_size)).c_str());
  std::printf("workspace  %s\n", size_text(p.workspace_bytes).c_str());
  std::printf("total      %s of %s free: %s\n", size_text(p.total_bytes()).c_str(), size_text(dp.free_bytes).c_str(),
              fit ? "fits" : "does not fit");
  for (const models::FitSuggestion& s : suggestions) {
    std::printf("  would fit with %s (%s): %s\n", s.option.c_str(), s.why.c_str(), size_text(s.total_bytes).c_str());
  }
  if (!fit && suggestions.empty()) std::printf("  no single change makes it fit\n");
  for (const std::string& l : lines) std::printf("why: %s\n", l.c_str());
}

void run_estimate(const EstimateOptions& opt) {
  const models::RunConfig config = opt.setup.run_config();
  const models::DevicePlan dp = unwrap(models::plan_device(opt.setup.model, config));
  const std::unique_ptr<gguf::GgufFile> file = unwrap(gguf::GgufFile::open(dp.path));
  const ModelHyperParams hp = unwrap(models::read_hparams(*file));
  const bool fit = fits(dp.plan, dp.free_bytes);
  const std::vector<models::FitSuggestion> suggestions = models::suggest_fits(*file, config, dp);
  const std::vector<std::string> lines = opt.explain ? explain(hp, config, dp) : std::vector<std::string>{};
  std::optional<models::Recommendation> recommended;
  if (opt.explain) recommended = unwrap(models::recommend(*file, models::this_machine(true), config));
  if (!opt.json) {
    print_table(dp, config.kv_block_size, fit, suggestions, lines);
    if (recommended) print_recommendation(*recommended);
    return;
  }
  const models::RunPlan& p = dp.plan;
  nlohmann::json j = {{"model", dp.path.string()},
                      {"architecture", p.architecture},
                      {"weight_format", p.weight_format},
                      {"device", dp.device},
                      {"device_name", dp.device_name},
                      {"device_reason", dp.reason},
                      {"context_length", p.context_length},
                      {"kv_precision", to_string(config.kv_precision)},
                      {"kv_blocks", p.kv_blocks},
                      {"weights_bytes", p.weights_bytes},
                      {"kv_bytes", p.kv_bytes},
                      {"kv_bytes_per_token", p.kv_block_bytes / static_cast<std::size_t>(config.kv_block_size)},
                      {"workspace_bytes", p.workspace_bytes},
                      {"total_bytes", p.total_bytes()},
                      {"free_bytes", dp.free_bytes},
                      {"fits", fit},
                      {"suggestions", nlohmann::json::array()}};
  for (const models::FitSuggestion& s : suggestions) j["suggestions"].push_back(suggestion_json(s));
  if (opt.explain) j["explain"] = lines;
  if (recommended) j["recommended"] = recommendation_json(*recommended);
  std::cout << j.dump() << "\n";
}

}  // namespace

void add_estimate_command(CLI::App& app) {
  auto opt = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "estimate", "What a model will take on its device (weights, KV cache, workspace) before loading");
  add_engine_options(*cmd, opt->setup);
  cmd->add_flag("--json", opt->json, "Print the estimate as one JSON object");
  cmd->add_flag("--explain", opt->explain, "Say how the device, context, KV cache and batch limits were chosen");
  cmd->callback([opt] { run_estimate(*opt); });
}

}  // namespace hearth::cli
