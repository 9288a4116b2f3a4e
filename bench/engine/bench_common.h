// Shared plumbing of hearth-bench's subcommands: each command file exposes one
// add_*_command function that registers its options and its run callback.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hearth/engine.h"
#include "models/run_config.h"

namespace hearth::bench {

// Thrown out of a command's callback to end the program with a one-line reason
// on stderr and a non-zero exit code; main() is the only place that catches it.
struct Failure {
  std::string message;
  int exit_code = 1;
};
[[noreturn]] void fail(const Error& error);
[[noreturn]] void fail(const std::string& message);

// The model and how it runs (models::RunConfig): --threads, --device, --kv,
// --kv-fp8, --vram-budget, --q8-activations, as hearth-cli spells them. Each
// command sets its own context and batch limits on top.
struct ModelArgs {
  std::string model;  // a path or a catalog name
  models::RunConfig config = [] {
    models::RunConfig c;
    c.threads = 2;  // the development machines' cores; --threads to change
    return c;
  }();
  models::EngineFlags flags;  // --kv, --kv-fp8, --vram-budget, --q8-activations
  bool json = false;

  // The configuration with the options folded in (fails the command on a bad --kv).
  models::RunConfig run_config() const;
};
void add_model_args(CLI::App& cmd, ModelArgs& args);

// models::open_engine (fails the command on error); prints where it runs on stderr.
std::unique_ptr<Engine> open_engine(const ModelArgs& args, const models::RunConfig& config);

// A sink that keeps the first and last token times and waits for the finish.
class WaitingSink final : public Sink {
 public:
  void on_text(const TextEvent& event) override;
  void on_finish(const FinishEvent& event) override;
  FinishEvent wait();
  Clock::time_point first_token() const;
  Clock::time_point last_token() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Clock::time_point> first_, last_;
  std::optional<FinishEvent> finish_;
};

// Submits all requests at once and waits for each; a request that ends in an
// error fails the command.
std::vector<FinishEvent> run_requests(Engine& engine, const std::vector<Request>& requests,
                                      std::vector<std::shared_ptr<WaitingSink>>* sinks = nullptr);

void add_multiturn_command(CLI::App& app);
void add_concurrent_command(CLI::App& app);
void add_prefill_command(CLI::App& app);

}  // namespace hearth::bench
