// Paged attention (prefill with a cached prefix, batched decode, GQA, sliding
// window, f16, fp8 and q8_0 caches) against the CPU attention_reference (double)
// over the decoded cache values; and the store-KV kernel byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/store_kv.h"
#include "kernels/fp8.h"

namespace hearth::kernels::cuda::test {
namespace {

struct Config {
  KvPrecision dtype;
  int head_dim, n_heads, n_kv_heads, block_size, window, split_len;  // split_len 0: choose_split_len
  AttentionKernel kernel = AttentionKernel::kAuto;
};

// Runs `fn(kernel)` for the v12 kernels and the wide ones (v13): both must
// compute the same function, whichever the environment selects by default.
template <typename Fn>
void for_each_kernel(Fn&& fn) {
  for (AttentionKernel k : {AttentionKernel::kV12, AttentionKernel::kWide}) {
    SCOPED_TRACE(k == AttentionKernel::kV12 ? "kernel v12" : "kernel wide");
    fn(k);
  }
}

struct Token {
  int seq, pos;
};

// One stored K/V element as the cache holds it, and its value as the kernels read it.
uint16_t encode(KvPrecision dtype, float x, float scale, float* decoded) {
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
void encode_q8_row(const float* x, int64_t row, int64_t dst, std::vector<uint8_t>& codes, std::vector<uint16_t>& scales,
                   float* decoded) {
  std::vector<BlockQ8_0> blocks(static_cast<size_t>(row / 32));
  quantize_row_q8_0(x, blocks.data(), row);
  dequantize_row_q8_0(blocks.data(), decoded, row);
  for (int64_t j = 0; j < row; ++j) {
    codes[static_cast<size_t>(dst + j)] = static_cast<uint8_t>(blocks[static_cast<size_t>(j / 32)].qs[j % 32]);
  }
  for (int64_t b = 0; b < row / 32; ++b) scales[static_cast<size_t>(dst / 32 + b)] = blocks[static_cast<size_t>(b)].d;
}

// Fills a pool for sequences of the given lengths (random, disjoint blocks;
// every other slot keeps the NaN poison, so reading past a position shows),
// runs the kernel for `tokens` and compares each with attention_reference over
// that sequence's decoded K/V. Tolerance: |out - ref| <= 2e-5 * max|V| + 1e-6.
void check_attention(std::mt19937& rng, const Config& c, const std::vector<int>& seq_lens,
                     const std::vector<Token>& tokens) {
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
  const int split = c.split_len > 0 ? c.split_len : choose_split_len(n_tokens, c.n_heads, c.n_kv_heads, max_ctx, 132);
  const PagedAttentionParams params{c.n_heads, scale, c.window, split, c.kernel};
  const size_t ws_bytes = paged_attention_workspace_bytes(n_tokens, c.n_heads, c.head_dim, max_ctx, split);
  DeviceBuffer<uint8_t> ws(ws_bytes);
  ASSERT_CUDA_OK(paged_attention(kv, batch, params, dout.get(), ws.get(), ws_bytes, nullptr));
  const std::vector<float> out = dout.download();

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
      ASSERT_LE(std::fabs(got - ref[static_cast<size_t>(i)]), 2e-5 * vmax + 1e-6) << "token " << t << " element " << i;
    }
  }
}

// Prefill: tokens start..start+n-1 of one sequence whose first `start` positions are cached.
std::vector<Token> prefill_tokens(int start, int n) {
  std::vector<Token> t;
  for (int i = 0; i < n; ++i) t.push_back({0, start + i});
  return t;
}

// Decode: the last position of every sequence.
std::vector<Token> decode_tokens(const std::vector<int>& lens) {
  std::vector<Token> t;
  for (size_t s = 0; s < lens.size(); ++s) t.push_back({static_cast<int>(s), lens[s] - 1});
  return t;
}

TEST(CudaPagedAttention, PrefillWithCachedPrefix) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(31);
  for_each_kernel([&](AttentionKernel k) {
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 64, k}, {340}, prefill_tokens(300, 40));
    check_attention(rng, {KvPrecision::kF16, 64, 9, 3, 32, 0, 0, k}, {100}, prefill_tokens(0, 100));
    check_attention(rng, {KvPrecision::kFp8E4M3, 64, 8, 2, 16, 50, 64, k}, {217}, prefill_tokens(200, 17));
    check_attention(rng, {KvPrecision::kF16, 96, 4, 4, 7, 0, 32, k}, {75}, prefill_tokens(45, 30));
    check_attention(rng, {KvPrecision::kQ8_0, 128, 32, 8, 16, 0, 64, k}, {340}, prefill_tokens(300, 40));
    check_attention(rng, {KvPrecision::kQ8_0, 96, 6, 2, 7, 20, 32, k}, {75}, prefill_tokens(45, 30));
  });
}

TEST(CudaPagedAttention, BatchedDecodeSplitKv) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(32);
  for_each_kernel([&](AttentionKernel k) {
    const std::vector<int> lens = {1, 1500, 64, 65, 777};
    check_attention(rng, {KvPrecision::kFp8E4M3, 128, 28, 4, 16, 0, 128, k}, lens, decode_tokens(lens));
    check_attention(rng, {KvPrecision::kF16, 128, 28, 4, 16, 0, 0, k}, lens, decode_tokens(lens));
    const std::vector<int> lens2 = {300, 129, 2};
    check_attention(rng, {KvPrecision::kF16, 256, 16, 1, 8, 100, 64, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kF16, 32, 2, 1, 16, 0, 64, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kQ8_0, 128, 28, 4, 16, 0, 128, k}, lens, decode_tokens(lens));
    check_attention(rng, {KvPrecision::kQ8_0, 256, 16, 1, 8, 100, 64, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kQ8_0, 32, 2, 1, 16, 0, 64, k}, lens2, decode_tokens(lens2));
  });
}

TEST(CudaPagedAttention, MixedSequencesAndPositions) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(33);
  for_each_kernel([&](AttentionKernel k) {
    const std::vector<int> lens = {500, 90, 260};
    std::vector<Token> tokens;
    for (int i = 0; i < 24; ++i) {
      const int s = std::uniform_int_distribution<int>(0, 2)(rng);
      tokens.push_back({s, std::uniform_int_distribution<int>(0, lens[static_cast<size_t>(s)] - 1)(rng)});
    }
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 96, k}, lens, tokens);
    check_attention(rng, {KvPrecision::kFp8E4M3, 64, 12, 2, 32, 0, 64, k}, lens, tokens);
    check_attention(rng, {KvPrecision::kQ8_0, 64, 12, 2, 32, 0, 64, k}, lens, tokens);
  });
}

// Long contexts cut into many chunks (up to 512), the 8B shape and others
// with GQA, f16 and fp8, sliding windows, chunk lengths that are not
// multiples of a block's rows, and sequences of different lengths in one
// batch (the shorter ones leave whole chunks empty).
TEST(CudaPagedAttention, LongContextManySplits) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(35);
  for_each_kernel([&](AttentionKernel k) {
    const std::vector<int> lens = {4096, 8191, 3000, 1};
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 16, k}, lens, decode_tokens(lens));
    check_attention(rng, {KvPrecision::kFp8E4M3, 128, 32, 8, 16, 0, 0, k}, lens, decode_tokens(lens));
    check_attention(rng, {KvPrecision::kQ8_0, 128, 32, 8, 16, 0, 0, k}, lens, decode_tokens(lens));
    const std::vector<int> one = {4100};
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 64, k}, one, decode_tokens(one));
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0, k}, one, decode_tokens(one));
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 48, k}, one, decode_tokens(one));
    const std::vector<int> lens2 = {5000, 2049};
    check_attention(rng, {KvPrecision::kF16, 64, 9, 3, 32, 0, 32, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kFp8E4M3, 256, 8, 2, 16, 1000, 0, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kF16, 32, 12, 4, 16, 0, 80, k}, lens2, decode_tokens(lens2));
    check_attention(rng, {KvPrecision::kF16, 128, 40, 8, 16, 0, 0, k}, lens2, decode_tokens(lens2));  // groups of 5
    // Prefill of 96 tokens at the end of a 3,000-token cache, one chunk per token and many.
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0, k}, {3000}, prefill_tokens(2904, 96));
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 256, k}, {3000}, prefill_tokens(2904, 96));
  });
}

// choose_split_len: a multiple of 16 that covers the context in at most
// 65,535 chunks, and more chunks for one sequence than for many.
TEST(CudaPagedAttention, ChooseSplitLen) {
  for (int ctx : {1, 17, 256, 4096, 32768, 131072}) {
    for (int tokens : {1, 16, 64, 512}) {
      const int len = choose_split_len(tokens, 32, 8, ctx, 132);
      EXPECT_GT(len, 0);
      EXPECT_EQ(len % 16, 0) << ctx << " " << tokens;
      EXPECT_LE((ctx + len - 1) / len, 65535);
    }
    const int one = choose_split_len(1, 32, 8, ctx, 132), many = choose_split_len(64, 32, 8, ctx, 132);
    EXPECT_LE(one, many) << ctx;
  }
  EXPECT_GE(4096 / choose_split_len(1, 32, 8, 4096, 132), 32);  // the 8B at 4k: many chunks
}

TEST(CudaPagedAttention, RejectsBadArguments) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> k(4096), v(4096);
  DeviceBuffer<float> q(1024), out(1024);
  DeviceBuffer<int32_t> table(4), pos(1);
  const PagedKvCache kv{k.get(), v.get(), KvPrecision::kF16, 1.0f, 1.0f, 4, 4, 1, 80};  // head_dim 80: unsupported
  const AttentionBatch batch{q.get(), pos.get(), nullptr, table.get(), 4, 1, 16};
  EXPECT_EQ(paged_attention(kv, batch, {1, 1.0f, 0, 64}, out.get(), nullptr, 0, nullptr).code, cudaErrorInvalidValue);
  PagedKvCache kv2 = kv;
  kv2.head_dim = 64;
  EXPECT_EQ(paged_attention(kv2, batch, {1, 1.0f, 0, 0}, out.get(), nullptr, 0, nullptr).code,
            cudaErrorInvalidValue);  // split_len 0
  EXPECT_EQ(paged_attention(kv2, batch, {1, 1.0f, 0, 4}, out.get(), nullptr, 0, nullptr).code,
            cudaErrorInvalidValue);  // 4 chunks need a workspace
  EXPECT_EQ(paged_attention(kv2, batch, {2, 1.0f, 0, 64}, out.get(), nullptr, 0, nullptr).code, cudaSuccess);
}

// q8_0: every written slot holds the CPU's quantize_row_q8_0 codes and
// scales bit for bit (same arithmetic); others keep the poison. Magnitudes
// vary per group so scales differ.
TEST(CudaStoreKv, WritesQ8SlotsAsTheCpuQuantizes) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(36);
  const int n_kv = 2, D = 96, bs = 8;
  const int64_t n_blocks = 12, row = n_kv * D;
  std::vector<int32_t> slots = {3, 95, 40, -1, 41, 0, 96};  // -1 and 96 (past the pool) are skipped
  const auto n = static_cast<int64_t>(slots.size());
  std::vector<float> k = random_floats(rng, n * row, 3.0f), v = random_floats(rng, n * row);
  for (int64_t i = 0; i < n * row; ++i) k[static_cast<size_t>(i)] *= std::ldexp(1.0f, static_cast<int>(i / 32 % 9) - 4);
  for (int64_t i = 0; i < 32; ++i) v[static_cast<size_t>(i)] = 0.0f;  // a zero group: scale 0, codes 0
  const size_t n_elems = static_cast<size_t>(n_blocks * bs * row);
  DeviceBuffer<uint8_t> dk(std::vector<uint8_t>(n_elems, 0xff)), dv(std::vector<uint8_t>(n_elems, 0xff));
  DeviceBuffer<uint16_t> dkd(std::vector<uint16_t>(n_elems / 32, 0xffff)),
      dvd(std::vector<uint16_t>(n_elems / 32, 0xffff));
  DeviceBuffer<float> dkn(k), dvn(v);
  DeviceBuffer<int32_t> dslots(slots);
  const PagedKvCache kv{dk.get(), dv.get(), KvPrecision::kQ8_0, 1.0f,     1.0f, n_blocks, bs,
                        n_kv,     D,        dkd.get(),          dvd.get()};
  ASSERT_CUDA_OK(store_kv(kv, dkn.get(), dvn.get(), dslots.get(), n, nullptr));
  std::vector<uint8_t> kwant(n_elems, 0xff), vwant(n_elems, 0xff);
  std::vector<uint16_t> kdwant(n_elems / 32, 0xffff), vdwant(n_elems / 32, 0xffff);
  std::vector<float> unused(static_cast<size_t>(row));
  for (int64_t t = 0; t < n; ++t) {
    const int32_t slot = slots[static_cast<size_t>(t)];
    if (slot < 0 || slot >= n_blocks * bs) continue;
    encode_q8_row(k.data() + t * row, row, slot * row, kwant, kdwant, unused.data());
    encode_q8_row(v.data() + t * row, row, slot * row, vwant, vdwant, unused.data());
  }
  EXPECT_EQ(dk.download(), kwant);
  EXPECT_EQ(dv.download(), vwant);
  EXPECT_EQ(dkd.download(), kdwant);
  EXPECT_EQ(dvd.download(), vdwant);
}

// Every written slot holds the exact f16 / fp8 encoding; others keep the poison.
TEST(CudaStoreKv, WritesSlotsExactly) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(34);
  for (KvPrecision dtype : {KvPrecision::kF16, KvPrecision::kFp8E4M3}) {
    const int n_kv = 4, D = 64, bs = 16;
    const int64_t n_blocks = 10, row = n_kv * D;
    const size_t esize = dtype == KvPrecision::kF16 ? 2 : 1;
    const float ks = 0.05f, vs = 0.01f;
    std::vector<int32_t> slots = {0, 17, 159, 40, -1, 41, 1000};  // -1 and 1000 (past the pool) are skipped
    const auto n = static_cast<int64_t>(slots.size());
    const std::vector<float> k = random_floats(rng, n * row, 3.0f), v = random_floats(rng, n * row);
    DeviceBuffer<uint8_t> dk(static_cast<size_t>(n_blocks * bs * row) * esize), dv(dk.size());
    DeviceBuffer<float> dkn(k), dvn(v);
    DeviceBuffer<int32_t> dslots(slots);
    const PagedKvCache kv{dk.get(), dv.get(), dtype, ks, vs, n_blocks, bs, n_kv, D};
    ASSERT_CUDA_OK(store_kv(kv, dkn.get(), dvn.get(), dslots.get(), n, nullptr));
    const std::vector<uint8_t> kc = dk.download(), vc = dv.download();
    std::vector<uint8_t> kwant(kc.size(), 0xff), vwant(vc.size(), 0xff);
    for (int64_t t = 0; t < n; ++t) {
      const int32_t slot = slots[static_cast<size_t>(t)];
      if (slot < 0 || slot >= n_blocks * bs) continue;
      for (int64_t i = 0; i < row; ++i) {
        float unused = 0.0f;
        const uint16_t kb = encode(dtype, k[static_cast<size_t>(t * row + i)], ks, &unused);
        const uint16_t vb = encode(dtype, v[static_cast<size_t>(t * row + i)], vs, &unused);
        std::memcpy(&kwant[static_cast<size_t>(slot * row + i) * esize], &kb, esize);
        std::memcpy(&vwant[static_cast<size_t>(slot * row + i) * esize], &vb, esize);
      }
    }
    EXPECT_EQ(kc, kwant);
    EXPECT_EQ(vc, vwant);
  }
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
