// The paged-attention check shared by the CUDA attention tests: a pool of
// random K/V in the cache's precision, the kernels run for some query
// tokens, each output against the CPU attention_reference (double) over the
// values the kernels read.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/fp8.h"

namespace hearth::kernels::cuda::test {

struct Config {
  KvPrecision dtype;
  int head_dim, n_heads, n_kv_heads, block_size, window, split_len;  // split_len 0: choose_split_len
  AttentionKernel kernel = AttentionKernel::kAuto;
};

struct Token {
  int seq, pos;
};

// One stored K/V element as the cache holds it, and its value as the kernels read it.
inline uint16_t encode(KvPrecision dtype, float x, float scale, float* decoded) {
  if (dtype == KvPrecision::kF16) {
    const uint16_t h = f32_to_fp16(x);
    *decoded = fp16_to_f32(h);
    return h;
  }
  const uint8_t b = f32_to_fp8_e4m3(x * (1.0f / scale));
  *decoded = fp8_e4m3_to_f32(b) * scale;
  return b;
}

// One position's [row] of K or V as q8_0 (the CPU's quantize_row_q8_0, the
// store kernel's twin): codes to codes[dst..], f16 scales to scales[dst / 32..],
// the values the kernels read to decoded.
inline void encode_q8_row(const float* x, int64_t row, int64_t dst, std::vector<uint8_t>& codes,
                          std::vector<uint16_t>& scales, float* decoded) {
  std::vector<BlockQ8_0> blocks(static_cast<size_t>(row / 32));
  quantize_row_q8_0(x, blocks.data(), row);
  dequantize_row_q8_0(blocks.data(), decoded, row);
  for (int64_t j = 0; j < row; ++j) {
    codes[static_cast<size_t>(dst + j)] = static_cast<uint8_t>(blocks[static_cast<size_t>(j / 32)].qs[j % 32]);
  }
  for (int64_t b = 0; b < row / 32; ++b) scales[static_cast<size_t>(dst / 32 + b)] = blocks[static_cast<size_t>(b)].d;
}

// Which kernels a check runs: the split-KV ones for every token; the
// tensor-core prompt kernel (attention_prefill.h) for every run of
// consecutive positions of one sequence; or, as the CUDA backend does, the
// prompt kernel for runs of at least a tile and the split-KV kernels (with a
// token index) for the rest.
enum class Route { kSplit, kTiles, kMixed };

// The prompt tiles of `tokens` (runs of consecutive positions of one
// sequence, cut every tile_tokens) and the rows left to the split-KV kernels.
inline void plan_tiles(const std::vector<Token>& tokens, int tile_tokens, Route route, std::vector<PrefillTile>& tiles,
                       std::vector<int32_t>& rest) {
  const int n = static_cast<int>(tokens.size());
  for (int t = 0; t < n;) {
    int e = t + 1;
    while (e < n && tokens[static_cast<size_t>(e)].seq == tokens[static_cast<size_t>(t)].seq &&
           tokens[static_cast<size_t>(e)].pos == tokens[static_cast<size_t>(e - 1)].pos + 1) {
      ++e;
    }
    if (route == Route::kTiles || e - t >= tile_tokens) {
      for (int j = t; j < e; j += tile_tokens) {
        tiles.push_back(PrefillTile{j, std::min(tile_tokens, e - j), tokens[static_cast<size_t>(t)].seq,
                                    tokens[static_cast<size_t>(j)].pos});
      }
    } else {
      for (int j = t; j < e; ++j) rest.push_back(j);
    }
    t = e;
  }
}

// Fills a pool for sequences of the given lengths (random, disjoint blocks;
// every other slot keeps the NaN poison, so reading past a position shows),
// runs the kernels of `route` for `tokens` and compares each with
// attention_reference over that sequence's decoded K/V. Tolerance:
// |out - ref| <= 2e-5 * max|V| + 1e-6 for the split-KV kernels (f32), and
// 2e-3 * max|V| where the prompt kernel ran (Q and P rounded to f16: ~5e-4
// of a weight each; one key too many or too few moves an output by ~1/n of
// max|V|, checked from position 0 on, where n is small).
// outputs (optional): the kernels' outputs, for comparisons between kernels.
inline void check_attention(std::mt19937& rng, const Config& c, const std::vector<int>& seq_lens,
                            const std::vector<Token>& tokens, Route route = Route::kSplit,
                            std::vector<float>* outputs = nullptr) {
  SCOPED_TRACE(testing::Message() << "dtype=" << static_cast<int>(c.dtype) << " D=" << c.head_dim
                                  << " heads=" << c.n_heads << "/" << c.n_kv_heads << " bs=" << c.block_size
                                  << " window=" << c.window << " split=" << c.split_len
                                  << " kernel=" << static_cast<int>(c.kernel));
  const int n_seqs = static_cast<int>(seq_lens.size());
  const int max_ctx = *std::max_element(seq_lens.begin(), seq_lens.end());
  const int max_blocks = (max_ctx + c.block_size - 1) / c.block_size;
  const int64_t n_blocks = static_cast<int64_t>(n_seqs) * max_blocks + 3;
  const int64_t row = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;  // elements per slot
  const size_t esize = c.dtype == KvPrecision::kF16 ? 2 : 1;
  const float k_scale = c.dtype == KvPrecision::kF16 ? 1.0f : 0.02f,
              v_scale = c.dtype == KvPrecision::kF16 ? 1.0f : 0.03f;

  std::vector<int32_t> pool_ids(static_cast<size_t>(n_blocks));
  std::iota(pool_ids.begin(), pool_ids.end(), 0);
  std::shuffle(pool_ids.begin(), pool_ids.end(), rng);
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * max_blocks), -1);
  std::vector<uint8_t> kbytes(static_cast<size_t>(n_blocks * c.block_size * row) * esize, 0xff), vbytes = kbytes;
  // q8_0 scales: 0xffff (an f16 NaN) poisons unwritten slots.
  const bool q8 = c.dtype == KvPrecision::kQ8_0;
  std::vector<uint16_t> kd(q8 ? static_cast<size_t>(n_blocks * c.block_size * row / 32) : 1, 0xffff), vd = kd;
  std::vector<std::vector<float>> kref(static_cast<size_t>(n_seqs)), vref(static_cast<size_t>(n_seqs));
  float vmax = 0.0f;
  size_t next = 0;
  for (int s = 0; s < n_seqs; ++s) {
    const int len = seq_lens[static_cast<size_t>(s)];
    for (int b = 0; b < (len + c.block_size - 1) / c.block_size; ++b)
      tables[static_cast<size_t>(s * max_blocks + b)] = pool_ids[next++];
    const std::vector<float> k = random_floats(rng, len * row), v = random_floats(rng, len * row);
    kref[static_cast<size_t>(s)].resize(k.size());
    vref[static_cast<size_t>(s)].resize(v.size());
    for (int64_t pos = 0; q8 && pos < len; ++pos) {
      const int64_t slot =
          static_cast<int64_t>(tables[static_cast<size_t>(s * max_blocks + pos / c.block_size)]) * c.block_size +
          pos % c.block_size;
      encode_q8_row(k.data() + pos * row, row, slot * row, kbytes, kd, kref[static_cast<size_t>(s)].data() + pos * row);
      encode_q8_row(v.data() + pos * row, row, slot * row, vbytes, vd, vref[static_cast<size_t>(s)].data() + pos * row);
    }
    for (int64_t i = 0; q8 && i < len * row; ++i) {
      vmax = std::max(vmax, std::fabs(vref[static_cast<size_t>(s)][static_cast<size_t>(i)]));
    }
    for (int64_t i = 0; !q8 && i < len * row; ++i) {
      const int64_t pos = i / row;
      const int64_t slot =
          static_cast<int64_t>(tables[static_cast<size_t>(s * max_blocks + pos / c.block_size)]) * c.block_size +
          pos % c.block_size;
      const size_t at = static_cast<size_t>((slot * row + i % row)) * esize;
      const uint16_t kb =
          encode(c.dtype, k[static_cast<size_t>(i)], k_scale, &kref[static_cast<size_t>(s)][static_cast<size_t>(i)]);
      const uint16_t vb =
          encode(c.dtype, v[static_cast<size_t>(i)], v_scale, &vref[static_cast<size_t>(s)][static_cast<size_t>(i)]);
      std::memcpy(&kbytes[at], &kb, esize);  // little-endian: the low byte first for fp8
      std::memcpy(&vbytes[at], &vb, esize);
      vmax = std::max(vmax, std::fabs(vref[static_cast<size_t>(s)][static_cast<size_t>(i)]));
    }
  }
  const int n_tokens = static_cast<int>(tokens.size());
  std::vector<int32_t> positions, token_seq;
  for (const Token& t : tokens) positions.push_back(t.pos), token_seq.push_back(t.seq);
  const std::vector<float> q = random_floats(rng, static_cast<int64_t>(n_tokens) * c.n_heads * c.head_dim);

  DeviceBuffer<uint8_t> dk(kbytes), dv(vbytes);
  DeviceBuffer<uint16_t> dkd(kd), dvd(vd);
  DeviceBuffer<int32_t> dtables(tables), dpos(positions), dseq(token_seq);
  DeviceBuffer<float> dq(q), dout(q.size());  // 0xff: NaN poison
  const PagedKvCache kv{dk.get(),     dv.get(),     c.dtype,    k_scale,   v_scale,  n_blocks,
                        c.block_size, c.n_kv_heads, c.head_dim, dkd.get(), dvd.get()};
  const AttentionBatch batch{dq.get(), dpos.get(), dseq.get(), dtables.get(), max_blocks, n_tokens, max_ctx};
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  std::vector<PrefillTile> tiles;
  std::vector<int32_t> rest;
  if (route == Route::kSplit) {
    for (int t = 0; t < n_tokens; ++t) rest.push_back(t);
  } else {
    const int tile_tokens = prefill_tile_tokens(c.head_dim, c.n_heads, c.n_kv_heads);
    ASSERT_GT(tile_tokens, 0);
    plan_tiles(tokens, tile_tokens, route, tiles, rest);
  }
  std::vector<bool> on_tiles(static_cast<size_t>(n_tokens), true);
  for (int32_t t : rest) on_tiles[static_cast<size_t>(t)] = false;
  const int n_rest = static_cast<int>(rest.size());
  const int split = c.split_len > 0 ? c.split_len : choose_split_len(n_rest, c.n_heads, c.n_kv_heads, max_ctx, 132);
  const PagedAttentionParams params{c.n_heads, scale, c.window, split, c.kernel};
  DeviceBuffer<int32_t> drest(rest.empty() ? std::vector<int32_t>{0} : rest);
  if (!tiles.empty()) {
    std::vector<int32_t> words(tiles.size() * 4);
    std::memcpy(words.data(), tiles.data(), tiles.size() * sizeof(PrefillTile));
    DeviceBuffer<int32_t> dtiles(words);
    const PrefillBatch pb{dq.get(), reinterpret_cast<const PrefillTile*>(dtiles.get()), static_cast<int>(tiles.size()),
                          dtables.get(), max_blocks};
    ASSERT_CUDA_OK(paged_attention_prefill(kv, pb, params, dout.get(), nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  if (n_rest > 0) {
    AttentionBatch part = batch;
    part.n_tokens = n_rest;
    part.token_index = route == Route::kSplit ? nullptr : drest.get();
    const size_t ws_bytes = paged_attention_workspace_bytes(n_rest, c.n_heads, c.head_dim, max_ctx, split);
    DeviceBuffer<uint8_t> ws(ws_bytes);
    ASSERT_CUDA_OK(paged_attention(kv, part, params, dout.get(), ws.get(), ws_bytes, nullptr));
  }
  const std::vector<float> out = dout.download();
  if (outputs != nullptr) *outputs = out;

  const kernels::AttentionParams ref_params{c.n_heads, scale, c.window};
  const int64_t tok_elems = static_cast<int64_t>(c.n_heads) * c.head_dim;
  std::vector<float> ref(static_cast<size_t>(tok_elems));
  for (int t = 0; t < n_tokens; ++t) {
    const auto s = static_cast<size_t>(tokens[static_cast<size_t>(t)].seq);
    const int32_t pos = tokens[static_cast<size_t>(t)].pos;
    attention_reference(q.data() + t * tok_elems, &pos, 1, kref[s].data(), vref[s].data(), seq_lens[s], c.n_kv_heads,
                        c.head_dim, ref_params, ref.data());
    for (int64_t i = 0; i < tok_elems; ++i) {
      const float got = out[static_cast<size_t>(t * tok_elems + i)];
      ASSERT_TRUE(std::isfinite(got)) << "token " << t << " element " << i;
      const double tol = on_tiles[static_cast<size_t>(t)] ? 2e-3 * vmax : 2e-5 * vmax + 1e-6;
      ASSERT_LE(std::fabs(got - ref[static_cast<size_t>(i)]), tol) << "token " << t << " element " << i;
    }
  }
}

// Prefill: tokens start..start+n-1 of one sequence whose first `start` positions are cached.
inline std::vector<Token> prefill_tokens(int start, int n) {
  std::vector<Token> t;
  for (int i = 0; i < n; ++i) t.push_back({0, start + i});
  return t;
}

// Decode: the last position of every sequence.
inline std::vector<Token> decode_tokens(const std::vector<int>& lens) {
  std::vector<Token> t;
  for (size_t s = 0; s < lens.size(); ++s) t.push_back({static_cast<int>(s), lens[s] - 1});
  return t;
}

}  // namespace hearth::kernels::cuda::test
