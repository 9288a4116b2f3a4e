#include "kernels/cpu/rope.h"

#include <cassert>
#include <cmath>
#include <vector>

namespace hearth::kernels {

void rope(float* x, int64_t n_tokens, int n_heads, const int32_t* positions, const RopeParams& p) {
  assert(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  const int half = p.n_rot / 2;
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  std::vector<float> cos_sin(static_cast<size_t>(p.n_rot));  // [half][cos, sin] for one token
  for (int64_t t = 0; t < n_tokens; ++t) {
    float theta = static_cast<float>(positions[t]) * p.freq_scale;
    for (int i = 0; i < half; ++i, theta *= theta_scale) {
      cos_sin[2 * static_cast<size_t>(i)] = std::cos(theta);
      cos_sin[2 * static_cast<size_t>(i) + 1] = std::sin(theta);
    }
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + (t * n_heads + h) * p.head_dim;
      for (int i = 0; i < half; ++i) {
        const int a = p.order == RopeOrder::kAdjacent ? 2 * i : i;
        const int b = p.order == RopeOrder::kAdjacent ? 2 * i + 1 : i + half;
        const float c = cos_sin[2 * static_cast<size_t>(i)], s = cos_sin[2 * static_cast<size_t>(i) + 1];
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
      }
    }
  }
}

}  // namespace hearth::kernels
