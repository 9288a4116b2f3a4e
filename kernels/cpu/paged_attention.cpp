// Paged attention, tiled: one task is (KV head, a run of query rows), where the
// rows are the (token, query head) pairs that share that KV head, token-major.
// The task walks the KV blocks its rows can see once: each K/V block is
// converted to f32 once per task (not once per query row), then every row
// scores the block's keys, updates its online softmax (running max and sum,
// rescaled accumulator) and accumulates P x V directly into its output row.
//
// The per-(row, block) steps go through TileOps: a scalar reference build and
// an AVX2+FMA build (function-level target attributes, dispatched by
// cpu_level()). The AVX-512 level uses the AVX2 build: rows are short (one KV
// block, head_dim floats), so wider vectors buy little here.
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
#include "kernels/fp8.h"

namespace hearth::kernels {
namespace {

// Steps of one query row against n consecutive keys of one KV block. Key/value
// j of the block starts at k + j * stride (floats).
struct TileOps {
  // s[j] = scale * (q . k_j), j < n.
  void (*scores)(const float* q, const float* k, int64_t stride, int n, int64_t hd, float scale, float* s);
  // s[j] = exp(s[j] - max) in place (s[j] <= max); returns the sum.
  float (*exp_sum)(float* s, int n, float max);
  // acc = acc * r + sum_j p[j] * v_j.
  void (*accumulate)(const float* p, const float* v, int64_t stride, int n, int64_t hd, float r, float* acc);
};

// ---- scalar reference build ----

void scores_scalar(const float* q, const float* k, int64_t stride, int n, int64_t hd, float scale, float* s) {
  for (int j = 0; j < n; ++j) {
    const float* kj = k + j * stride;
    float dot = 0.0f;
    for (int64_t d = 0; d < hd; ++d) dot += q[d] * kj[d];
    s[j] = dot * scale;
  }
}

float exp_sum_scalar(float* s, int n, float max) {
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - max));
  return sum;
}

void accumulate_scalar(const float* p, const float* v, int64_t stride, int n, int64_t hd, float r, float* acc) {
  for (int64_t d = 0; d < hd; ++d) acc[d] *= r;
  for (int j = 0; j < n; ++j) {
    const float* vj = v + j * stride;
    for (int64_t d = 0; d < hd; ++d) acc[d] += p[j] * vj[d];
  }
}

constexpr TileOps kScalarOps{scores_scalar, exp_sum_scalar, accumulate_scalar};

// ---- AVX2 + FMA build ----

__attribute__((target("avx2,fma"))) inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) for x <= 0 (x = -inf gives 0). exp(x) = 2^n * exp(r), n = round(x /
// ln 2), |r| <= ln2 / 2, exp(r) by its degree-6 Taylor polynomial: truncation
// error <= 0.347^7 / 7! ~ 1.2e-7 relative, ~2e-7 with rounding. Inputs below
// -87 (results under ~1.6e-38) flush to 0; exp(0) is exactly 1.
__attribute__((target("avx2,fma"))) inline __m256 exp_nonpositive(__m256 x) {
  const __m256 floor = _mm256_set1_ps(-87.0f);
  const __m256 under = _mm256_cmp_ps(x, floor, _CMP_LT_OQ);
  x = _mm256_max_ps(x, floor);
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);  // ln 2 split hi + lo
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);  // 2^n by exponent add
  const __m256 y = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), e));
  return _mm256_andnot_ps(under, y);
}

// q . k over hd floats (any hd).
__attribute__((target("avx2,fma"))) float dot_avx2(const float* q, const float* k, int64_t hd) {
  __m256 a = _mm256_setzero_ps();
  int64_t d = 0;
  for (; d + 8 <= hd; d += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(k + d), a);
  float s = hsum8(a);
  for (; d < hd; ++d) s += q[d] * k[d];
  return s;
}

// Four keys per pass: one q load feeds four FMAs.
__attribute__((target("avx2,fma"))) void scores_avx2(const float* q, const float* k, int64_t stride, int n, int64_t hd,
                                                     float scale, float* s) {
  const int64_t hd8 = hd - hd % 8;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + j * stride;
    const float* k1 = k0 + stride;
    const float* k2 = k1 + stride;
    const float* k3 = k2 + stride;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t d = 0; d < hd8; d += 8) {
      const __m256 qv = _mm256_loadu_ps(q + d);
      a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + d), a0);
      a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k1 + d), a1);
      a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k2 + d), a2);
      a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k3 + d), a3);
    }
    float s4[4] = {hsum8(a0), hsum8(a1), hsum8(a2), hsum8(a3)};
    for (int64_t d = hd8; d < hd; ++d) {
      s4[0] += q[d] * k0[d];
      s4[1] += q[d] * k1[d];
      s4[2] += q[d] * k2[d];
      s4[3] += q[d] * k3[d];
    }
    for (int i = 0; i < 4; ++i) s[j + i] = s4[i] * scale;
  }
  for (; j < n; ++j) s[j] = dot_avx2(q, k + j * stride, hd) * scale;
}

__attribute__((target("avx2,fma"))) float exp_sum_avx2(float* s, int n, float max) {
  const __m256 m = _mm256_set1_ps(max);
  __m256 acc = _mm256_setzero_ps();
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(s + j), m));
    _mm256_storeu_ps(s + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (j < n) {  // the tail through a padded vector, so every lane uses the same exp
    alignas(32) float tail[8];
    const int rest = n - j;
    for (int i = 0; i < 8; ++i) tail[i] = i < rest ? s[j + i] - max : -std::numeric_limits<float>::infinity();
    const __m256 e = exp_nonpositive(_mm256_load_ps(tail));
    _mm256_store_ps(tail, e);
    std::copy_n(tail, rest, s + j);
    acc = _mm256_add_ps(acc, e);
  }
  return hsum8(acc);
}

// Columns in chunks of 32 (four registers stay live across all n keys).
__attribute__((target("avx2,fma"))) void accumulate_avx2(const float* p, const float* v, int64_t stride, int n,
                                                         int64_t hd, float r, float* acc) {
  const __m256 rv = _mm256_set1_ps(r);
  int64_t d = 0;
  for (; d + 32 <= hd; d += 32) {
    __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(acc + d), rv);
    __m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(acc + d + 8), rv);
    __m256 a2 = _mm256_mul_ps(_mm256_loadu_ps(acc + d + 16), rv);
    __m256 a3 = _mm256_mul_ps(_mm256_loadu_ps(acc + d + 24), rv);
    for (int j = 0; j < n; ++j) {
      const __m256 pj = _mm256_set1_ps(p[j]);
      const float* vj = v + j * stride + d;
      a0 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj), a0);
      a1 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 8), a1);
      a2 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 16), a2);
      a3 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 24), a3);
    }
    _mm256_storeu_ps(acc + d, a0);
    _mm256_storeu_ps(acc + d + 8, a1);
    _mm256_storeu_ps(acc + d + 16, a2);
    _mm256_storeu_ps(acc + d + 24, a3);
  }
  for (; d + 8 <= hd; d += 8) {
    __m256 a = _mm256_mul_ps(_mm256_loadu_ps(acc + d), rv);
    for (int j = 0; j < n; ++j) a = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(v + j * stride + d), a);
    _mm256_storeu_ps(acc + d, a);
  }
  for (; d < hd; ++d) {
    float a = acc[d] * r;
    for (int j = 0; j < n; ++j) a += p[j] * v[j * stride + d];
    acc[d] = a;
  }
}

constexpr TileOps kAvx2Ops{scores_avx2, exp_sum_avx2, accumulate_avx2};

const TileOps& tile_ops() {
  return cpu_level() >= CpuLevel::kAvx2 ? kAvx2Ops : kScalarOps;
}

// ---- the tiled driver ----

struct Job {
  const float* q;
  const int32_t* positions;
  const PagedKv* kv;
  const int32_t* block_table;
  const AttentionParams* params;
  float* out;
  const TileOps* ops;
  int group;  // query heads per KV head
};

// Per-thread scratch, grown on demand: f32 K and V of one block of one KV head
// ([block_size][head_dim]) and the running max / sum of each row of a tile.
// The 256 values of the fp8 codes times one scale (rebuilt when the scale changes).
struct Fp8Table {
  float scale = 0.0f;
  float value[256] = {};
};

const Fp8Table& fp8_table(float scale, Fp8Table& t) {
  if (t.scale != scale) {
    for (int c = 0; c < 256; ++c) t.value[c] = fp8_e4m3_to_f32(static_cast<uint8_t>(c)) * scale;
    t.scale = scale;
  }
  return t;
}

struct Scratch {
  std::vector<float> k, v, max, sum;
  Fp8Table k_table, v_table;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

int64_t first_visible(int64_t p, int window) {
  return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
}

// K and V rows lo..lo+n-1 (one block) of KV head g as f32 with a row stride.
struct BlockView {
  const float* k;
  const float* v;
  int64_t stride;
};

BlockView load_block(const Job& job, int g, int64_t lo, int n, Scratch& s) {
  const PagedKv& kv = *job.kv;
  const int64_t bs = kv.block_size, hd = kv.head_dim;
  const int64_t row = (static_cast<int64_t>(job.block_table[lo / bs]) * bs + lo % bs) * kv.n_kv_heads + g;
  const int64_t stride = kv.n_kv_heads * hd;  // elements between positions
  if (kv.dtype == KvDtype::kF32) {
    return {static_cast<const float*>(kv.k) + row * hd, static_cast<const float*>(kv.v) + row * hd, stride};
  }
  if (kv.dtype == KvDtype::kQ8_0) {
    const int64_t rb = kv_row_bytes(KvDtype::kQ8_0, hd);
    const auto* k8 = static_cast<const uint8_t*>(kv.k) + row * rb;
    const auto* v8 = static_cast<const uint8_t*>(kv.v) + row * rb;
    for (int j = 0; j < n; ++j) {
      dequantize_row_q8_0(k8 + j * kv.n_kv_heads * rb, s.k.data() + j * hd, hd);
      dequantize_row_q8_0(v8 + j * kv.n_kv_heads * rb, s.v.data() + j * hd, hd);
    }
    return {s.k.data(), s.v.data(), hd};
  }
  if (kv.dtype == KvDtype::kFp8E4M3) {
    const auto* k8 = static_cast<const uint8_t*>(kv.k) + row * hd;
    const auto* v8 = static_cast<const uint8_t*>(kv.v) + row * hd;
    const Fp8Table& kt = fp8_table(kv.k_scale, s.k_table);
    const Fp8Table& vt = fp8_table(kv.v_scale, s.v_table);
    for (int j = 0; j < n; ++j) {
      for (int64_t d = 0; d < hd; ++d) {
        s.k[static_cast<size_t>(j * hd + d)] = kt.value[k8[j * stride + d]];
        s.v[static_cast<size_t>(j * hd + d)] = vt.value[v8[j * stride + d]];
      }
    }
    return {s.k.data(), s.v.data(), hd};
  }
  const uint16_t* k16 = static_cast<const uint16_t*>(kv.k) + row * hd;
  const uint16_t* v16 = static_cast<const uint16_t*>(kv.v) + row * hd;
  for (int j = 0; j < n; ++j) {
    fp16_to_f32_row(k16 + j * stride, s.k.data() + j * hd, hd);
    fp16_to_f32_row(v16 + j * stride, s.v.data() + j * hd, hd);
  }
  return {s.k.data(), s.v.data(), hd};
}

// Rows r0..r1-1 of KV head g; row r is token r / group, query head
// g * group + r % group.
void attend_tile(const Job& job, int g, int64_t r0, int64_t r1) {
  const PagedKv& kv = *job.kv;
  const int64_t hd = kv.head_dim, bs = kv.block_size, n_rows = r1 - r0;
  const int n_heads = job.params->n_heads, window = job.params->window;
  Scratch& s = scratch();
  if (kv.dtype != KvDtype::kF32 && s.k.size() < static_cast<size_t>(bs * hd)) {
    s.k.resize(static_cast<size_t>(bs * hd));
    s.v.resize(static_cast<size_t>(bs * hd));
  }
  s.max.assign(static_cast<size_t>(n_rows), -std::numeric_limits<float>::infinity());
  s.sum.assign(static_cast<size_t>(n_rows), 0.0f);
  auto row_offset = [&](int64_t r) { return ((r / job.group) * n_heads + g * job.group + r % job.group) * hd; };
  int64_t kmin = std::numeric_limits<int64_t>::max(), kmax = -1;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t p = job.positions[r / job.group];
    kmin = std::min(kmin, first_visible(p, window));
    kmax = std::max(kmax, p);
    std::fill_n(job.out + row_offset(r), hd, 0.0f);
  }
  float scores[kMaxAttnBlockSize];
  for (int64_t start = kmin - kmin % bs; start <= kmax; start += bs) {
    const int64_t lo = std::max(start, kmin), hi = std::min(start + bs - 1, kmax);
    const BlockView b = load_block(job, g, lo, static_cast<int>(hi - lo + 1), s);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = job.positions[r / job.group];
      const int64_t jlo = std::max(lo, first_visible(p, window)) - lo, jhi = std::min(hi, p) - lo;
      if (jlo > jhi) continue;
      const int n = static_cast<int>(jhi - jlo + 1);
      job.ops->scores(job.q + row_offset(r), b.k + jlo * b.stride, b.stride, n, hd, job.params->scale, scores);
      const float block_max = *std::max_element(scores, scores + n);
      const size_t i = static_cast<size_t>(r - r0);
      const float new_max = std::max(s.max[i], block_max);
      const float rescale = std::exp(s.max[i] - new_max);  // exp(-inf) = 0 on the first block
      s.max[i] = new_max;
      s.sum[i] = s.sum[i] * rescale + job.ops->exp_sum(scores, n, new_max);
      job.ops->accumulate(scores, b.v + jlo * b.stride, b.stride, n, hd, rescale, job.out + row_offset(r));
    }
  }
  for (int64_t r = r0; r < r1; ++r) {
    const float inv = 1.0f / s.sum[static_cast<size_t>(r - r0)];
    float* o = job.out + row_offset(r);
    for (int64_t d = 0; d < hd; ++d) o[d] *= inv;
  }
}

// Rows per task: enough tasks to balance the pool (causal rows differ in
// cost), few enough rows to share each converted block widely. want_tasks:
// the tasks this sequence should make (its share of 4 per thread). A row's
// result does not depend on its tile (each row walks the same keys, block by
// block, whatever the tile's range), so tiling is free to vary.
int64_t rows_per_tile(int64_t rows_per_kv, int n_kv_heads, int64_t want_tasks) {
  constexpr int64_t kMaxTileRows = 32;
  const int64_t rows = (rows_per_kv * n_kv_heads + want_tasks - 1) / want_tasks;
  return std::clamp<int64_t>(rows, 1, kMaxTileRows);
}

// A sequence's tiling: tile rows, tiles per KV head, and its first task.
struct SeqTiles {
  int64_t tile = 1;
  int64_t n_tiles = 0;
  int64_t first_task = 0;
};

}  // namespace

void paged_attention_batch(std::span<const AttentionSeq> seqs, const PagedKv& kv, const AttentionParams& params,
                           ThreadPool* pool) {
  assert(kv.head_dim > 0 && kv.head_dim <= kMaxAttnHeadDim);
  assert(kv.block_size > 0 && kv.block_size <= kMaxAttnBlockSize);
  assert(kv.n_kv_heads > 0 && params.n_heads % kv.n_kv_heads == 0);
  if (seqs.empty()) return;
  const int group = params.n_heads / kv.n_kv_heads;
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  const auto n_seqs = static_cast<int64_t>(seqs.size());
  const int64_t want_tasks = std::max<int64_t>(1, (4 * threads + n_seqs - 1) / n_seqs);
  // Tiles of every sequence, in a small buffer reused by the calling thread.
  thread_local std::vector<SeqTiles> tiles;
  tiles.resize(seqs.size());
  int64_t tasks = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    for (int64_t t = 0; t < seqs[s].n_tokens; ++t) {
      assert(seqs[s].positions[t] >= 0 && seqs[s].positions[t] < seqs[s].n_table * kv.block_size);
    }
    const int64_t rows_per_kv = seqs[s].n_tokens * group;
    SeqTiles& st = tiles[s];
    st.tile = rows_per_tile(rows_per_kv, kv.n_kv_heads, want_tasks);
    st.n_tiles = (rows_per_kv + st.tile - 1) / st.tile;
    st.first_task = tasks;
    tasks += st.n_tiles * kv.n_kv_heads;
  }
  const TileOps& ops = tile_ops();
  const SeqTiles* t = tiles.data();
  auto run = [&](int64_t i0, int64_t i1) {
    size_t s = 0;
    for (int64_t i = i0; i < i1; ++i) {
      while (i >= t[s].first_task + t[s].n_tiles * kv.n_kv_heads) ++s;
      const AttentionSeq& seq = seqs[s];
      const Job job{seq.q, seq.positions, &kv, seq.block_table, &params, seq.out, &ops, group};
      const int64_t k = i - t[s].first_task;
      const int g = static_cast<int>(k % kv.n_kv_heads);
      const int64_t r0 = (t[s].n_tiles - 1 - k / kv.n_kv_heads) * t[s].tile;  // last tiles first: they see more keys
      attend_tile(job, g, r0, std::min(r0 + t[s].tile, seq.n_tokens * group));
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(0, tasks, 1, run);
  } else {
    run(0, tasks);
  }
}

void paged_attention(const float* q, const int32_t* positions, int64_t n_tokens, const PagedKv& kv,
                     const int32_t* block_table, int64_t n_table, const AttentionParams& params, float* out,
                     ThreadPool* pool) {
  const AttentionSeq seq{q, positions, n_tokens, block_table, n_table, out};
  paged_attention_batch(std::span<const AttentionSeq>(&seq, 1), kv, params, pool);
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
