// The 8-bit activation quantization of the q8 kernels (gemv_q8.cu, mmq.cu),
// on the host in the same f32 operations: the tests' reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace hearth::kernels::cuda::test {

// The kernel's activation quantization, in the same f32 operations: per 32
// values d = amax / 127, q = rint(x * (127 / amax)).
struct QuantX {
  std::vector<int> q;
  std::vector<double> d;  // per unit
};

inline QuantX quantize_x(const std::vector<float>& x) {
  QuantX out;
  out.q.resize(x.size());
  for (size_t u = 0; u < x.size() / 32; ++u) {
    float amax = 0.0f;
    for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[32 * u + i]));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (size_t i = 0; i < 32; ++i) out.q[32 * u + i] = static_cast<int>(std::nearbyint(x[32 * u + i] * id));
    out.d.push_back(static_cast<double>(amax / 127.0f));
  }
  return out;
}

}  // namespace hearth::kernels::cuda::test
