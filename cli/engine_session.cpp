#include "cli/engine_session.h"

#include "cli/cli_common.h"
#include "models/catalog.h"
#include "models/loader.h"

namespace hearth::cli {

std::unique_ptr<Engine> start_engine(const EngineSetup& setup) {
  const auto path = unwrap(models::resolve_model(setup.model));
  models::LoadOptions load;
  load.n_threads = setup.threads;
  load.device = setup.device;
  load.kv_fp8 = setup.kv_fp8;
  load.vram_budget_bytes = setup.vram_budget_mib << 20;
  load.refine_activations = !setup.q8_activations;
  ModelBundle bundle = unwrap(models::load_model(path, load));
  EngineOptions options;
  options.context_length = setup.context;
  return unwrap(Engine::create(std::move(bundle), options));
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

void add_engine_options(CLI::App& cmd, EngineSetup& setup) {
  cmd.add_option("model", setup.model, "Path to a .gguf file or a catalog name")->required();
  cmd.add_option("--threads", setup.threads, "CPU threads (0: every core)")->capture_default_str();
  cmd.add_option("--ctx", setup.context, "Context length in tokens (0: the engine's default)");
  cmd.add_option("--device", setup.device, "cpu, cuda, cuda:N, or auto (CUDA when a GPU is usable)")
      ->capture_default_str();
  cmd.add_flag("--kv-fp8", setup.kv_fp8, "CUDA: keep the KV cache in FP8 (E4M3) instead of F16");
  cmd.add_option("--vram-budget", setup.vram_budget_mib,
                 "CUDA: MiB of GPU memory the model may hold (weights, KV cache, workspace); 0: all that is free. "
                 "With --device auto, weights over it run on the CPU")
      ->capture_default_str();
  cmd.add_flag("--q8-activations", setup.q8_activations,
               "CPU: plain 8-bit activation blocks, as llama.cpp (faster; no refinement of blocks with an outlier)");
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
