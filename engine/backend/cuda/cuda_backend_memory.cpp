// CudaBackend: the device, the weights, the KV pool and the step workspace,
// each inside the VRAM budget.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/backend/cuda/cuda_backend.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"

namespace hearth::cuda {
namespace kc = hearth::kernels::cuda;

namespace {

// Bytes of one [head_dim] row of K or V: f16 2 a value, fp8 1, q8_0 1 and an
// f16 scale per 32 (the scales live after the codes: layer_cache).
std::size_t kv_row_bytes(KvPrecision p, std::size_t head_dim) {
  switch (p) {
    case KvPrecision::kFp8E4M3:
      return head_dim;
    case KvPrecision::kQ8_0:
      return head_dim + head_dim / 32 * sizeof(std::uint16_t);
    case KvPrecision::kF16:
      break;
  }
  return head_dim * sizeof(std::uint16_t);
}

constexpr std::size_t kKvLayerAlign = 256;  // each layer's K (and V) starts on this boundary

std::size_t f32_bytes(std::int64_t n) {
  return static_cast<std::size_t>(n) * sizeof(float);
}

std::string bytes_text(std::size_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

// memory() runs after every engine step (hundreds a second in decode), and
// cudaMemGetInfo is a driver call of some microseconds (it does not
// synchronize): refreshing it a few times a second is enough for the VRAM
// panel, and makes its cost vanish.
constexpr std::chrono::milliseconds kDeviceInfoRefresh{250};

}  // namespace

std::size_t CudaBackend::Workspace::bytes() const {
  std::size_t b = logits.bytes() + ints.bytes() + gemm.bytes() + attn_split.bytes() + xq.bytes();
  for (const DeviceBuffer& a : activations) b += a.bytes();
  return b;
}

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(const CudaBackendOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(auto ctx, CudaContext::create(options.device));
  return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(ctx), options));
}

CudaBackend::CudaBackend(std::unique_ptr<CudaContext> ctx, const CudaBackendOptions& options)
    : ctx_(std::move(ctx)),
      kv_precision_(options.kv_precision),
      vram_budget_(options.vram_budget_bytes),
      layer_timing_interval_(options.layer_timing_interval) {
  const char* env = std::getenv("HEARTH_CUDA_GRAPH");
  graphs_enabled_ = options.cuda_graphs && !(env != nullptr && std::string_view(env) == "0");
  // A/B knobs of the device runs (docs/perf-notes.md): layer timing interval, GEMV batch limit.
  if (const char* v = std::getenv("HEARTH_CUDA_LAYER_TIMING"); v != nullptr) layer_timing_interval_ = std::atoi(v);
  if (const char* v = std::getenv("HEARTH_CUDA_GEMV_TOKENS"); v != nullptr) gemv_max_tokens_ = std::atoi(v);
}

CudaBackend::~CudaBackend() {
  // Buffers are freed on this context's device (cudaFree needs no stream, but
  // nothing may still be running on them).
  if (ctx_ && ctx_->make_current()) static_cast<void>(ctx_->synchronize());
}

Result<void> CudaBackend::set_shape(const backend::ModelShape& shape) {
  if (shape.head_dim % 32 != 0 || shape.head_dim > kc::kMaxAttnHeadDim) {
    return make_error(ErrorCode::kUnsupported, "the CUDA attention needs head_dim a multiple of 32 up to 256, not " +
                                                   std::to_string(shape.head_dim));
  }
  shape_ = shape;
  // HEARTH_CUDA_ATTN_PREFILL=0: every row through the split-KV kernels (A/B runs).
  const char* prefill = std::getenv("HEARTH_CUDA_ATTN_PREFILL");
  prefill_tile_tokens_ = prefill != nullptr && std::string_view(prefill) == "0"
                             ? 0
                             : kc::prefill_tile_tokens(shape.head_dim, shape.n_head, shape.n_head_kv);
  return {};
}

// Checked before anything is uploaded, so a model that cannot fit fails at
// once (and "auto" falls back to the CPU) instead of after most of an upload.
Result<void> CudaBackend::reserve_weights(std::size_t weights) {
  if (vram_budget_ > 0 && weights > vram_budget_) {
    return make_error(ErrorCode::kOutOfMemory, "the weights need " + bytes_text(weights) +
                                                   " of GPU memory; the VRAM budget is " + bytes_text(vram_budget_));
  }
  HEARTH_ASSIGN_OR_RETURN(const DeviceMemoryInfo info, ctx_->memory_info());
  if (weights > info.free_bytes) {
    return make_error(ErrorCode::kOutOfMemory, "the weights need " + bytes_text(weights) +
                                                   " of GPU memory; CUDA device " + std::to_string(ctx_->device()) +
                                                   " (" + ctx_->name() + ") has " + bytes_text(info.free_bytes) +
                                                   " free");
  }
  return {};
}

Result<backend::Matrix> CudaBackend::upload_matrix(const backend::HostTensor& t, backend::MatrixUse use) {
  const std::string name(t.name);
  const auto type = static_cast<kernels::GgmlType>(t.type);
  if (!kc::cuda_supports_type(type)) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": its type has no CUDA kernel");
  }
  DeviceMatrix m{type, nullptr, t.rows, t.cols, kernels::row_bytes(type, t.cols)};
  const std::size_t bytes = m.row_stride * static_cast<std::size_t>(t.rows);
  if (bytes != t.bytes)
    return make_error(ErrorCode::kCorruptFile, "tensor " + name + ": size does not match its shape");
  HEARTH_TRY(ctx_->make_current());
  HEARTH_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(bytes, "tensor " + name));
  HEARTH_TRY(buffer.upload(t.data, bytes, "tensor " + name));
  m.data = buffer.get();
  if (!kc::validate_matrix(m).ok()) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": shape not supported by the CUDA kernels");
  }
  weight_bytes_ += bytes;
  weight_buffers_.push_back(std::move(buffer));
  const backend::Matrix handle{t.type, m.data, m.rows, m.cols, m.row_stride};
  if (use == backend::MatrixUse::kLinear) {
    linear_matrices_.push_back(handle);
    max_linear_cols_ = std::max(max_linear_cols_, handle.cols);
  }
  return handle;
}

Result<backend::Vector> CudaBackend::upload_vector(const backend::HostTensor& t) {
  const std::string name(t.name);
  if (static_cast<kernels::GgmlType>(t.type) != kernels::GgmlType::kF32) {
    return make_error(ErrorCode::kUnsupported, "tensor " + name + ": the CUDA path needs an f32 vector");
  }
  const std::size_t bytes = f32_bytes(t.rows * t.cols);
  HEARTH_TRY(ctx_->make_current());
  HEARTH_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(bytes, "tensor " + name));
  HEARTH_TRY(buffer.upload(t.data, bytes, "tensor " + name));
  const backend::Vector v{buffer.as<const float>(), t.rows * t.cols};
  weight_bytes_ += bytes;
  weight_buffers_.push_back(std::move(buffer));
  return v;
}

std::size_t CudaBackend::kv_block_bytes(std::int32_t block_size) const {
  return 2ull * static_cast<std::size_t>(shape_.n_layer) * static_cast<std::size_t>(block_size) *
         static_cast<std::size_t>(shape_.n_head_kv) *
         kv_row_bytes(kv_precision_, static_cast<std::size_t>(shape_.head_dim));
}

Result<void> CudaBackend::allocate_kv(const KvLayout& layout) {
  if (layout.num_blocks <= 0 || layout.block_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "KV layout needs a positive number of blocks and block size");
  }
  HEARTH_TRY(ctx_->make_current());
  HEARTH_TRY(ctx_->synchronize());
  k_pool_ = {};
  v_pool_ = {};
  kv_layout_ = {};
  if (kv_precision_ == KvPrecision::kQ8_0 && shape_.head_dim % 32 != 0) {
    return make_error(ErrorCode::kUnsupported,
                      "KV precision q8_0 needs a head size that is a multiple of 32 (this "
                      "model's is " +
                          std::to_string(shape_.head_dim) + "): use f16 or fp8");
  }
  const auto n_layer = static_cast<std::size_t>(shape_.n_layer);
  const std::size_t layer_bytes =
      kv_block_bytes(layout.block_size) / 2 / n_layer * static_cast<std::size_t>(layout.num_blocks);
  kv_layer_stride_ = (layer_bytes + kKvLayerAlign - 1) / kKvLayerAlign * kKvLayerAlign;
  const std::size_t per_pool = kv_layer_stride_ * n_layer;
  refresh_device_info();
  HEARTH_TRY(fits_budget(weight_bytes_ + ws_.bytes(), 2 * per_pool,
                         "a KV pool of " + std::to_string(layout.num_blocks) + " blocks"));
  HEARTH_ASSIGN_OR_RETURN(k_pool_, DeviceBuffer::allocate(per_pool, "the KV cache (K)"));
  auto v = DeviceBuffer::allocate(per_pool, "the KV cache (V)");
  if (!v) {
    k_pool_ = {};
    return std::move(v).error();
  }
  v_pool_ = std::move(v).value();
  kv_scales_.assign(2 * n_layer, 0.0f);
  if (kv_precision_ == KvPrecision::kFp8E4M3) {
    HEARTH_ASSIGN_OR_RETURN(kv_amax_, DeviceBuffer::allocate(2 * sizeof(float), "the fp8 KV calibration"));
  }
  kv_layout_ = layout;
  return {};
}

kc::PagedKvCache CudaBackend::layer_cache(std::int32_t layer) const {
  kc::PagedKvCache c;
  c.k = k_pool_.as<std::byte>() + static_cast<std::size_t>(layer) * kv_layer_stride_;
  c.v = v_pool_.as<std::byte>() + static_cast<std::size_t>(layer) * kv_layer_stride_;
  c.dtype = kv_precision_;
  c.n_blocks = kv_layout_.num_blocks;
  c.block_size = kv_layout_.block_size;
  c.n_kv_heads = shape_.n_head_kv;
  c.head_dim = shape_.head_dim;
  if (kv_precision_ == KvPrecision::kQ8_0) {  // the f16 scales after the layer's codes
    const std::size_t codes = static_cast<std::size_t>(c.n_blocks) * static_cast<std::size_t>(c.block_size) *
                              static_cast<std::size_t>(c.n_kv_heads) * static_cast<std::size_t>(c.head_dim);
    c.k_d = static_cast<std::byte*>(c.k) + codes;
    c.v_d = static_cast<std::byte*>(c.v) + codes;
  }
  if (kv_precision_ == KvPrecision::kFp8E4M3) {
    // Scales from the layer's first store (calibrate_fp8); 1 before it, when
    // only zeros have been stored (any scale reads them back as 0).
    const float ks = kv_scales_[2 * static_cast<std::size_t>(layer)];
    const float vs = kv_scales_[2 * static_cast<std::size_t>(layer) + 1];
    c.k_scale = ks > 0.0f ? ks : 1.0f;
    c.v_scale = vs > 0.0f ? vs : 1.0f;
  }
  return c;
}

ModelMemory CudaBackend::memory() const {
  ModelMemory m{weight_bytes_, k_pool_.bytes() + v_pool_.bytes(), ws_.bytes()};
  std::lock_guard<std::mutex> lock(device_info_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (device_info_.total_bytes == 0 || now - device_info_time_ >= kDeviceInfoRefresh) {
    if (auto info = ctx_->memory_info()) {  // on failure the last figures stay (0 before any)
      device_info_ = *info;
      device_info_time_ = now;
    }
  }
  m.device_free = device_info_.free_bytes;
  m.device_total = device_info_.total_bytes;
  return m;
}

void CudaBackend::refresh_device_info() {
  std::lock_guard<std::mutex> lock(device_info_mu_);
  device_info_.total_bytes = 0;  // memory() asks the driver again
}

Result<void> CudaBackend::fits_budget(std::size_t held, std::size_t need, const std::string& what) const {
  if (vram_budget_ == 0 || (need <= vram_budget_ && held <= vram_budget_ - need)) return {};
  return make_error(ErrorCode::kOutOfMemory, what + " needs " + bytes_text(need) + " of GPU memory beside the " +
                                                 bytes_text(held) + " the model holds; the VRAM budget is " +
                                                 bytes_text(vram_budget_));
}

std::size_t CudaBackend::gemm_workspace_bytes(std::int64_t n, std::int64_t n_logit_rows) const {
  std::size_t bytes = 0;
  const auto need = [&](const backend::Matrix& m, std::int64_t rows) {
    if (rows <= kc::kMaxGemvTokens) return;
    const DeviceMatrix dm{static_cast<kernels::GgmlType>(m.type), m.data, m.rows, m.cols, m.row_stride};
    if (use_mmq(dm, rows)) return;  // never dequantized
    bytes = std::max(bytes, kc::matmul_f16_workspace_bytes(dm, rows));
  };
  for (const backend::Matrix& m : linear_matrices_) need(m, n);
  need(output_, n_logit_rows);
  return bytes;
}

std::size_t CudaBackend::workspace_bytes_for(const StepSizes& sz) const {
  std::int64_t per_token = 0;  // floats of every activation buffer
  for (const ActivationSpec& a : specs_) per_token += a.width;
  const std::int64_t tokens = sz.n_tokens > ws_.tokens ? std::max<std::int64_t>(sz.n_tokens, 16) : ws_.tokens;
  return f32_bytes(tokens * per_token) + std::max(ws_.logits.bytes(), f32_bytes(sz.n_logit_rows * output_.rows)) +
         std::max(ws_.ints.bytes(), sz.n_ints * sizeof(std::int32_t)) + std::max(ws_.gemm.bytes(), sz.gemm_bytes) +
         std::max(ws_.attn_split.bytes(), sz.attn_bytes) + std::max(ws_.xq.bytes(), sz.xq_bytes);
}

Result<void> CudaBackend::reserve(const StepSizes& sz) {
  // Something grows exactly when the target exceeds what is held. Checked
  // before anything is freed: a step over the budget leaves the workspace as
  // it was, ready for the next (smaller) step.
  if (const std::size_t target = workspace_bytes_for(sz); target > ws_.bytes()) {
    HEARTH_TRY(fits_budget(weight_bytes_ + k_pool_.bytes() + v_pool_.bytes(), target,
                           "the workspace of a " + std::to_string(sz.n_tokens) + "-token step"));
    refresh_device_info();
  }
  ws_.activations.resize(specs_.size());
  if (sz.n_tokens > ws_.tokens) {
    ws_.tokens = 0;  // stays 0 if an allocation below fails: the next step retries
    const std::int64_t n = std::max<std::int64_t>(sz.n_tokens, 16);
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      ws_.activations[i] = {};
      HEARTH_ASSIGN_OR_RETURN(ws_.activations[i],
                              DeviceBuffer::allocate(f32_bytes(n * specs_[i].width), specs_[i].what));
    }
    ws_.tokens = n;
  }
  for (std::size_t i = 0; i < specs_.size(); ++i)
    acts_[i] = backend::Activation{ws_.activations[i].as<float>(), specs_[i].width};
  const auto at_least = [](DeviceBuffer& b, std::size_t bytes, const char* what) -> Result<void> {
    if (b.bytes() >= bytes) return {};
    b = {};
    HEARTH_ASSIGN_OR_RETURN(b, DeviceBuffer::allocate(bytes, what));
    return {};
  };
  HEARTH_TRY(at_least(ws_.logits, f32_bytes(sz.n_logit_rows * output_.rows), "logits"));
  HEARTH_TRY(at_least(ws_.ints, sz.n_ints * sizeof(std::int32_t), "step inputs"));
  HEARTH_TRY(at_least(ws_.gemm, sz.gemm_bytes, "the f16 matmul scratch"));
  HEARTH_TRY(at_least(ws_.xq, sz.xq_bytes, "the 8-bit activation rows"));
  return at_least(ws_.attn_split, sz.attn_bytes, "the split-KV attention scratch");
}

Result<void> CudaBackend::write(backend::Activation dst, std::span<const float> src) {
  HEARTH_TRY(ctx_->make_current());
  HEARTH_TRY(ctx_->synchronize());
  return to_result(kc::Status{cudaMemcpy(dst.data, src.data(), src.size_bytes(), cudaMemcpyHostToDevice), "cudaMemcpy"},
                   "write activation");
}

Result<void> CudaBackend::read(backend::Activation src, std::span<float> dst) {
  HEARTH_TRY(ctx_->make_current());
  HEARTH_TRY(ctx_->synchronize());
  return to_result(kc::Status{cudaMemcpy(dst.data(), src.data, dst.size_bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy"},
                   "read activation");
}

}  // namespace hearth::cuda
