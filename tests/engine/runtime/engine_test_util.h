// Test plumbing for the Engine: a Sink that records events and lets a test
// wait for the finish (condition variable with a timeout, never a sleep), and
// helpers that run requests alone or together.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/engine_impl.h"
#include "hearth/engine.h"

namespace hearth::testing {

class RecordingSink final : public Sink {
 public:
  // Runs on the engine thread for each text event (e.g. to cancel).
  std::function<void(const TextEvent&, int index)> on_text_hook;

  void on_text(const TextEvent& event) override;
  void on_finish(const FinishEvent& event) override;

  // The finish event; fails the test when none comes within the timeout.
  FinishEvent wait(std::chrono::seconds timeout = std::chrono::seconds(120));
  std::string text() const;
  std::vector<TextEvent> events() const;
  int finish_count() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TextEvent> events_;
  std::optional<FinishEvent> finish_;
  int finishes_ = 0;
};

struct Outcome {
  FinishEvent finish;
  std::string text;
};

// `device` as models::LoadOptions::device ("cpu", "cuda:0", ...).
std::unique_ptr<Engine> make_engine(const std::filesystem::path& model, const EngineOptions& options, int threads = 2,
                                    const std::string& device = "cpu");
// Submits every request at once and waits for all of them.
std::vector<Outcome> run_together(Engine& engine, const std::vector<Request>& requests);
// One request at a time.
std::vector<Outcome> run_alone(Engine& engine, const std::vector<Request>& requests);

// A greedy request over token ids.
Request greedy_tokens(std::vector<std::int32_t> prompt, std::int32_t max_tokens);

// Checks the KV pool at idle: invariants hold, no block is used, no sequence is left.
void expect_idle_kv(Engine& engine);

std::filesystem::path default_model_path();  // FAILS the test (not skip) when missing
// A tiny synthetic llama model (fast), written once per process.
std::filesystem::path tiny_model_path();
// 16 layers x 8 KV heads x 64: 512 KiB of f16 K/V per 16-token block, so KV
// blocks dominate a few MiB of workspace (the VRAM budget tests).
std::filesystem::path kv_heavy_model_path();

}  // namespace hearth::testing
