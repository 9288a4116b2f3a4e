// Turns a GGUF file into the engine's ModelBundle: the architecture's Model,
// the tokenizer vocabulary and the chat template. The one place that picks an
// architecture by name (the engine never does).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "hearth/engine.h"
#include "hearth/result.h"
#include "hearth/run_info.h"

namespace hearth::models {

struct LoadOptions {
  int n_threads = 0;           // CPU threads for the forward pass; 0: every core
  std::string device = "cpu";  // "cpu", "cuda" (device 0), "cuda:N", or "auto": CUDA when a GPU is usable
                               // and the weights fit it, else the CPU
  // kF16 everywhere; kFp8E4M3 on CUDA only (the CPU refuses it, "auto" on the
  // CPU falls back to f16 and says so); kQ8_0 is the CPU's (under "auto" CUDA falls back to f16).
  KvPrecision kv_precision = KvPrecision::kF16;
  // CPU only: refine 8-bit activation blocks that hold an outlier
  // (LlamaOptions::refine_activations); false gives llama.cpp's arithmetic.
  bool refine_activations = true;
  // CUDA only: bytes of GPU memory the model may hold (weights, KV pool,
  // workspace); 0: whatever the device has free. Weights over it fail the
  // load with kOutOfMemory ("auto": the model runs on the CPU instead).
  std::size_t vram_budget_bytes = 0;
  // "" the file's own weight format; else the type every matrix is converted
  // to at load time (models/weight_convert.h), on n_threads threads.
  std::string quant{};
};

// Where a model runs: the CPU, or CUDA device `cuda_device`.
struct DeviceChoice {
  bool cuda = false;
  int cuda_device = 0;
};

// Parses LoadOptions::device and resolves "auto". kInvalidArgument for an
// unknown spelling; kUnsupported "built without CUDA" for cuda on a build
// without it ("auto" then picks the CPU).
Result<DeviceChoice> choose_device(std::string_view device);
// The spelling only ("cpu", "cuda", "cuda:N"; "auto" as the CPU), whatever
// the build runs: a plan for a GPU is sized on a CPU-only build too.
Result<DeviceChoice> parse_device(std::string_view device);

// kNotFound / kIo for the file, kOutOfMemory when the weights do not fit the GPU, kCorruptFile for its contents,
// kUnsupported for an architecture, tensor type or KV precision Hearth does not run.
// The bundle's `run` says where the model ended up (device, KV precision, weight format).
Result<ModelBundle> load_model(const std::filesystem::path& path, const LoadOptions& options);

}  // namespace hearth::models
