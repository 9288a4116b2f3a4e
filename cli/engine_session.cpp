#include "cli/engine_session.h"

#include "cli/cli_common.h"
#include "models/run_config_cli.h"

namespace hearth::cli {

models::RunConfig EngineSetup::run_config() const {
  return unwrap(models::apply_flags(config, flags));
}

std::unique_ptr<Engine> start_engine(const EngineSetup& setup) {
  models::OpenedEngine opened = unwrap(models::open_engine(setup.model, setup.run_config()));
  const ModelRunInfo& run = opened.engine->run_info();
  std::fprintf(stderr, "[%s on %s (%s), KV %s%s%s; chat format: %s]\n", run.weight_format.c_str(), run.device.c_str(),
               run.device_name.c_str(), to_string(run.kv_precision), run.device_reason.empty() ? "" : "; ",
               run.device_reason.c_str(), run.chat_format.c_str());
  return std::move(opened.engine);
}

void StreamingSink::on_text(const TextEvent& event) {
  if (out_) {
    std::fwrite(event.text.data(), 1, event.text.size(), out_);
    std::fflush(out_);
  }
  std::lock_guard lock(mutex_);
  text_ += event.text;
}

void StreamingSink::on_finish(const FinishEvent& event) {
  std::lock_guard lock(mutex_);
  finish_ = event;
  done_cv_.notify_all();
}

void add_sampling_options(CLI::App& cmd, SamplingParams& s) {
  cmd.add_option("--temp", s.temperature, "Temperature (0: greedy)")->capture_default_str();
  cmd.add_option("--top-k", s.top_k, "Top-k (0: off)")->capture_default_str();
  cmd.add_option("--top-p", s.top_p, "Top-p (1: off)")->capture_default_str();
  cmd.add_option("--min-p", s.min_p, "Min-p (0: off)")->capture_default_str();
  cmd.add_option("--repeat-penalty", s.repeat_penalty, "Repetition penalty (1: off)")->capture_default_str();
  cmd.add_option("--seed", s.seed, "Random seed")->capture_default_str();
}

void add_run_options(CLI::App& cmd, EngineSetup& setup) {
  models::add_run_config_options(cmd, setup.config, setup.flags);
}

void add_engine_options(CLI::App& cmd, EngineSetup& setup) {
  cmd.add_option("model", setup.model, "Path to a .gguf file or a catalog name")->required();
  cmd.add_option("--ctx", setup.config.context_length, "Context length in tokens (0: the engine's default)");
  add_run_options(cmd, setup);
}

FinishEvent StreamingSink::wait() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return finish_.has_value(); });
  return *finish_;
}

std::string StreamingSink::text() const {
  std::lock_guard lock(mutex_);
  return text_;
}

}  // namespace hearth::cli
