// Quantized matrix-vector products for decode: a batch of 1..8 tokens times a
// weight matrix in its GGUF layout, dequantized on the fly (memory-bound: each
// weight byte is read once per call).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

inline constexpr int kMaxGemvTokens = 8;

// Optional terms added to the product (fused, so they cost no extra pass).
struct GemvEpilogue {
  const float* bias = nullptr;      // [rows], added to every token's row (QKV bias)
  const float* residual = nullptr;  // [n_tokens][rows], added; may alias y (residual stream)
};

// How the activations enter the product.
// kF32: in f32, every weight dequantized and multiplied in f32 (the precise path).
// kQ8: quantized in the kernel to 8-bit blocks (per 32 values a scale
//   amax / 127 and the f32 sum of the values) and dotted with the weight codes
//   as integers (dp4a): the dequantized weights times the quantized
//   activations. A relative error of about 1/254 of a block's largest value
//   per activation (~0.7% relative on random rows). Applies where
//   gemv_q8_applies; elsewhere kQ8 runs kF32.
// kProcessDefault: the process default (kQ8 unless the environment has
//   HEARTH_CUDA_GEMV=f32, or set_default_gemv_activations changed it).
enum class GemvActivations { kProcessDefault, kF32, kQ8 };

struct GemvOptions {
  GemvActivations activations = GemvActivations::kProcessDefault;
  // kQ8 only: resident thread blocks per multiprocessor to launch (each loops
  // over row groups); 0 = as many as fit. A tuning knob for the benchmark.
  int q8_blocks_per_sm = 0;
  // kQ8 only: lanes sharing a row (8, 16 or 32); 0 = from the row length.
  // Blocks per SM never change the result; lanes change the summation order.
  int q8_lanes = 0;
  // kQ8 only: 1 loads a thread's next item before computing the current one
  // (more bytes in flight, twice the registers), 0 does not (more resident
  // blocks); -1 = the default. Never changes the result.
  int q8_prefetch = -1;
  // kQ8 only: 0 loads each thread's weights straight into registers (16-byte
  // loads of its own chunk); 1 streams row groups into shared memory with
  // bulk copies (sm_90 and later: cp.async.bulk on an mbarrier), the default
  // number of groups in flight per block (about 80 KB a multiprocessor, at
  // least 2); k >= 2 at most k (up to 8, as many as fit); -1 = the default
  // (1, unless HEARTH_CUDA_GEMV_STAGED says otherwise). Staged, blocks per
  // SM 0 means 1 (or HEARTH_CUDA_GEMV_STAGED_BLOCKS). Where staging does not
  // apply (older GPUs, rows too wide for two stages) the direct loads run.
  // Never changes the result; prefetch applies to the direct loads only.
  int q8_staged = -1;
};

// y[t][r] = sum_c W[r][c] x[t][c] (+ bias[r]) (+ residual[t][r]), t < n_tokens.
// x: [n_tokens][w.cols] f32, 16-byte aligned; y: [n_tokens][w.rows] f32, not
// overlapping x. 1 <= n_tokens <= kMaxGemvTokens. Accumulates in f32.
// Activations as the process default says (see GemvActivations).
Status gemv(const DeviceMatrix& w, const float* x, int n_tokens, float* y, cudaStream_t stream,
            const GemvEpilogue& epilogue = {});

// The same with the activation path chosen by the caller.
Status gemv(const GemvOptions& options, const DeviceMatrix& w, const float* x, int n_tokens, float* y,
            cudaStream_t stream, const GemvEpilogue& epilogue = {});

// Several products of one activation batch: y_i = W_i x (+ epilogue_i), i < n
// (q, k and v; gate and up). One token of one type and width runs as one
// launch over the concatenated rows: the 8-bit kernel (x quantized once)
// where the 8-bit path applies to all of them, else the f32-activation
// kernel where it takes them all (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0: widths that are not a multiple of 256); otherwise one gemv per
// matrix. Either way each y_i is bit-identical to gemv(options, *w_i, ...) alone.
inline constexpr int kMaxFused = 3;
struct GemvOutput {
  const DeviceMatrix* w = nullptr;
  float* y = nullptr;  // [n_tokens][w->rows]
  GemvEpilogue epilogue;
};
Status gemv_fused(const GemvOptions& options, const GemvOutput* outs, int n, const float* x, int n_tokens,
                  cudaStream_t stream);

// gemv_fused over rmsnorm(x) (rmsnorm.h: (x / rms(x)) * weight), the norm
// computed in the one launch's prologue (the q8 kernel's or the f32 one's)
// instead of a launch of its own; the normed row, hence every y_i,
// bit-identical to rmsnorm then gemv_fused. Runs
// where gemv_norm_fuses; callers check it first (kInvalidArgument otherwise).
// out: [cols] f32, the normed row is written there too (as rmsnorm would);
// not overlapping x. The CUDA backend fuses a one-token step's rms_norm
// into the product after it (HEARTH_CUDA_FUSE_NORM=0: it does not).
struct GemvInputNorm {
  const float* weight = nullptr;  // [cols], 16-byte aligned
  float eps = 0.0f;
  float* out = nullptr;  // [cols], 16-byte aligned, != x
};
// One token where gemv_fused takes one launch (either kernel), cols <= 8192;
// x, norm.weight and norm.out 16-byte aligned, out != x (where rmsnorm runs
// its vector kernel: the same sums).
bool gemv_norm_fuses(const GemvOptions& options, const GemvOutput* outs, int n, const float* x, int n_tokens,
                     const GemvInputNorm& norm);
Status gemv_fused_norm(const GemvOptions& options, const GemvOutput* outs, int n, const float* x,
                       const GemvInputNorm& norm, cudaStream_t stream);

// gemv_fused over glu(gate, up) (glu.h: SwiGLU or GeGLU with the tanh GELU,
// element by element), computed in the q8 kernel's prologue instead of a
// launch of its own; every y_i bit-identical to swiglu / geglu_tanh then
// gemv_fused. The GLU's output is not written. With HEARTH_CUDA_FUSE_GLU=1
// the CUDA backend fuses a one-token step's glu into the product that reads
// it (ffn_down); off by default: it did not pay (docs/perf-notes.md v15).
enum class GluInputKind { kSwiGlu = 0, kGeGluTanh = 1 };
struct GemvInputGlu {
  const float* up = nullptr;  // [cols], 16-byte aligned
  GluInputKind kind = GluInputKind::kSwiGlu;
};
// One token, the 8-bit path for every matrix (one type and width); gate and
// up 16-byte aligned.
bool gemv_glu_fuses(const GemvOptions& options, const GemvOutput* outs, int n, const float* gate, int n_tokens,
                    const GemvInputGlu& glu);
Status gemv_fused_glu(const GemvOptions& options, const GemvOutput* outs, int n, const float* gate,
                      const GemvInputGlu& glu, cudaStream_t stream);

// True where the 8-bit path runs: one token; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q4_K, Q5_K or Q6_K; cols a multiple of 256 and at most 28672; row_stride
// and data 16-byte aligned (the kernel reads 16-byte words; for Q6_K's
// 210-byte blocks that means cols a multiple of 2048). The float types always
// take the f32 path.
bool gemv_q8_applies(const DeviceMatrix& w, int n_tokens);

// The process default for GemvActivations::kProcessDefault (never returns it).
GemvActivations default_gemv_activations();
// Sets it (kProcessDefault restores the environment's choice). Not meant to
// race with running gemv calls on other threads (it is one atomic word).
void set_default_gemv_activations(GemvActivations a);

}  // namespace hearth::kernels::cuda
