// Rotary position embedding, in place, on [n_tokens][n_heads][head_dim].
#pragma once

#include <cstdint>

namespace hearth::kernels {

enum class RopeOrder {
  kAdjacent,  // pairs (2i, 2i+1): llama (GGUF converters permute Q/K for it)
  kNeox,      // pairs (i, i + n_rot/2): qwen2, gemma, NeoX
};

struct RopeParams {
  int head_dim = 0;
  int n_rot = 0;            // leading dims rotated (even, <= head_dim); the rest pass through
  float freq_base = 10000;  // theta_i = p * freq_scale * freq_base^(-2i / n_rot)
  float freq_scale = 1.0f;  // linear position scaling (1 / the GGUF's rope scaling factor)
  RopeOrder order = RopeOrder::kAdjacent;
};

// x: [n_tokens][n_heads][head_dim]; positions: [n_tokens]. Angles are built as
// ggml builds them (f32, theta multiplied by base^(-2/n_rot) step by step), so
// results track llama.cpp's closely at large positions.
void rope(float* x, int64_t n_tokens, int n_heads, const int32_t* positions, const RopeParams& p);

}  // namespace hearth::kernels
