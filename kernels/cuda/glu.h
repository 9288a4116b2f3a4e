// Gated linear unit of the feed-forward block.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// SwiGLU: out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g), i < n.
// out may alias gate or up.
Status swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);

// GeGLU with the tanh GELU (gemma): out[i] = gelu_tanh(gate[i]) * up[i],
// gelu_tanh(g) = g/2 (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), i < n; as
// kernels/cpu/glu.h. out may alias gate or up.
Status geglu_tanh(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
