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

// y[t][r] = sum_c W[r][c] x[t][c] (+ bias[r]) (+ residual[t][r]), t < n_tokens.
// x: [n_tokens][w.cols] f32, 16-byte aligned; y: [n_tokens][w.rows] f32, not
// overlapping x. 1 <= n_tokens <= kMaxGemvTokens. Accumulates in f32.
Status gemv(const DeviceMatrix& w, const float* x, int n_tokens, float* y, cudaStream_t stream,
            const GemvEpilogue& epilogue = {});

}  // namespace hearth::kernels::cuda
