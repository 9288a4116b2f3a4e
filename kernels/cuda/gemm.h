// Prefill matrix products through cuBLAS: the weight matrix dequantized to f16
// (dequantize_f16.h), the activations converted to f16, an f16 x f16 product
// accumulated in f32 (tensor cores).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// dst[i] = f16(src[i]) rounded to nearest even, i < n (half bits).
Status convert_f32_to_f16(const float* src, uint16_t* dst, int64_t n, cudaStream_t stream);

// y[t][r] = sum_c w[r][c] x[t][c] in f32. w: [rows][cols] f16; x: [n_tokens][cols]
// f16; y: [n_tokens][rows] f32. Runs on `stream` (set on the handle).
Status gemm_f16(cublasHandle_t handle, const uint16_t* w, const uint16_t* x, float* y, int64_t rows, int64_t cols,
                int64_t n_tokens, cudaStream_t stream);

// Bytes of workspace matmul_f16 needs: the f16 weights and activations.
size_t matmul_f16_workspace_bytes(const DeviceMatrix& w, int64_t n_tokens);

// y = W x for a batch of tokens (the CPU matmul's shapes): dequantize W to f16
// and x to f16 in `workspace`, then gemm_f16. x: [n_tokens][w.cols] f32;
// y: [n_tokens][w.rows] f32.
Status matmul_f16(cublasHandle_t handle, const DeviceMatrix& w, const float* x, int64_t n_tokens, float* y,
                  void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
