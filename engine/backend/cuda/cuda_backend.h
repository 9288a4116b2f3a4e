// The CUDA implementation of the backend op interface (engine/backend/ops.h),
// over kernels/cuda on one CudaContext (device, stream, cuBLAS handle).
//
// Weights are uploaded once, in their GGUF block layout; the paged KV pool
// lives on the device ([layer][block][token][kv_head][head_dim], f16 or fp8
// E4M3); begin_step copies the step's token ids, positions, KV slots and
// block tables to the device in one transfer, every op is enqueued on the
// stream (no host synchronization until finish_step), and the logits of the
// rows that want them come back at the end. Steps of <= 8 tokens use the
// fused-dequant GEMV (bias and residual fused into it; q/k/v and gate/up as
// one launch each); larger ones dequantize each matrix to f16 and multiply
// with cuBLAS. Decode steps (one token per sequence, <= 8 sequences) are
// captured as CUDA graphs and replayed (step_graph.h).
//
// Memory: the weights, the pool and the step workspace stay inside the VRAM
// budget (0: whatever cudaMalloc gives); an allocation past it is kOutOfMemory
// naming what and the bytes, before anything is freed.
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
#include "engine/backend/cuda/step_graph.h"
#include "engine/backend/ops.h"
#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/paged_kv.h"

namespace hearth::cuda {

// The decode steps timed per layer: one in this many (CudaBackendOptions).
inline constexpr int kDefaultLayerTimingInterval = 8;

struct CudaBackendOptions {
  int device = 0;  // CUDA device index
  // f16, q8_0 (int8 codes with an f16 scale per 32) or FP8 E4M3 (per-layer K
  // and V scales from the first prefill: kernels/fp8.h kv_fp8_scale).
  KvPrecision kv_precision = KvPrecision::kF16;
  // Bytes of GPU memory the model may hold (weights + KV pool + workspace);
  // 0: whatever the device has free.
  std::size_t vram_budget_bytes = 0;
  // Layer times (layer_ms) on one step in this many; 0: never. Inside a
  // decode graph the event nodes serialize it: timing every step cost 3.3%
  // of the 8B decode and 5.5% of the 135M shape's (docs/perf-notes.md v8),
  // so one step in 8 is timed (the per-layer means are then over those
  // steps: EngineStats' step.forward_timed is their forward mean).
  int layer_timing_interval = kDefaultLayerTimingInterval;
  // Decode steps replayed from CUDA graphs (step_graph.h); the environment's
  // HEARTH_CUDA_GRAPH=0 turns them off too (A/B runs). Never changes a result:
  // a replay runs the captured kernels with the same arguments.
  bool cuda_graphs = true;
};

class CudaBackend final : public backend::Ops {
 public:
  // kNotFound when no such device exists.
  static Result<std::unique_ptr<CudaBackend>> create(const CudaBackendOptions& options);
  ~CudaBackend() override;

  Result<void> set_shape(const backend::ModelShape& shape) override;
  // kOutOfMemory when `bytes` exceed the VRAM budget or the device's free memory.
  Result<void> reserve_weights(std::size_t bytes) override;
  Result<backend::Matrix> upload_matrix(const backend::HostTensor& t, backend::MatrixUse use) override;
  Result<backend::Vector> upload_vector(const backend::HostTensor& t) override;

  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  // The old pool is freed first; kOutOfMemory past the budget or when cudaMalloc fails.
  Result<void> allocate_kv(const KvLayout& layout) override;
  bool has_kv() const override { return static_cast<bool>(k_pool_); }
  std::span<const std::int32_t> greedy_tokens() const override {
    return greedy_ready_ ? std::span<const std::int32_t>(greedy_host_) : std::span<const std::int32_t>{};
  }

  void mark_layer(std::uint32_t boundary) override;

  Result<void> write(backend::Activation dst, std::span<const float> src) override;
  Result<void> read(backend::Activation src, std::span<float> dst) override;
  // device_free / device_total from cudaMemGetInfo, refreshed at most every
  // kDeviceInfoRefresh (see memory() in the .cpp for the cost).
  ModelMemory memory() const override;

  const CudaContext& context() const { return *ctx_; }
  // Decode steps run from a CUDA graph so far (captured or replayed).
  std::uint64_t graph_launches() const { return graph_launches_; }

 private:
  using DeviceMatrix = kernels::cuda::DeviceMatrix;
  // Per-step device scratch beyond the activations, grown on demand.
  struct Workspace {
    std::int64_t tokens = 0;                // rows the activation buffers hold
    std::vector<DeviceBuffer> activations;  // [activation][tokens][width] f32
    DeviceBuffer logits;                    // [logit rows][n_vocab] f32
    DeviceBuffer ints;                      // step inputs, see StepSizes
    DeviceBuffer gemm;                      // matmul_f16 scratch (bytes)
    DeviceBuffer attn_split;                // paged_attention split-KV scratch (bytes)
    DeviceBuffer xq;                        // q8_rows' [rows][cols] f32, or mmq's codes + split-K partials
    std::size_t bytes() const;
  };
  // A step's sizes. ws_.ints holds, in this order, token ids, positions, KV
  // slot ids, the block-table row of each token ([n_tokens] int32 each), then
  // the block tables [n_seqs][max_blocks] (rows padded with block 0, never read
  // past a sequence's own positions), then the prompt tiles of the tensor-core
  // attention ([n_tiles] kernels::cuda::PrefillTile) and the rows the split-KV
  // attention takes ([n_split_rows], only when there are tiles too).
  struct StepSizes {
    std::int64_t n_tokens = 0;
    std::int64_t n_logit_rows = 0;  // rows of logits the step returns
    std::size_t n_ints = 0;         // int32s in ws_.ints
    int max_blocks = 0;             // block-table row length
    int max_context = 0;            // > every position of the step
    int split_len = 0;              // paged attention chunk (positions)
    // Sequences with at least kPrefillMinTokens new tokens (and a full tile) attend on the
    // tensor cores (attention_prefill.h) in tiles of consecutive tokens; the
    // other rows through the split-KV kernels (paged_attention.h).
    std::size_t tiles_at = 0;  // ws_.ints offset of the tiles
    int n_tiles = 0;
    std::size_t split_rows_at = 0;  // ws_.ints offset of the split-KV rows (n_tiles > 0)
    int n_split_rows = 0;           // rows the split-KV kernels take
    std::size_t gemm_bytes = 0;     // matmul_f16 scratch
    std::size_t attn_bytes = 0;     // split-KV scratch
    std::size_t xq_bytes = 0;       // q8_rows scratch (multi-token steps, 8-bit activations)
    // One token per sequence, each wanting its logits, at most
    // graph_max_sequences(): max_context is rounded up to
    // StepGraphs::kContextBucket (graphs or not, so a replay and an eager
    // step compute alike).
    bool decode = false;
    // Every row wanting logits is greedy: the step returns their arg-maxes
    // (ws_.ints from argmax_at on, copied to greedy_host_), not the logits.
    bool argmax = false;
    std::size_t argmax_at = 0;
  };
  // The rows of one sequence that want logits: [row, row + count) of the step.
  struct LogitRows {
    std::int64_t row = 0;
    std::int64_t count = 0;
  };

  CudaBackend(std::unique_ptr<CudaContext> ctx, const CudaBackendOptions& options);

  std::string ceilings_key() const override { return "cuda:" + std::to_string(ctx_->device()); }
  DeviceCeilings measure_ceilings() override;
  Result<void> do_begin_step(std::span<const SequenceStep> steps) override;
  Result<void> do_finish_step() override;
  // Profiling (cuda_backend_profile.cpp): events before and after each op on
  // the stream, read after the step's synchronize.
  void profile_op_begin(std::size_t index) override;
  void profile_op_end(std::size_t index) override;
  void profile_step_done(StepProfile& p) override;
  bool op_fused(backend::OpKind kind) const override;
  void profile_record(std::size_t event);

  void do_embed(const backend::Matrix& table, backend::Activation out) override;
  void do_rms_norm(backend::Activation x, const backend::Vector& weight, float eps, backend::Activation out) override;
  void do_head_rms_norm(backend::Activation x, std::int32_t n_heads, const backend::Vector& weight, float eps) override;
  void do_scale(backend::Activation x, float s) override;
  void do_linear(const backend::Matrix& w, backend::Activation x, backend::Activation y,
                 const backend::Vector& bias) override;
  void do_linear_many(backend::Activation x, std::span<const backend::LinearOut> outs) override;
  void do_linear_residual(const backend::Matrix& w, backend::Activation x, backend::Activation residual,
                          backend::Activation scratch) override;
  void do_rope(backend::Activation q, std::int32_t n_q_heads, backend::Activation k, std::int32_t n_k_heads,
               const backend::RopeConfig& c) override;
  void do_store_kv(std::int32_t layer, backend::Activation k, backend::Activation v) override;
  void do_attention(std::int32_t layer, backend::Activation q, backend::Activation out, float scale,
                    std::int32_t window) override;
  void do_glu(backend::GluKind kind, backend::Activation gate, backend::Activation up) override;
  void do_add(backend::Activation x, backend::Activation y) override;
  void do_logits(backend::Activation x, const backend::Vector& norm, float eps, backend::Activation scratch,
                 std::span<float> logits) override;

  // Fusion of neighbouring ops (one-token steps, uninstrumented): rms_norm
  // waits for the linear_many it feeds (the norm then runs in the q8 GEMV's
  // prologue), rope for the store_kv after it (one rope + store launch), glu
  // for the linear / linear_residual that reads its output (ffn_down: the GLU
  // runs in that GEMV's prologue, and its output buffer keeps the gate's
  // values: the models read it nowhere else; rows up to 4,096 wide). Any
  // other op, a layer mark or the step's end launches what waits first, so
  // the results are those of the unfused ops (bit-identical kernels).
  // HEARTH_CUDA_FUSE_NORM=0 / HEARTH_CUDA_FUSE_ROPE_KV=0 turn them off (A/B);
  // the glu fusion is off unless HEARTH_CUDA_FUSE_GLU=1 (it did not pay).
  struct PendingNorm {
    bool set = false;
    backend::Activation x, out;
    const float* weight = nullptr;
    float eps = 0.0f;
  };
  struct PendingRope {
    bool set = false;
    backend::Activation q, k;
    std::int32_t n_q_heads = 0, n_k_heads = 0;
    backend::RopeConfig config;
  };
  struct PendingGlu {
    bool set = false;
    backend::GluKind kind = backend::GluKind::kSwiGlu;
    backend::Activation gate, up;
  };
  // Launches the waiting norm, rope and glu, except those kept.
  void flush_pending(bool keep_norm = false, bool keep_rope = false, bool keep_glu = false);
  bool any_pending() const { return pending_norm_.set || pending_rope_.set || pending_glu_.set; }
  void launch_rope(const PendingRope& r);
  void launch_glu(const PendingGlu& g);
  // The waiting glu fused into y = W x (+ bias) (residual += W x with
  // residual) when x is its output and the q8 GEMV takes W; else the glu is
  // launched and false returned (the caller runs the product).
  bool linear_after_glu(const backend::Matrix& w, backend::Activation x, float* y, const float* bias, float* residual);

  // Keeps the first failure of the step (later ops are skipped); false when
  // the step has already failed or `status` is one.
  bool check(kernels::cuda::Status status, const char* what);
  bool failed() const { return !step_result_.ok(); }
  // Every do_* op starts with it: true when the op must enqueue nothing (the
  // step failed, or a graph replays it). While a graph is captured or
  // replayed it folds (tag, a, b) into the step's op fingerprint.
  bool skip_op(std::uint64_t tag, const void* a, const void* b);
  // begin_step's last part: capture or replay this decode step (graph_mode_).
  void plan_graph();
  // finish_step's first part: end the capture / check the fingerprint, launch
  // the graph and copy the logits back.
  void run_graph();
  // y = W x (+ bias) over n rows; with `residual`, residual += W x (scratch:
  // the cuBLAS path's product, W's rows wide).
  // x_quantized: x's rows are already in ws_.xq in mmq's form (do_linear_many
  // quantizes once for all its matrices).
  void linear(const backend::Matrix& w, const float* x, std::int64_t n, float* y, const float* bias, float* residual,
              float* scratch, bool x_quantized = false);
  // True where a product of n rows runs on the int8 tensor cores (mmq.h):
  // n >= 2, the process default kQ8, mmq enabled and applicable to w.
  static bool use_mmq(const kernels::cuda::DeviceMatrix& w, std::int64_t n);
  static kernels::cuda::DeviceMatrix device_matrix(const backend::Matrix& m);
  // The most sequences a decode step of n sequences may have to be replayed
  // from a graph: kMaxGemvTokens, or mmq's row limit where every product of
  // an n-row step runs mmq.
  std::int64_t graph_max_sequences(std::size_t n) const;
  // x itself, or (n > 1 rows, the process default kQ8, and w one the
  // one-token q8 GEMV takes) x's rows rounded to 8-bit codes in ws_.xq, so a
  // token's products use the same activations in a batch as alone
  // (quantize_q8.h); null when that launch failed.
  const float* q8_rows(const kernels::cuda::DeviceMatrix& w, const float* x, std::int64_t n);
  StepSizes stage_inputs(std::span<const SequenceStep> steps);
  std::size_t gemm_workspace_bytes(std::int64_t n_tokens, std::int64_t n_logit_rows) const;
  // Makes the next memory() ask the driver (after an allocation or a free).
  void refresh_device_info();
  // kOutOfMemory naming `what` when `need` bytes beside `held` exceed the VRAM budget.
  Result<void> fits_budget(std::size_t held, std::size_t need, const std::string& what) const;
  // The workspace's total bytes once reserve(sz) has grown it.
  std::size_t workspace_bytes_for(const StepSizes& sz) const;
  Result<void> reserve(const StepSizes& sz);
  kernels::cuda::PagedKvCache layer_cache(std::int32_t layer) const;
  // fp8: whether layer still needs its scales; calibrate_fp8 sets them from
  // the maxima of the step's K and V (one synchronization per layer, once).
  // The step's arg-maxes (StepSizes::argmax) to greedy_host_, on `stream`.
  void copy_argmax(cudaStream_t stream);
  bool fp8_uncalibrated(std::int32_t layer) const;
  bool fp8_all_calibrated() const;
  void calibrate_fp8(std::int32_t layer, backend::Activation k, backend::Activation v);

  std::unique_ptr<CudaContext> ctx_;  // destroyed last (declared first)
  KvPrecision kv_precision_ = KvPrecision::kF16;
  std::size_t vram_budget_ = 0;  // bytes; 0: no budget beyond what cudaMalloc gives
  int layer_timing_interval_ = 0;
  // Steps of up to this many tokens multiply by GEMV passes of
  // kMaxGemvTokens rows each, larger ones through cuBLAS; from
  // HEARTH_CUDA_GEMV_TOKENS (A/B runs), else kMaxGemvTokens.
  std::int64_t gemv_max_tokens_ = 0;
  std::vector<DeviceBuffer> weight_buffers_;
  std::vector<backend::Matrix> linear_matrices_;  // uploaded with MatrixUse::kLinear (sizes the gemm scratch)
  std::size_t weight_bytes_ = 0;
  std::int64_t max_linear_cols_ = 0;  // widest input of the kLinear matrices
  KvLayout kv_layout_;
  DeviceBuffer k_pool_, v_pool_;     // [layer][block][token][kv_head][head_dim], f16, fp8 or q8_0 (layer_cache)
  std::size_t kv_layer_stride_ = 0;  // bytes of one layer's K (or V) in its pool
  // fp8: [layer][K, V] scales, 0 until the layer's first store with a non-zero value.
  std::vector<float> kv_scales_;
  DeviceBuffer kv_amax_;  // fp8: 2 floats, the calibration's maxima
  Workspace ws_;
  // The staged step.
  StepSizes sz_;
  std::vector<std::int32_t> host_ints_;  // staging for ws_.ints (see StepSizes)
  // A sequence with at least this many new tokens (and a full tile) attends
  // on the tensor cores; fewer go through the split-KV kernels, which spread
  // one token's context over the GPU.
  static constexpr std::int32_t kPrefillMinTokens = 16;
  int prefill_tile_tokens_ = 0;                            // kernels::cuda::prefill_tile_tokens; 0: never
  std::vector<kernels::cuda::PrefillTile> prefill_tiles_;  // the staged step's (StepSizes)
  std::vector<std::int32_t> split_rows_;                   // the staged step's split-KV rows
  std::vector<LogitRows> logit_rows_;                      // [sequences that want logits]
  Result<void> step_result_;                               // the step's first failure
  bool timed_ = false;                                     // this step records layer events
  bool graphs_enabled_ = true;
  StepGraphs graphs_;
  StepGraphs::Mode graph_mode_ = StepGraphs::Mode::kEager;  // of the current step
  StepGraphKey graph_key_;                                  // of the current step
  std::uint64_t op_fingerprint_ = 0;                        // of the current step's op calls
  std::uint64_t graph_launches_ = 0;
  std::vector<std::int32_t> greedy_host_;  // the step's arg-maxes (StepSizes::argmax)
  bool greedy_ready_ = false;              // greedy_host_ holds the last finished step's
  std::span<float> graph_logits_;          // where the replayed step's logits go (copied after the launch)
  LayerTimer layer_timer_;
  // Profiling: event 0 at the end of begin_step, 1 + 2i / 2 + 2i around op i.
  LayerTimer op_events_;
  bool op_events_ok_ = true;                         // every record of this step succeeded
  std::chrono::steady_clock::time_point events_t0_;  // host time event 0 was recorded
  double host_wait_us_ = 0;                          // finish_step's synchronize
  std::uint64_t step_count_ = 0;
  PendingNorm pending_norm_;
  PendingRope pending_rope_;
  PendingGlu pending_glu_;
  // memory()'s cached cudaMemGetInfo (memory() is const and may be called from any thread).
  mutable std::mutex device_info_mu_;
  mutable DeviceMemoryInfo device_info_;
  mutable std::chrono::steady_clock::time_point device_info_time_;
};

}  // namespace hearth::cuda
