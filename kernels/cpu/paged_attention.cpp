#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels {
namespace {

struct HeadJob {
  const PagedKv* kv;
  const int32_t* block_table;
  VecDotFn dot;       // K row (kv dtype) . q (f32)
  size_t elem_bytes;  // bytes of one K/V element
  int64_t head_dim;
  float scale;
  int window;
};

// Pointer to the K or V row of position p, kv head g.
const uint8_t* kv_row(const HeadJob& j, const void* base, int64_t p, int g) {
  const int64_t bs = j.kv->block_size;
  const int64_t block = j.block_table[p / bs];
  const int64_t index = (block * bs + p % bs) * j.kv->n_kv_heads + g;
  return static_cast<const uint8_t*>(base) + static_cast<size_t>(index * j.head_dim) * j.elem_bytes;
}

// acc += w * v_row (v_row in the KV dtype); tmp: head_dim floats of scratch.
void accumulate_v(const HeadJob& j, const uint8_t* v_row, float w, float* acc, float* tmp) {
  const float* v = reinterpret_cast<const float*>(v_row);
  if (j.kv->dtype == KvDtype::kF16) {
    fp16_to_f32_row(reinterpret_cast<const uint16_t*>(v_row), tmp, j.head_dim);
    v = tmp;
  }
  for (int64_t d = 0; d < j.head_dim; ++d) acc[d] += w * v[d];
}

// One query head at position p against kv head g: out = softmax(q K^T s) V.
void attend_one(const HeadJob& j, const float* q, int64_t p, int g, float* out) {
  float acc[kMaxAttnHeadDim];
  float tmp[kMaxAttnHeadDim];
  float scores[kMaxAttnBlockSize];
  std::fill(acc, acc + j.head_dim, 0.0f);
  float running_max = -std::numeric_limits<float>::infinity();
  double running_sum = 0.0;
  const int64_t bs = j.kv->block_size;
  const int64_t first = j.window > 0 ? std::max<int64_t>(0, p - j.window + 1) : 0;
  for (int64_t start = first - first % bs; start <= p; start += bs) {
    const int64_t lo = std::max(start, first), hi = std::min(start + bs - 1, p);
    float block_max = -std::numeric_limits<float>::infinity();
    for (int64_t pos = lo; pos <= hi; ++pos) {
      const float s = j.dot(j.head_dim, kv_row(j, j.kv->k, pos, g), q) * j.scale;
      scores[pos - lo] = s;
      block_max = std::max(block_max, s);
    }
    if (block_max > running_max) {  // rescale what was accumulated under the old max
      const float r = std::exp(running_max - block_max);
      for (int64_t d = 0; d < j.head_dim; ++d) acc[d] *= r;
      running_sum *= r;
      running_max = block_max;
    }
    for (int64_t pos = lo; pos <= hi; ++pos) {
      const float w = std::exp(scores[pos - lo] - running_max);
      running_sum += w;
      accumulate_v(j, kv_row(j, j.kv->v, pos, g), w, acc, tmp);
    }
  }
  const float inv = static_cast<float>(1.0 / running_sum);
  for (int64_t d = 0; d < j.head_dim; ++d) out[d] = acc[d] * inv;
}

}  // namespace

void paged_attention(const float* q, const int32_t* positions, int64_t n_tokens, const PagedKv& kv,
                     const int32_t* block_table, int64_t n_table, const AttentionParams& params, float* out,
                     ThreadPool* pool) {
  assert(kv.head_dim > 0 && kv.head_dim <= kMaxAttnHeadDim);
  assert(kv.block_size > 0 && kv.block_size <= kMaxAttnBlockSize);
  assert(kv.n_kv_heads > 0 && params.n_heads % kv.n_kv_heads == 0);
  (void)n_table;
  const bool f16 = kv.dtype == KvDtype::kF16;
  const HeadJob job{&kv,
                    block_table,
                    quant_ops(f16 ? GgmlType::kF16 : GgmlType::kF32)->vec_dot,
                    f16 ? sizeof(uint16_t) : sizeof(float),
                    kv.head_dim,
                    params.scale,
                    params.window};
  const int group = params.n_heads / kv.n_kv_heads;
  const int64_t hd = kv.head_dim;
  auto run = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {  // i = token * n_heads + head
      const int64_t t = i / params.n_heads;
      const int h = static_cast<int>(i % params.n_heads);
      assert(positions[t] >= 0 && positions[t] < n_table * kv.block_size);
      attend_one(job, q + i * hd, positions[t], h / group, out + i * hd);
    }
  };
  const int64_t items = n_tokens * params.n_heads;
  if (pool != nullptr) {
    pool->parallel_for(0, items, 1, run);
  } else {
    run(0, items);
  }
}

void attention_reference(const float* q, const int32_t* positions, int64_t n_tokens, const float* k, const float* v,
                         int64_t n_ctx, int n_kv_heads, int head_dim, const AttentionParams& params, float* out) {
  const int group = params.n_heads / n_kv_heads;
  std::vector<double> w(static_cast<size_t>(n_ctx));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t p = positions[t];
    assert(p < n_ctx);
    const int64_t first = params.window > 0 ? std::max<int64_t>(0, p - params.window + 1) : 0;
    for (int h = 0; h < params.n_heads; ++h) {
      const float* qh = q + (t * params.n_heads + h) * head_dim;
      const int g = h / group;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t s = first; s <= p; ++s) {
        double dot = 0.0;
        for (int d = 0; d < head_dim; ++d) dot += static_cast<double>(qh[d]) * k[(s * n_kv_heads + g) * head_dim + d];
        w[static_cast<size_t>(s)] = dot * params.scale;
        max = std::max(max, w[static_cast<size_t>(s)]);
      }
      double sum = 0.0;
      for (int64_t s = first; s <= p; ++s)
        sum += (w[static_cast<size_t>(s)] = std::exp(w[static_cast<size_t>(s)] - max));
      float* o = out + (t * params.n_heads + h) * head_dim;
      for (int d = 0; d < head_dim; ++d) {
        double acc = 0.0;
        for (int64_t s = first; s <= p; ++s) acc += w[static_cast<size_t>(s)] * v[(s * n_kv_heads + g) * head_dim + d];
        o[d] = static_cast<float>(acc / sum);
      }
    }
  }
}

}  // namespace hearth::kernels
