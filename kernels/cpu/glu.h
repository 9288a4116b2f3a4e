// Gated linear units of the feed-forward block: out = act(gate) * up.
#pragma once

#include <cstdint>

namespace hearth::kernels {

// SwiGLU (llama, qwen2): out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g).
// gate, up, out: [n]; out may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, int64_t n);

// GeGLU with the tanh GELU (gemma): out[i] = gelu_tanh(gate[i]) * up[i],
// gelu_tanh(g) = g/2 (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
void geglu_tanh(const float* gate, const float* up, float* out, int64_t n);

}  // namespace hearth::kernels
