// How a model runs, in one place: the device, the KV cache's precision, the
// weights' format, the context, the memory budgets, threads and batch limits.
// The app (from its settings), hearth-cli and hearth-bench (from their
// options) fill a RunConfig; plan() says what it will cost before anything is
// allocated; open_engine() resolves the model, loads it and starts the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "hearth/engine.h"
#include "hearth/result.h"
#include "hearth/run_info.h"
#include "models/loader.h"

namespace hearth::models {

struct RunConfig {
  std::string device = "auto";  // "cpu", "cuda" (device 0), "cuda:N", or "auto" (CUDA when a GPU is usable and
                                // the model fits it, else the CPU)
  KvPrecision kv_precision = KvPrecision::kF16;  // q8_0: the CPU's; fp8: CUDA's
  // The weights' format: "" the file's own, else a type the matrices are
  // converted to at load time (models/weight_convert.h: "Q4_0", "Q8_0", ...).
  std::string quant{};
  std::int32_t context_length = 0;      // tokens per sequence; 0: min(the model's trained context, 8192)
  std::size_t memory_budget_bytes = 0;  // CUDA: weights + KV pool + workspace; 0: what the device has free
  std::size_t kv_budget_bytes = 0;      // the KV pool; 0: room for two full contexts
  int threads = 0;                      // CPU forward-pass threads; 0: every core
  bool refine_activations = true;       // CPU: LoadOptions::refine_activations
  std::int32_t max_batch_tokens = 0;    // tokens per engine step (prefill chunks + decodes); 0: default_batch_tokens
                                        // of the device
  std::int32_t max_sequences = 16;      // sequences per engine step
  std::int32_t kv_block_size = 16;      // tokens per KV block
  bool prefix_cache = true;
};

// kInvalidArgument naming the field (a device spelling, a negative size...).
Result<void> validate(const RunConfig& config);

// How front ends (hearth-cli, hearth-bench) spell the parts of a RunConfig
// that are not plain fields: the KV precision by name, sizes in MiB, flags.
struct EngineFlags {
  std::string kv = "f16";           // --kv f16|q8_0|fp8
  bool kv_fp8 = false;              // --kv-fp8: the older spelling of --kv fp8
  std::size_t vram_budget_mib = 0;  // CUDA: GPU memory the model may hold, MiB; 0: all that is free
  bool q8_activations = false;      // CPU: plain 8-bit activation blocks (no outlier refinement)
};
// Tokens per engine step where a RunConfig leaves max_batch_tokens at 0: 512
// on a GPU (a prompt's products and attention in half as many steps, each
// weight matrix read and dequantized half as often: docs/perf-notes.md v16),
// 256 on the CPU. `device`: a concrete device ("cpu", "cuda:N").
std::int32_t default_batch_tokens(std::string_view device);
// `config` with what it leaves to the device filled in (max_batch_tokens).
RunConfig for_device(RunConfig config, std::string_view device);

// `base` with `flags` folded in; kInvalidArgument for a KV precision name it does not know.
Result<RunConfig> apply_flags(RunConfig base, const EngineFlags& flags);
// The loader's and the engine's halves of a configuration. `device` is the
// concrete device open_engine() chose ("auto" resolved).
LoadOptions load_options(const RunConfig& config, std::string_view device);
EngineOptions engine_options(const RunConfig& config, std::string_view device);

// Room the CUDA runtime, cuBLAS and fragmentation take beyond what plan()
// counts, so neither "auto" nor the recommendation picks a GPU a model only just fits.
inline constexpr std::size_t kCudaHeadroomBytes = std::size_t{512} << 20;

// "1.5 GiB" at 1 GiB and over, else "340 MiB": the sizes of device reasons.
std::string bytes_text(std::size_t bytes);

// What a model will take on `device`, in bytes, from the GGUF's tensors and
// hyper-parameters alone (nothing is allocated).
struct RunPlan {
  std::string architecture;         // general.architecture
  std::string weight_format;        // weight_format_of(): "Q4_1", "Q4_K_M", ...
  std::int32_t context_length = 0;  // tokens per sequence, as the engine will size it
  std::int32_t kv_blocks = 0;       // KV pool blocks of kv_block_size tokens
  std::size_t kv_block_bytes = 0;   // K and V of one block over all layers
  std::size_t weights_bytes = 0;    // every tensor's data (mapped on the CPU, uploaded on CUDA)
  std::size_t kv_bytes = 0;         // kv_blocks * kv_block_bytes
  std::size_t workspace_bytes = 0;  // activations of a max_batch_tokens step (+ logits rows on CUDA)
  std::size_t total_bytes() const { return weights_bytes + kv_bytes + workspace_bytes; }
};
// `device` is "cpu" or "cuda:N" (the KV precision is the one that device runs).
Result<RunPlan> plan(const gguf::GgufFile& file, const RunConfig& config, std::string_view device);
// The same for a path; "auto" is planned for CUDA when a GPU is present, else the CPU.
Result<RunPlan> plan(const std::filesystem::path& path, const RunConfig& config);

// Where open_engine() would run a model and what it would take there, decided
// the same way (for "auto": the plan against the GPU's free memory), without
// loading anything: `hearth-cli estimate` and the app's pre-load check.
struct DevicePlan {
  std::filesystem::path path;  // the resolved model file
  std::string device;          // "cpu" or "cuda:N"
  std::string device_name;
  std::string reason;          // why that device ("auto: ..."); empty when the configuration named it
  std::size_t free_bytes = 0;  // the device's free memory now (CPU: MemAvailable)
  std::size_t total_bytes = 0;
  RunPlan plan;
};
Result<DevicePlan> plan_device(std::string_view path_or_name, const RunConfig& config);

struct OpenedEngine {
  std::unique_ptr<Engine> engine;  // engine->run_info(): the device, why, KV precision, weight format
  std::filesystem::path path;      // the resolved model file
  RunPlan plan;                    // what was planned for the device it runs on
};
// Resolves `path_or_name` (a .gguf path or a catalog name), chooses the device
// ("auto": plan() against each GPU's free memory and the budget), loads the
// model and creates the engine. Errors name the step that failed.
Result<OpenedEngine> open_engine(std::string_view path_or_name, const RunConfig& config);

}  // namespace hearth::models
