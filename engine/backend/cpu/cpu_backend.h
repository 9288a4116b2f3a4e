// The CPU implementation of the backend op interface (engine/backend/ops.h),
// over CpuOps and kernels/cpu: weights stay in the file mapping (upload is a
// view), activations and the f16 KV cache live in host vectors, q/k/v and
// gate/up run through matmul_many (one activation quantization, one pass over
// the thread pool) and attention covers every sequence of a step in one pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/backend/ops.h"
#include "kernels/kv_precision.h"

namespace hearth::cpu {

struct CpuBackendOptions {
  int n_threads = 0;  // 0: the number of cores
  // Outlier refinement of the 8-bit activation blocks (kernels/cpu/
  // outlier_refine.h). false: plain 8-bit blocks, as llama.cpp computes.
  bool refine_activations = true;
  // f16, q8_0 (blocks of 32 with an f16 scale: 34 bytes per 32 values,
  // needs a head size that is a multiple of 32) or fp8 (E4M3, one byte a
  // value; per-layer K and V scales calibrated on the first prefill:
  // kernels/fp8.h kv_fp8_scale).
  KvPrecision kv_precision = KvPrecision::kF16;
};

class CpuBackend final : public backend::Ops {
 public:
  explicit CpuBackend(const CpuBackendOptions& options);
  ~CpuBackend() override;

  Result<void> reserve_weights(std::size_t) override { return {}; }
  Result<backend::Matrix> upload_matrix(const backend::HostTensor& t, backend::MatrixUse use) override;
  Result<backend::Vector> upload_vector(const backend::HostTensor& t) override;

  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  Result<void> allocate_kv(const KvLayout& layout) override;
  bool has_kv() const override { return !k_cache_.empty(); }
  // fp8: the K and V scales of a layer (0 until calibrated); 1 for other precisions.
  float kv_scale(std::int32_t layer, bool v) const;

  void mark_layer(std::uint32_t boundary) override;

  Result<void> write(backend::Activation dst, std::span<const float> src) override;
  Result<void> read(backend::Activation src, std::span<float> dst) override;
  ModelMemory memory() const override;

  int threads() const { return ops_.threads(); }

 private:
  // One sequence of the staged step: its rows [row, row + count) of every activation.
  struct Seq {
    std::span<const std::int32_t> block_table;
    std::int32_t start_pos = 0;
    std::int64_t row = 0;
    std::int64_t count = 0;
    std::int64_t logit_rows = 0;  // rows of logits it wants (0, 1 or count)
  };

  std::string ceilings_key() const override { return "cpu:" + std::to_string(ops_.threads()); }
  DeviceCeilings measure_ceilings() override;
  Result<void> do_begin_step(std::span<const SequenceStep> steps) override;
  Result<void> do_finish_step() override { return {}; }
  // q/k/v and gate/up run through one matmul_many (one activation
  // quantization, one pass over the thread pool).
  bool op_fused(backend::OpKind kind) const override { return kind == backend::OpKind::kLinearMany; }

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

  PagedKv layer_kv(std::int32_t layer);
  void calibrate_fp8(std::int32_t layer, backend::Activation k, backend::Activation v);
  void add_bias(float* y, const backend::Vector& bias, std::int64_t width) const;

  CpuOps ops_;
  std::size_t weight_bytes_ = 0;
  KvLayout kv_layout_;
  KvPrecision kv_precision_;
  // fp8: [layer][K, V] scales, 0 until the layer's first non-zero store calibrates them.
  std::vector<float> kv_scales_;
  std::vector<std::uint16_t> k_cache_, v_cache_;  // [layer][block][token][kv_head][head_dim] f16, or q8_0 rows
  // The staged step.
  std::vector<std::vector<float>> buffers_;      // [activation][n_tokens * width], grown on demand
  std::vector<std::int32_t> tokens_;             // [n_tokens]
  std::vector<std::int32_t> positions_;          // [n_tokens]
  std::vector<Seq> seqs_;                        // [n_sequences]
  std::vector<CpuOps::AttentionSeq> attention_;  // [n_sequences], rebuilt per layer
  // mark_layer: steady_clock between boundaries (two clock reads per layer,
  // negligible next to its matmuls).
  std::chrono::steady_clock::time_point layer_t0_;
};

}  // namespace hearth::cpu
