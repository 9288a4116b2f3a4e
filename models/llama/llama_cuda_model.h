// The llama family's forward pass on an NVIDIA GPU (llama, SmolLM2, qwen2):
// the same Model interface and the same numbers as LlamaModel (CPU), computed
// by the kernels of kernels/cuda.
//
// Every weight tensor is uploaded once at load, in its GGUF block layout; the
// paged KV pool lives on the device ([layer][block][token][kv_head][head_dim],
// f16 or fp8 E4M3); a step's token ids, positions, KV slots and block tables
// are copied to the device, the layers run on one stream, and the logits of
// the rows that want them come back to the host at the end of forward().
// Steps of <= 8 tokens use the fused-dequant GEMV; larger ones dequantize each
// matrix to f16 and multiply with cuBLAS.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/device_buffer.h"
#include "engine/backend/cuda/layer_timer.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/paged_kv.h"
#include "models/llama/llama_weights.h"

namespace hearth::models {

struct LlamaCudaOptions {
  int device = 0;       // CUDA device index
  bool kv_fp8 = false;  // KV cache in FP8 E4M3 (scale 1) instead of f16
  // Bytes of GPU memory the model may hold (weights + KV pool + workspace);
  // 0: whatever the device has free.
  std::size_t vram_budget_bytes = 0;
  // Layer times (last_layer_ms) on one forward step in this many. 1 (every
  // step), so the per-layer means cover the same steps as the forward mean:
  // the events cost 0.95% of a default-model decode step on the H200
  // (CudaModel.LayerTimingCost). 0: never.
  int layer_timing_interval = 1;
};

class LlamaCudaModel final : public Model {
 public:
  // Uploads the weights; the file is released once they are on the device.
  // kOutOfMemory, before anything is uploaded, when the weights need more than
  // the VRAM budget or the device's free memory (naming both byte counts), and
  // naming the tensor when an upload still fails; kUnsupported for a tensor
  // type or shape the CUDA kernels do not take.
  static Result<std::unique_ptr<LlamaCudaModel>> load(std::unique_ptr<gguf::GgufFile> file,
                                                      const LlamaCudaOptions& options);
  ~LlamaCudaModel() override;

  const ModelHyperParams& hparams() const override { return hp_; }
  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  // kOutOfMemory when weights + workspace + the pool exceed the VRAM budget
  // (the old pool is freed first) or cudaMalloc fails.
  Result<void> allocate_kv(const KvLayout& layout) override;
  // kOutOfMemory when the step's workspace does not fit the VRAM budget or
  // cannot be allocated: that step fails, the model stays usable for smaller ones.
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) override;
  // device_free / device_total from cudaMemGetInfo, refreshed at most every
  // kDeviceInfoRefresh (see memory() in the .cpp for the cost).
  ModelMemory memory() const override;
  std::span<const double> last_layer_ms() const override { return layer_ms_; }

  // The device's free and total memory (cudaMemGetInfo), for the VRAM panel.
  Result<cuda::DeviceMemoryInfo> device_memory() const;
  const cuda::CudaContext& context() const { return *ctx_; }

 private:
  using Matrix = kernels::cuda::DeviceMatrix;
  struct LayerWeights {
    const float* attn_norm = nullptr;  // [n_embd]
    Matrix wq, wk, wv, wo;             // as LlamaLayerWeights
    const float* bq = nullptr;         // qwen2: [n_head*hd]; null otherwise
    const float* bk = nullptr;         // [n_kv*hd]
    const float* bv = nullptr;         // [n_kv*hd]
    const float* ffn_norm = nullptr;   // [n_embd]
    Matrix w_gate, w_up, w_down;
  };
  // Per-step device scratch, grown on demand (capacity in tokens / bytes).
  struct Workspace {
    std::int64_t tokens = 0;                 // rows the f32 buffers hold
    cuda::DeviceBuffer x, h, q, k, v, attn;  // [tokens][width] f32
    cuda::DeviceBuffer gate, up;             // [tokens][n_ff] f32
    cuda::DeviceBuffer logits;               // [tokens][n_vocab] f32
    cuda::DeviceBuffer ints;                 // step inputs, see StepInputs
    cuda::DeviceBuffer gemm;                 // matmul_f16 scratch (bytes)
    cuda::DeviceBuffer attn_split;           // paged_attention split-KV scratch (bytes)
    std::size_t bytes() const;
  };
  // A step's sizes. ws_.ints holds, in this order, token ids, positions, KV
  // slot ids, the block-table row of each token ([n_tokens] int32 each), then
  // the block tables [n_seqs][max_blocks] (rows padded with block 0, never read
  // past a sequence's own positions).
  struct StepSizes {
    std::int64_t n_tokens = 0;
    std::int64_t n_logit_rows = 0;  // rows of logits the step returns
    std::size_t n_ints = 0;         // int32s in ws_.ints
    int max_blocks = 0;             // block-table row length
    int max_context = 0;            // > every position of the step
    int split_len = 0;              // paged attention chunk (positions)
    std::size_t gemm_bytes = 0;     // matmul_f16 scratch
    std::size_t attn_bytes = 0;     // split-KV scratch
  };

  LlamaCudaModel(ModelHyperParams hp, std::unique_ptr<cuda::CudaContext> ctx, const LlamaCudaOptions& options);

  Result<void> upload_weights(const LlamaWeights& w);
  Result<Matrix> upload_matrix(const WeightRef& w);
  Result<const float*> upload_vector(const WeightRef& w);
  Result<void> check_steps(std::span<const SequenceStep> steps, std::size_t logits_size) const;
  StepSizes stage_inputs(std::span<const SequenceStep> steps);
  std::size_t gemm_workspace_bytes(std::int64_t n_tokens, std::int64_t n_logit_rows) const;
  // Makes the next memory() ask the driver (after an allocation or a free).
  void refresh_device_info();
  // kOutOfMemory naming `what` when `need` bytes beside `held` exceed the VRAM budget.
  Result<void> fits_budget(std::size_t held, std::size_t need, const std::string& what) const;
  // The workspace's total bytes once reserve(sz) has grown it.
  std::size_t workspace_bytes_for(const StepSizes& sz) const;
  Result<void> reserve(const StepSizes& sz);
  Result<void> run_layers(const StepSizes& sz, bool timed);
  Result<void> attention_layer(std::uint32_t layer, const StepSizes& sz);
  Result<void> ffn_layer(std::uint32_t layer, std::int64_t n);
  Result<void> output_logits(std::span<const SequenceStep> steps);
  // y = W x (+ bias); with `accumulate`, y += W x (the residual stream), using
  // ws_.h as scratch on the cuBLAS path (W then has n_embd rows).
  Result<void> linear(const Matrix& w, const float* x, std::int64_t n, float* y, const float* bias = nullptr,
                      bool accumulate = false);
  kernels::cuda::PagedKvCache layer_cache(std::uint32_t layer) const;

  ModelHyperParams hp_;
  std::unique_ptr<cuda::CudaContext> ctx_;  // destroyed last (declared first)
  bool kv_fp8_ = false;
  std::size_t vram_budget_ = 0;  // bytes; 0: no budget beyond what cudaMalloc gives
  int layer_timing_interval_ = 0;
  std::vector<cuda::DeviceBuffer> weight_buffers_;
  std::size_t weight_bytes_ = 0;
  Matrix token_embd_, output_;
  const float* output_norm_ = nullptr;  // [n_embd]
  std::vector<LayerWeights> layers_;
  KvLayout kv_layout_;
  cuda::DeviceBuffer k_pool_, v_pool_;  // [layer][block][token][kv_head][head_dim], f16 or fp8
  Workspace ws_;
  std::vector<std::int32_t> host_ints_;  // staging for ws_.ints (see StepSizes)
  cuda::LayerTimer layer_timer_;
  std::vector<double> layer_ms_;  // [n_layer] ms of the last forward when it was timed; else empty
  std::uint64_t forward_count_ = 0;
  // memory()'s cached cudaMemGetInfo (memory() is const and may be called from any thread).
  mutable std::mutex device_info_mu_;
  mutable cuda::DeviceMemoryInfo device_info_;
  mutable std::chrono::steady_clock::time_point device_info_time_;
};

}  // namespace hearth::models
