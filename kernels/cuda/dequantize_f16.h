// A whole weight matrix dequantized to f16, the input of the cuBLAS prefill
// GEMM (gemm.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// out: [m.rows][m.cols] IEEE half bits, contiguous (row stride m.cols), 16-byte
// aligned. Each value is the f32 dequantized value rounded to nearest even.
Status dequantize_to_f16(const DeviceMatrix& m, uint16_t* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
