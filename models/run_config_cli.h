// The command-line spelling of a RunConfig, one for every program that takes
// one (hearth-cli, hearth-server, hearth-bench), so an option means the same
// everywhere. Header-only: only the programs that parse a command line need
// CLI11, not the libraries that link hearth_models.
#pragma once

#include <CLI/CLI.hpp>

#include "models/run_config.h"

namespace hearth::models {

// Registers --threads, --device, --kv, --kv-fp8, --vram-budget, --quant and --q8-activations.
inline void add_run_config_options(CLI::App& cmd, RunConfig& config, EngineFlags& flags) {
  cmd.add_option("--threads", config.threads, "CPU threads (0: every core)")->capture_default_str();
  cmd.add_option("--device", config.device,
                 "cpu, cuda, cuda:N, or auto (CUDA when a GPU is usable and the model fits it)")
      ->capture_default_str();
  cmd.add_option("--kv", flags.kv, "KV cache precision: f16, q8_0 (CPU) or fp8 (CUDA)")->capture_default_str();
  cmd.add_flag("--kv-fp8", flags.kv_fp8, "The same as --kv fp8");
  cmd.add_option("--vram-budget", flags.vram_budget_mib,
                 "CUDA: MiB of GPU memory the model may hold (weights, KV cache, workspace); 0: all that is free. "
                 "With --device auto, a model over it runs on the CPU")
      ->capture_default_str();
  cmd.add_option("--quant", config.quant,
                 "Convert the weights at load time to TYPE (Q8_0, Q6_K, Q5_1, Q5_0, Q5_K, Q4_1, Q4_0, Q4_K, F16, BF16, "
                 "F32); only to a format coarser than the file's");
  cmd.add_flag("--q8-activations", flags.q8_activations,
               "CPU: plain 8-bit activation blocks, as llama.cpp (faster; no refinement of blocks with an outlier)");
}

}  // namespace hearth::models
