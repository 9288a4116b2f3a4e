// What generate and chat share: starting an Engine on a model, and a Sink that
// streams text to stdout and lets the caller wait for the end of a request.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "hearth/engine.h"
#include "models/run_config.h"

namespace hearth::cli {

// The command line's side of models::RunConfig: the options that spell it
// (sizes in MiB, flags) and the model to open.
struct EngineSetup {
  std::string model;          // path or catalog name
  models::RunConfig config;   // --threads, --ctx, --device (default "auto")
  models::EngineFlags flags;  // --kv, --kv-fp8, --vram-budget, --q8-activations

  // The configuration with the options folded in; fails the command on a bad --kv.
  models::RunConfig run_config() const;
};

// Registers MODEL, --threads, --ctx, --device, --kv, --kv-fp8, --vram-budget and --q8-activations.
void add_engine_options(CLI::App& cmd, EngineSetup& setup);
// The same without MODEL and --ctx (commands that run the model without an engine).
void add_run_options(CLI::App& cmd, EngineSetup& setup);
// Registers --temp, --top-k, --top-p, --min-p, --repeat-penalty, --seed.
void add_sampling_options(CLI::App& cmd, SamplingParams& sampling);

// models::open_engine with the setup's configuration; fails the command on
// error. Says on stderr where the model runs (and, for "auto", why).
std::unique_ptr<Engine> start_engine(const EngineSetup& setup);

// Streams a request's text to `out` (when not null) and keeps it.
class StreamingSink final : public Sink {
 public:
  explicit StreamingSink(std::FILE* out) : out_(out) {}
  void on_text(const TextEvent& event) override;
  void on_finish(const FinishEvent& event) override;
  // Blocks until on_finish has run; returns its event.
  FinishEvent wait();
  std::string text() const;

 private:
  std::FILE* out_;
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  std::string text_;
  std::optional<FinishEvent> finish_;
};

}  // namespace hearth::cli
