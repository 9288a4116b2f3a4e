// The llama family on an NVIDIA GPU: LlamaModel's one forward pass over the
// CUDA backend (engine/backend/cuda/cuda_backend.h), with the GPU's own
// options and accessors. Every weight tensor is uploaded once at load; the
// file is released once they are on the device.
#pragma once

#include <cstddef>
#include <memory>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_context.h"
#include "engine/gguf/gguf_file.h"
#include "models/llama/llama_model.h"

namespace hearth::models {

struct LlamaCudaOptions {
  int device = 0;                                // CUDA device index
  KvPrecision kv_precision = KvPrecision::kF16;  // f16 or FP8 E4M3 (scale 1)
  // Bytes of GPU memory the model may hold (weights + KV pool + workspace);
  // 0: whatever the device has free.
  std::size_t vram_budget_bytes = 0;
  // Layer times (last_layer_ms) on one forward step in this many
  // (CudaBackendOptions::layer_timing_interval); 0: never.
  int layer_timing_interval = cuda::kDefaultLayerTimingInterval;
  // Decode steps replayed from CUDA graphs (CudaBackendOptions::cuda_graphs).
  bool cuda_graphs = true;
};

class LlamaCudaModel final : public LlamaModel {
 public:
  // kOutOfMemory, before anything is uploaded, when the weights need more than
  // the VRAM budget or the device's free memory (naming both byte counts), and
  // naming the tensor when an upload still fails; kUnsupported for a tensor
  // type or shape the CUDA kernels do not take. The budget also bounds the KV
  // pool (allocate_kv) and each step's workspace (forward: that step fails
  // with kOutOfMemory, the model stays usable for smaller ones).
  static Result<std::unique_ptr<LlamaCudaModel>> load(std::unique_ptr<gguf::GgufFile> file,
                                                      const LlamaCudaOptions& options);

  // The device's free and total memory (cudaMemGetInfo), for the VRAM panel.
  Result<cuda::DeviceMemoryInfo> device_memory() const { return cuda_->context().memory_info(); }
  const cuda::CudaContext& context() const { return cuda_->context(); }
  // Decode steps run from a CUDA graph so far.
  std::uint64_t cuda_graph_launches() const { return cuda_->graph_launches(); }

 private:
  LlamaCudaModel(std::unique_ptr<cuda::CudaBackend> ops, const cuda::CudaBackend* cuda);

  const cuda::CudaBackend* cuda_;  // the backend LlamaModel owns
};

}  // namespace hearth::models
