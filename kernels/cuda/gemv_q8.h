// Internal to kernels/cuda: the 8-bit-activation GEMV of one token (gemv.h
// documents the arithmetic; gemv() chooses it).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/gemv.h"

namespace hearth::kernels::cuda {

// y_i = W_i x for one token and n (1..kMaxFused) matrices of one type and
// width, x quantized once in the kernel; one launch. Requires
// gemv_q8_applies(W_i, 1) and validated matrices; options' q8 tuning fields.
// norm: x's RMSNorm computed in the kernel's prologue (gemv_fused_norm);
// glu: glu(x, glu->up) computed there instead (gemv_fused_glu). Not both.
Status gemv_q8(const GemvOutput* outs, int n, const float* x, cudaStream_t stream, const GemvOptions& options,
               const GemvInputNorm* norm = nullptr, const GemvInputGlu* glu = nullptr);

// The weight stages gemv_q8 would stream these matrices through (GemvOptions
// q8_staged), 0 where it loads them directly (staging off, an older GPU, rows
// too wide for two stages, or matrices gemv_q8 does not take).
int gemv_q8_stages(const GemvOutput* outs, int n, const GemvOptions& options);

}  // namespace hearth::kernels::cuda
