// Internal to kernels/cuda: the 8-bit-activation GEMV of one token (gemv.h
// documents the arithmetic; gemv() chooses it).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/gemv.h"

namespace hearth::kernels::cuda {

// y = W x for one token, x quantized in the kernel. Requires
// gemv_q8_applies(w, 1) and a validated matrix; options' q8 tuning fields.
Status gemv_q8(const DeviceMatrix& w, const float* x, float* y, cudaStream_t stream, const GemvEpilogue& epilogue,
               const GemvOptions& options);

}  // namespace hearth::kernels::cuda
