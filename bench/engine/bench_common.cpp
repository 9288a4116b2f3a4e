#include "bench_common.h"

#include <cstdio>

#include "models/run_config_cli.h"

namespace hearth::bench {

void fail(const Error& error) {
  throw Failure{error.describe()};
}
void fail(const std::string& message) {
  throw Failure{message};
}

void add_model_args(CLI::App& cmd, ModelArgs& args) {
  cmd.add_option("MODEL", args.model, "GGUF path or catalog name")->required();
  models::add_run_config_options(cmd, args.config, args.flags);
  cmd.add_flag("--json", args.json, "Print the results as JSON");
}

models::RunConfig ModelArgs::run_config() const {
  Result<models::RunConfig> c = models::apply_flags(config, flags);
  if (!c) fail(c.error());
  return *c;
}

std::unique_ptr<Engine> open_engine(const ModelArgs& args, const models::RunConfig& config) {
  Result<models::OpenedEngine> opened = models::open_engine(args.model, config);
  if (!opened) fail(opened.error());
  const ModelRunInfo& run = opened->engine->run_info();
  std::fprintf(stderr, "[%s on %s (%s), KV %s%s%s]\n", run.weight_format.c_str(), run.device.c_str(),
               run.device_name.c_str(), to_string(run.kv_precision), run.device_reason.empty() ? "" : "; ",
               run.device_reason.c_str());
  return std::move(opened->engine);
}

void WaitingSink::on_text(const TextEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!first_) first_ = event.time;
  last_ = event.time;
}

void WaitingSink::on_finish(const FinishEvent& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finish_ = event;
  }
  cv_.notify_all();
}

FinishEvent WaitingSink::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return finish_.has_value(); });
  return *finish_;
}

Clock::time_point WaitingSink::first_token() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_.value_or(Clock::time_point{});
}

Clock::time_point WaitingSink::last_token() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_.value_or(Clock::time_point{});
}

std::vector<FinishEvent> run_requests(Engine& engine, const std::vector<Request>& requests,
                                      std::vector<std::shared_ptr<WaitingSink>>* sinks) {
  std::vector<std::shared_ptr<WaitingSink>> local;
  for (const Request& r : requests) {
    local.push_back(std::make_shared<WaitingSink>());
    engine.submit(r, local.back());
  }
  std::vector<FinishEvent> out;
  for (const auto& s : local) {
    out.push_back(s->wait());
    if (out.back().reason == FinishReason::kError) fail(*out.back().error);
  }
  if (sinks) *sinks = std::move(local);
  return out;
}

}  // namespace hearth::bench
