#include "bench_common.h"

#include "engine/model/model.h"
#include "models/catalog.h"
#include "models/loader.h"

namespace hearth::bench {

void fail(const Error& error) {
  throw Failure{error.describe()};
}
void fail(const std::string& message) {
  throw Failure{message};
}

void add_model_args(CLI::App& cmd, ModelArgs& args) {
  cmd.add_option("MODEL", args.model, "GGUF path or catalog name")->required();
  cmd.add_option("--threads", args.threads, "CPU threads for the forward pass")->capture_default_str();
  cmd.add_flag("--json", args.json, "Print the results as JSON");
  cmd.add_flag("--q8-activations", args.q8_activations, "Plain 8-bit activation blocks (no outlier refinement)");
}

std::unique_ptr<Engine> open_engine(const ModelArgs& args, const EngineOptions& options) {
  Result<std::filesystem::path> path = models::resolve_model(args.model);
  if (!path) fail(path.error());
  models::LoadOptions load;
  load.n_threads = args.threads;
  load.refine_activations = !args.q8_activations;
  Result<ModelBundle> bundle = models::load_model(*path, load);
  if (!bundle) fail(bundle.error());
  Result<std::unique_ptr<Engine>> engine = Engine::create(std::move(bundle).value(), options);
  if (!engine) fail(engine.error());
  return std::move(engine).value();
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
