// Paged attention (prefill with a cached prefix, batched decode, GQA, sliding
// window, f16, fp8 and q8_0 caches) against the CPU attention_reference (double)
// over the decoded cache values; and the store-KV kernel byte for byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "attention_check.h"
#include "cuda_test_util.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/store_kv.h"

namespace hearth::kernels::cuda::test {
namespace {

// Runs `fn(kernel)` for the v12 kernels, the wide ones (v13) and the stream
// one (v20; q8_0 caches take the wide one): all must compute the same
// function, whichever the environment selects by default.
template <typename Fn>
void for_each_kernel(Fn&& fn) {
  for (AttentionKernel k : {AttentionKernel::kV12, AttentionKernel::kWide, AttentionKernel::kStream}) {
    SCOPED_TRACE(k == AttentionKernel::kV12    ? "kernel v12"
                 : k == AttentionKernel::kWide ? "kernel wide"
                                               : "kernel stream");
    fn(k);
  }
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

// The stream kernel stages the wide kernel's rows in shared memory and runs
// its arithmetic: for the same chunks the outputs are the same bits. Chunks
// of 1 to 9 tiles (a tile: 32 positions at head_dim 128, 16 at 256, 128 at
// 32), chunk ends inside a tile, windows, one chunk (no combine), f16 and fp8.
TEST(CudaPagedAttention, StreamEqualsWide) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  struct Case {
    Config c;
    std::vector<int> lens;
  };
  const std::vector<Case> cases = {
      {{KvPrecision::kF16, 128, 32, 8, 16, 0, 64}, {4096, 1, 77, 300}},
      {{KvPrecision::kF16, 128, 32, 8, 16, 0, 288}, {4100, 2049}},
      {{KvPrecision::kF16, 128, 32, 8, 16, 0, 0}, {4096}},
      {{KvPrecision::kFp8E4M3, 128, 32, 8, 16, 0, 96}, {3000, 33}},
      {{KvPrecision::kF16, 64, 9, 3, 32, 0, 80}, {5000, 2049}},
      {{KvPrecision::kF16, 256, 8, 2, 16, 1000, 48}, {5000, 700}},
      {{KvPrecision::kFp8E4M3, 32, 12, 4, 16, 0, 272}, {2000, 129}},
      {{KvPrecision::kF16, 128, 40, 8, 8, 0, 4096}, {4000, 5}},  // groups of 5, one chunk
  };
  for (const Case& k : cases) {
    std::vector<float> wide, stream;
    Config c = k.c;
    std::mt19937 r1(77), r2(77);
    c.kernel = AttentionKernel::kWide;
    check_attention(r1, c, k.lens, decode_tokens(k.lens), Route::kSplit, &wide);
    c.kernel = AttentionKernel::kStream;
    check_attention(r2, c, k.lens, decode_tokens(k.lens), Route::kSplit, &stream);
    ASSERT_EQ(wide.size(), stream.size());
    EXPECT_EQ(std::memcmp(wide.data(), stream.data(), wide.size() * sizeof(float)), 0)
        << "head_dim " << c.head_dim << " split " << c.split_len;
  }
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
