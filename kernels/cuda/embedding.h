// Token embedding lookup: rows of a (quantized) table dequantized to f32.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// out[t][c] = table[ids[t]][c] as f32. ids: [n_tokens] device int32;
// out: [n_tokens][table.cols] f32, 16-byte aligned. An id outside
// [0, table.rows) yields a row of NaN (the engine checks ids on the host).
Status embedding_lookup(const DeviceMatrix& table, const int32_t* ids, int n_tokens, float* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
