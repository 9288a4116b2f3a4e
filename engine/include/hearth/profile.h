// Per-op profiles of forward passes, and the numeric overflow check (issue 19).
//
// With profiling on (Engine::set_profiling, off by default) every op the model
// launches through the backend (engine/backend/ops.h) becomes one OpProfileEntry:
// its duration (a steady clock on the CPU, CUDA events on the GPU), the bytes
// it reads and writes and the FLOPs it does, computed from the shapes and
// types (engine/backend/op_cost.h), and whether the backend fused it. The
// engine adds one "sampling" entry per step. A ProfileReport aggregates a
// window of steps into a matrix: layers x kernel kinds, microseconds summed.
//
// The kind names and JSON field names built from these structs (hearth-cli
// profile --json) are an interface: add, never rename.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth {

// The kernel kinds, the matrix's columns (in this order). Serialized by name
// (kernel_kind_name): do not rename or reorder.
enum class KernelKind : std::uint8_t {
  kEmbedding,    // token embedding lookup
  kNorm,         // RMSNorm (whole rows or per head)
  kMatmul,       // weight products (q/k/v, output, FFN, logits)
  kRope,         // rotary position embedding
  kKvStore,      // writing K/V into the paged cache
  kAttention,    // paged attention
  kActivation,   // SwiGLU / GeGLU
  kElementwise,  // residual adds, scales
  kSampling,     // the engine's sampler (host)
};
inline constexpr std::size_t kKernelKinds = 9;
const char* kernel_kind_name(KernelKind kind);

struct OpProfileEntry {
  std::string name;         // what the op computes: "qkv", "ffn_down", "sampling"...
  std::int32_t layer = -1;  // -1: outside the layers (embedding, logits, sampling)
  KernelKind kind = KernelKind::kMatmul;
  std::int64_t step = 0;           // the engine step it belongs to (0-based since profiling was turned on)
  double start_us = 0;             // from the start of profiling (host clock; CUDA: event time aligned to it)
  double duration_us = 0;          // CPU: steady clock around the op; CUDA: events around its kernels
  std::uint64_t input_bytes = 0;   // read: weights, activations, KV cache
  std::uint64_t output_bytes = 0;  // written
  std::uint64_t flops = 0;         // floating-point operations (a multiply-add is 2)
  bool is_fused = false;           // the backend ran it as one fused pass (several products, or an epilogue)
};

// One forward pass.
struct StepProfile {
  std::int64_t step = 0;
  std::int64_t tokens = 0;   // rows of the step
  double start_us = 0;       // from the start of profiling
  double forward_us = 0;     // host wall time of the forward (begin_step .. finish_step returned)
  double host_wait_us = 0;   // host blocked on the device (CUDA synchronize); 0 on the CPU
  double gpu_idle_us = 0;    // gaps between the step's kernels on the device; 0 on the CPU
  double gpu_busy_us = 0;    // sum of the step's op durations on the device; 0 on the CPU
  double sampling_us = 0;    // the engine's sampling after the forward
  double scheduling_us = 0;  // the scheduler's decision before the forward (host)
  std::vector<OpProfileEntry> ops;
};

// The device's measured ceilings, the roofs each kernel's achieved rates are
// held against (engine/metrics/roofline.h). Measured once per device and
// process, when profiling is first turned on (engine/backend/ceilings.h).
struct DeviceCeilings {
  double bytes_per_s = 0;  // memory bandwidth (CPU: read; CUDA: a device copy, read + written); 0: unknown
  double flops_per_s = 0;  // the fastest product the backend runs (CPU: its Q8_0 GEMM; CUDA: cuBLAS FP16); 0: unknown
  std::string source;      // how they were measured, in words
};

// A window of profiled steps.
struct ProfileReport {
  // Which Engine::set_profiling(enabled) call began this window (1, 2, ... per
  // engine; Engine::set_profiling returns it); 0: profiling never ran.
  std::uint64_t window = 0;
  std::int32_t n_layer = 0;
  std::int64_t steps = 0;   // steps aggregated into the sums below (all since the last reset)
  double forward_us = 0;    // sum of StepProfile::forward_us
  double host_wait_us = 0;  // sums over the steps
  double gpu_idle_us = 0;
  double sampling_us = 0;
  double scheduling_us = 0;
  double outside_layers_us[kKernelKinds] = {};  // ops with layer -1, by kind
  // [n_layer][kKernelKinds] microseconds summed over the steps.
  std::vector<double> matrix_us;
  // [n_layer][kKernelKinds] bytes read + written and FLOPs, summed like matrix_us.
  std::vector<double> matrix_bytes;
  std::vector<double> matrix_flops;
  DeviceCeilings ceilings;  // of the device the window ran on
  // The last steps kept (ProfileOptions::keep_steps), oldest first.
  std::vector<StepProfile> recent;
  static std::size_t at(std::int32_t layer, KernelKind kind) {
    return static_cast<std::size_t>(layer) * kKernelKinds + static_cast<std::size_t>(kind);
  }
  double cell(std::int32_t layer, KernelKind kind) const { return matrix_us[at(layer, kind)]; }
  double cell_bytes(std::int32_t layer, KernelKind kind) const { return matrix_bytes[at(layer, kind)]; }
  double cell_flops(std::int32_t layer, KernelKind kind) const { return matrix_flops[at(layer, kind)]; }
};

struct ProfileOptions {
  bool enabled = false;
  std::size_t keep_steps = 256;  // steps whose entries the report keeps
};

// The first value out of range that the overflow check saw.
struct OverflowFinding {
  std::int32_t layer = -1;    // -1: outside the layers (embedding)
  std::string op;             // the op whose output it was ("ffn_down"...)
  std::string what;           // "nan", "inf" or "fp16_range" (|x| > 95% of 65504)
  double max_abs = 0;         // the largest finite magnitude in that output
  std::int32_t position = 0;  // the token position (in its sequence) of the first bad value
  std::int64_t step = 0;      // engine step (0-based since the check was turned on)
};
// 95% of the largest finite FP16 value: beyond it a mixed-precision path is about to overflow.
inline constexpr double kFp16OverflowThreshold = 0.95 * 65504.0;

}  // namespace hearth
