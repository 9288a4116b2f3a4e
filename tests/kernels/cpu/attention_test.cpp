// Paged attention over a shuffled block table equals plain attention over
// contiguous K/V (F32, F16, Q8_0 and FP8 storage, GQA, sliding window, prefill batches).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quantize.h"
#include "kernels/fp8.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

struct Case {
  int n_heads, n_kv_heads, head_dim, block_size, n_ctx, n_tokens, window;
  KvDtype dtype;
  bool shuffle_positions = false;  // batch tokens out of position order
};

void run_case(const Case& c, std::mt19937& rng, ThreadPool* pool) {
  const int64_t row = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;  // floats per position
  std::vector<float> k = test::random_floats(rng, c.n_ctx * row), v = test::random_floats(rng, c.n_ctx * row);
  if (c.dtype == KvDtype::kF16) {  // the reference sees exactly the stored values
    for (float& f : k) f = fp16_to_f32(f32_to_fp16(f));
    for (float& f : v) f = fp16_to_f32(f32_to_fp16(f));
  }
  const int64_t rb = kv_row_bytes(KvDtype::kQ8_0, c.head_dim) * c.n_kv_heads;  // Q8_0 bytes per position
  std::vector<uint8_t> k8(static_cast<size_t>(c.n_ctx * rb)), v8(k8.size());
  if (c.dtype == KvDtype::kQ8_0) {  // stored as blocks of 32; the reference sees their values
    quantize_row_q8_0(k.data(), k8.data(), c.n_ctx * row);
    quantize_row_q8_0(v.data(), v8.data(), c.n_ctx * row);
    dequantize_row_q8_0(k8.data(), k.data(), c.n_ctx * row);
    dequantize_row_q8_0(v8.data(), v.data(), c.n_ctx * row);
  }
  // FP8: codes of value / scale (a scale per tensor, as the cache keeps); the
  // reference sees code * scale.
  const float k_scale = kv_fp8_scale(2.0f), v_scale = kv_fp8_scale(1.5f);
  std::vector<uint8_t> kf(k.size()), vf(v.size());
  if (c.dtype == KvDtype::kFp8E4M3) {
    for (size_t i = 0; i < k.size(); ++i) {
      kf[i] = f32_to_fp8_e4m3(k[i] / k_scale);
      k[i] = fp8_e4m3_to_f32(kf[i]) * k_scale;
      vf[i] = f32_to_fp8_e4m3(v[i] / v_scale);
      v[i] = fp8_e4m3_to_f32(vf[i]) * v_scale;
    }
  }
  // Scatter positions into a pool with spare blocks, in shuffled block order.
  const int n_table = (c.n_ctx + c.block_size - 1) / c.block_size;
  const int n_pool = n_table + 3;
  std::vector<int32_t> ids(static_cast<size_t>(n_pool));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  const std::vector<int32_t> table(ids.begin(), ids.begin() + n_table);
  const size_t pool_elems = static_cast<size_t>(n_pool) * c.block_size * row;
  std::vector<float> kp(pool_elems, NAN), vp(pool_elems, NAN);  // unused slots poison the result if read
  for (int p = 0; p < c.n_ctx; ++p) {
    const size_t dst = (static_cast<size_t>(table[p / c.block_size]) * c.block_size + p % c.block_size) * row;
    std::copy_n(k.data() + p * row, row, kp.data() + dst);
    std::copy_n(v.data() + p * row, row, vp.data() + dst);
  }
  std::vector<uint16_t> kh(pool_elems), vh(pool_elems);
  f32_to_fp16_row_scalar(kp.data(), kh.data(), static_cast<int64_t>(pool_elems));
  f32_to_fp16_row_scalar(vp.data(), vh.data(), static_cast<int64_t>(pool_elems));
  // Q8_0 pool: unused slots all 0xff (a NaN scale) poison the result if read.
  std::vector<uint8_t> kq(static_cast<size_t>(n_pool) * c.block_size * rb, 0xff), vq(kq.size(), 0xff);
  for (int p = 0; p < c.n_ctx; ++p) {
    const size_t dst = (static_cast<size_t>(table[p / c.block_size]) * c.block_size + p % c.block_size) * rb;
    std::copy_n(k8.data() + p * rb, rb, kq.data() + dst);
    std::copy_n(v8.data() + p * rb, rb, vq.data() + dst);
  }
  // FP8 pool: unused slots hold 0x7f (NaN) and poison the result if read.
  std::vector<uint8_t> kfp(pool_elems, 0x7f), vfp(pool_elems, 0x7f);
  for (int p = 0; p < c.n_ctx; ++p) {
    const size_t dst = (static_cast<size_t>(table[p / c.block_size]) * c.block_size + p % c.block_size) * row;
    std::copy_n(kf.data() + p * row, row, kfp.data() + dst);
    std::copy_n(vf.data() + p * row, row, vfp.data() + dst);
  }
  const void* kd = c.dtype == KvDtype::kF16       ? static_cast<const void*>(kh.data())
                   : c.dtype == KvDtype::kQ8_0    ? static_cast<const void*>(kq.data())
                   : c.dtype == KvDtype::kFp8E4M3 ? static_cast<const void*>(kfp.data())
                                                  : static_cast<const void*>(kp.data());
  const void* vd = c.dtype == KvDtype::kF16       ? static_cast<const void*>(vh.data())
                   : c.dtype == KvDtype::kQ8_0    ? static_cast<const void*>(vq.data())
                   : c.dtype == KvDtype::kFp8E4M3 ? static_cast<const void*>(vfp.data())
                                                  : static_cast<const void*>(vp.data());
  const PagedKv kv{kd, vd, c.dtype, c.block_size, c.n_kv_heads, c.head_dim, k_scale, v_scale};
  // The batch: the last n_tokens positions of the context (a prefill chunk).
  std::vector<int32_t> pos(static_cast<size_t>(c.n_tokens));
  std::iota(pos.begin(), pos.end(), c.n_ctx - c.n_tokens);
  if (c.shuffle_positions) std::shuffle(pos.begin(), pos.end(), rng);
  const AttentionParams params{c.n_heads, 1.0f / std::sqrt(static_cast<float>(c.head_dim)), c.window};
  const std::vector<float> q = test::random_floats(rng, static_cast<int64_t>(c.n_tokens) * c.n_heads * c.head_dim);
  std::vector<float> got(q.size()), expect(q.size());
  paged_attention(q.data(), pos.data(), c.n_tokens, kv, table.data(), n_table, params, got.data(), pool);
  attention_reference(q.data(), pos.data(), c.n_tokens, k.data(), v.data(), c.n_ctx, c.n_kv_heads, c.head_dim, params,
                      expect.data());
  // Outputs are convex combinations of V rows (|v| ~ 1): f32 accumulation error.
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], expect[i], 2e-5 * (1.0 + std::fabs(expect[i])))
        << "heads " << c.n_heads << "/" << c.n_kv_heads << " dim " << c.head_dim << " bs " << c.block_size << " ctx "
        << c.n_ctx << " window " << c.window << " at " << i;
  }
}

TEST(PagedAttention, EqualsContiguousReference) {
  std::mt19937 rng(51);
  ThreadPool pool(2);
  for (int trial = 0; trial < 60; ++trial) {
    Case c{};
    c.n_kv_heads = 1 + static_cast<int>(rng() % 3);
    c.n_heads = c.n_kv_heads * (1 + static_cast<int>(rng() % 4));
    const int dims[] = {8, 32, 64, 80, 128, 256};
    c.head_dim = dims[rng() % 6];
    c.block_size = trial % 3 == 0 ? 16 : 1 + static_cast<int>(rng() % 40);
    c.n_ctx = 1 + static_cast<int>(rng() % 300);
    c.n_tokens = 1 + static_cast<int>(rng() % std::min(c.n_ctx, 20));
    c.window = trial % 4 == 0 ? 1 + static_cast<int>(rng() % 64) : 0;
    c.dtype = trial % 2 ? KvDtype::kF16 : KvDtype::kF32;
    if (trial % 5 == 2 && c.head_dim % kKvQ8Block == 0) c.dtype = KvDtype::kQ8_0;
    if (trial % 5 == 4) c.dtype = KvDtype::kFp8E4M3;
    run_case(c, rng, trial % 2 ? &pool : nullptr);
  }
}

TEST(PagedAttention, LongPrefillManyTilesEqualsReference) {
  // Long batches split into many (KV head, query rows) tiles across threads,
  // including batches whose tokens are not in position order.
  std::mt19937 rng(77);
  ThreadPool pool(3);
  for (int trial = 0; trial < 12; ++trial) {
    Case c{};
    c.n_kv_heads = 1 + static_cast<int>(rng() % 3);
    c.n_heads = c.n_kv_heads * (1 + static_cast<int>(rng() % 4));
    const int dims[] = {16, 64, 72};
    c.head_dim = dims[rng() % 3];
    c.block_size = trial % 2 == 0 ? 16 : 1 + static_cast<int>(rng() % 40);
    c.n_ctx = 100 + static_cast<int>(rng() % 300);
    c.n_tokens = 40 + static_cast<int>(rng() % 60);
    c.window = trial % 3 == 0 ? 1 + static_cast<int>(rng() % 80) : 0;
    c.dtype = trial % 2 ? KvDtype::kF16 : KvDtype::kF32;
    if (trial % 4 == 2 && c.head_dim % kKvQ8Block == 0) c.dtype = KvDtype::kQ8_0;
    if (trial % 4 == 3) c.dtype = KvDtype::kFp8E4M3;
    c.shuffle_positions = trial % 4 == 1;
    run_case(c, rng, trial % 3 == 2 ? nullptr : &pool);
  }
}

// Several sequences sharing one KV pool (each its own blocks, lengths and
// query counts: decode steps and prefill chunks mixed) in one batch call:
// each output is bit-identical to the sequence's own paged_attention call
// (whatever the thread count), and matches the reference.
TEST(PagedAttention, BatchOfSequencesEqualsEachSequenceAlone) {
  std::mt19937 rng(91);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  for (int trial = 0; trial < 8; ++trial) {
    const int n_kv_heads = 1 + static_cast<int>(rng() % 3), group = 1 + static_cast<int>(rng() % 4);
    const int head_dim = trial % 2 ? 64 : 32, block_size = trial % 3 == 0 ? 16 : 1 + static_cast<int>(rng() % 20);
    const int window = trial % 4 == 3 ? 1 + static_cast<int>(rng() % 30) : 0;
    const int n_seqs = 1 + static_cast<int>(rng() % 9);
    const int64_t row = static_cast<int64_t>(n_kv_heads) * head_dim;
    struct Seq {
      int n_ctx, n_tokens;
      std::vector<int32_t> table, pos;
      std::vector<float> q, alone, batched;
    };
    std::vector<Seq> seqs(static_cast<size_t>(n_seqs));
    int n_pool = 0;
    for (Seq& q : seqs) {
      q.n_ctx = 1 + static_cast<int>(rng() % 120);
      q.n_tokens = rng() % 2 ? 1 : 1 + static_cast<int>(rng() % std::min(q.n_ctx, 12));
      for (int b = 0; b < (q.n_ctx + block_size - 1) / block_size; ++b) q.table.push_back(n_pool++);
      q.pos.resize(static_cast<size_t>(q.n_tokens));
      std::iota(q.pos.begin(), q.pos.end(), q.n_ctx - q.n_tokens);
    }
    // Shuffle the pool so sequences' blocks interleave.
    std::vector<int32_t> perm(static_cast<size_t>(n_pool));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (Seq& q : seqs) {
      for (int32_t& b : q.table) b = perm[static_cast<size_t>(b)];
    }
    const size_t pool_elems = static_cast<size_t>(n_pool) * block_size * row;
    std::vector<uint16_t> kh(pool_elems), vh(pool_elems);
    const std::vector<float> kf = test::random_floats(rng, static_cast<int64_t>(pool_elems)),
                             vf = test::random_floats(rng, static_cast<int64_t>(pool_elems));
    f32_to_fp16_row_scalar(kf.data(), kh.data(), static_cast<int64_t>(pool_elems));
    f32_to_fp16_row_scalar(vf.data(), vh.data(), static_cast<int64_t>(pool_elems));
    const PagedKv kv{kh.data(), vh.data(), KvDtype::kF16, block_size, n_kv_heads, head_dim};
    const AttentionParams params{n_kv_heads * group, 1.0f / std::sqrt(static_cast<float>(head_dim)), window};
    std::vector<AttentionSeq> batch;
    for (Seq& q : seqs) {
      q.q = test::random_floats(rng, static_cast<int64_t>(q.n_tokens) * params.n_heads * head_dim);
      q.alone.assign(q.q.size(), NAN);
      q.batched.assign(q.q.size(), NAN);
      paged_attention(q.q.data(), q.pos.data(), q.n_tokens, kv, q.table.data(), static_cast<int64_t>(q.table.size()),
                      params, q.alone.data(), &pools[rng() % 3]);
      batch.push_back(AttentionSeq{q.q.data(), q.pos.data(), q.n_tokens, q.table.data(),
                                   static_cast<int64_t>(q.table.size()), q.batched.data()});
    }
    paged_attention_batch(batch, kv, params, &pools[trial % 3]);
    for (size_t i = 0; i < seqs.size(); ++i) {
      const Seq& q = seqs[i];
      for (size_t j = 0; j < q.alone.size(); ++j) {
        ASSERT_EQ(std::bit_cast<uint32_t>(q.alone[j]), std::bit_cast<uint32_t>(q.batched[j]))
            << "trial " << trial << " sequence " << i << " of " << n_seqs << " at " << j;
      }
      // And right: against the reference over the sequence's contiguous K/V.
      std::vector<float> k(static_cast<size_t>(q.n_ctx * row)), v(k.size()), expect(q.q.size());
      for (int p = 0; p < q.n_ctx; ++p) {
        const size_t src = (static_cast<size_t>(q.table[p / block_size]) * block_size + p % block_size) * row;
        for (int64_t e = 0; e < row; ++e) {
          k[static_cast<size_t>(p * row + e)] = fp16_to_f32(kh[src + e]);
          v[static_cast<size_t>(p * row + e)] = fp16_to_f32(vh[src + e]);
        }
      }
      attention_reference(q.q.data(), q.pos.data(), q.n_tokens, k.data(), v.data(), q.n_ctx, n_kv_heads, head_dim,
                          params, expect.data());
      for (size_t j = 0; j < expect.size(); ++j) {
        ASSERT_NEAR(q.batched[j], expect[j], 2e-5 * (1.0 + std::fabs(expect[j]))) << "sequence " << i << " at " << j;
      }
    }
  }
}

TEST(PagedAttention, SinglePositionReturnsItsValue) {
  // One key: softmax weight 1, output = v exactly (up to the f32 scaling by 1).
  const float q[4] = {0.3f, -1.0f, 2.0f, 0.5f}, k[4] = {1.0f, 2.0f, 3.0f, 4.0f}, v[4] = {5.0f, -6.0f, 7.0f, 8.0f};
  const PagedKv kv{k, v, KvDtype::kF32, 16, 1, 4};
  const int32_t pos = 0, table = 0;
  float out[4];
  paged_attention(q, &pos, 1, kv, &table, 1, AttentionParams{1, 0.5f, 0}, out, nullptr);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(out[d], v[d]);
}

}  // namespace
}  // namespace hearth::kernels
