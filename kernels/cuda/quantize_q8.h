// The 8-bit activation rounding of the one-token q8 GEMV (gemv.h, kQ8), as
// values: out = d q with, per 32 consecutive values of a row, d = amax / 127
// and q = rint(x 127 / amax) (0 where amax is 0). Multi-token products run on
// these rows when the process default is kQ8, so a token's logits come from
// the same arithmetic (dequantized weights times quantized activations)
// whether its step held one token (the q8 GEMV) or many (the f32 GEMV or
// cuBLAS): batching changes only rounding, not the activations' precision.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// x, out: [rows][cols] f32, cols a multiple of 32; out may alias x.
Status quantize_dequantize_q8(const float* x, int64_t rows, int64_t cols, float* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
