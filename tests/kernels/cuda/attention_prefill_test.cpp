// The tensor-core prompt attention (attention_prefill.h) against the CPU
// attention_reference (double): head sizes 64/96/128/256, query heads per KV
// head 1/3/4/7/8, f16, fp8 and q8_0 caches, cached prefixes, prompts from
// position 0, tiles cut short at a prompt's end, sliding windows shorter
// than the prompt, several sequences in one call, and the backend's mix of
// prompt tiles with split-KV rows (a token index) in one step.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "attention_check.h"
#include "cuda_test_util.h"
#include "kernels/cuda/attention_prefill.h"

namespace hearth::kernels::cuda::test {
namespace {

TEST(CudaPrefillAttention, TileTokensPerHeadLayout) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  EXPECT_EQ(prefill_tile_tokens(128, 32, 8), 16);  // Llama-3-8B: 4 query heads a KV head
  EXPECT_EQ(prefill_tile_tokens(64, 9, 3), 21);    // SmolLM2: 3 (63 of the 64 rows)
  EXPECT_EQ(prefill_tile_tokens(256, 4, 1), 16);   // Gemma 3 270M
  EXPECT_EQ(prefill_tile_tokens(128, 28, 4), 9);   // Qwen2-7B: 7
  EXPECT_EQ(prefill_tile_tokens(64, 8, 8), 64);
  EXPECT_EQ(prefill_tile_tokens(32, 8, 8), 0);  // head sizes without a kernel
  EXPECT_EQ(prefill_tile_tokens(80, 8, 8), 0);
  EXPECT_EQ(prefill_tile_tokens(64, 9, 2), 0);    // heads not a multiple of the KV heads
  EXPECT_EQ(prefill_tile_tokens(64, 130, 1), 0);  // more query heads a KV head than rows
}

TEST(CudaPrefillAttention, PromptsWithAndWithoutCachedPrefix) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(41);
  const Route r = Route::kTiles;
  check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0}, {340}, prefill_tokens(300, 40), r);
  check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0}, {512}, prefill_tokens(0, 512), r);
  check_attention(rng, {KvPrecision::kF16, 64, 9, 3, 16, 0, 0}, {100}, prefill_tokens(0, 100), r);
  check_attention(rng, {KvPrecision::kF16, 96, 4, 4, 7, 0, 0}, {75}, prefill_tokens(45, 30), r);
  check_attention(rng, {KvPrecision::kF16, 256, 4, 1, 16, 0, 0}, {200}, prefill_tokens(0, 200), r);
  check_attention(rng, {KvPrecision::kF16, 128, 28, 4, 16, 0, 0}, {333}, prefill_tokens(100, 233), r);
  check_attention(rng, {KvPrecision::kF16, 64, 64, 8, 32, 0, 0}, {70}, prefill_tokens(1, 69), r);
  check_attention(rng, {KvPrecision::kF16, 128, 8, 8, 16, 0, 0}, {3}, prefill_tokens(0, 3), r);
}

TEST(CudaPrefillAttention, EveryKvPrecision) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(42);
  const Route r = Route::kTiles;
  for (KvPrecision p : {KvPrecision::kFp8E4M3, KvPrecision::kQ8_0}) {
    check_attention(rng, {p, 128, 32, 8, 16, 0, 0}, {340}, prefill_tokens(300, 40), r);
    check_attention(rng, {p, 64, 9, 3, 16, 0, 0}, {130}, prefill_tokens(0, 130), r);
    check_attention(rng, {p, 256, 4, 1, 16, 0, 0}, {150}, prefill_tokens(20, 130), r);
    check_attention(rng, {p, 96, 6, 2, 7, 20, 0}, {75}, prefill_tokens(45, 30), r);
  }
}

// Gemma 3's local layers: a window shorter than the prompt and the cache.
TEST(CudaPrefillAttention, SlidingWindow) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(43);
  const Route r = Route::kTiles;
  check_attention(rng, {KvPrecision::kF16, 256, 4, 1, 16, 64, 0}, {300}, prefill_tokens(0, 300), r);
  check_attention(rng, {KvPrecision::kF16, 256, 4, 1, 16, 100, 0}, {700}, prefill_tokens(500, 200), r);
  check_attention(rng, {KvPrecision::kF16, 64, 8, 2, 16, 50, 0}, {217}, prefill_tokens(150, 67), r);
  check_attention(rng, {KvPrecision::kFp8E4M3, 128, 16, 4, 16, 33, 0}, {160}, prefill_tokens(0, 160), r);
}

// Prompts of several sequences in one call, with decode tokens and a short
// chunk between them: the backend's route (tiles for runs of at least a
// tile, the split-KV kernels through a token index for the rest), and every
// run on tiles.
TEST(CudaPrefillAttention, SeveralSequencesAndMixedSteps) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(44);
  const std::vector<int> lens = {600, 90, 1200, 37};
  std::vector<Token> tokens = prefill_tokens(560, 40);  // sequence 0: a chunk at its end
  tokens.push_back({1, 89});                            // decode
  for (int p = 1100; p < 1200; ++p) tokens.push_back({2, p});
  for (int p = 30; p < 37; ++p) tokens.push_back({3, p});  // 7 tokens: under a tile
  tokens.push_back({1, 50});
  for (Route r : {Route::kMixed, Route::kTiles}) {
    SCOPED_TRACE(r == Route::kMixed ? "mixed" : "tiles");
    check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0}, lens, tokens, r);
    check_attention(rng, {KvPrecision::kQ8_0, 64, 9, 3, 16, 0, 0}, lens, tokens, r);
    check_attention(rng, {KvPrecision::kFp8E4M3, 256, 8, 2, 16, 300, 0}, lens, tokens, r);
  }
}

// A long prompt chunk over a long cached prefix (a follow-up turn): many key
// steps a tile, the tiles of different lengths of work.
TEST(CudaPrefillAttention, LongCachedPrefix) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(45);
  check_attention(rng, {KvPrecision::kF16, 128, 32, 8, 16, 0, 0}, {3000}, prefill_tokens(2900, 100), Route::kTiles);
  check_attention(rng, {KvPrecision::kF16, 64, 9, 3, 16, 0, 0}, {2100}, prefill_tokens(2000, 100), Route::kMixed);
}

TEST(CudaPrefillAttention, RejectsWhatItCannotRun) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  DeviceBuffer<uint8_t> k(1 << 16), v(1 << 16);
  DeviceBuffer<float> q(4096), out(4096);
  DeviceBuffer<int32_t> table(std::vector<int32_t>{0, 1, 2, 3}), tiles(std::vector<int32_t>{0, 1, 0, 0});
  const auto* t = reinterpret_cast<const PrefillTile*>(tiles.get());
  const PrefillBatch batch{q.get(), t, 1, table.get(), 4};
  PagedKvCache kv{k.get(), v.get(), KvPrecision::kF16, 1.0f, 1.0f, 4, 16, 1, 80};  // head_dim 80: no kernel
  EXPECT_EQ(paged_attention_prefill(kv, batch, {1, 1.0f, 0, 64}, out.get(), nullptr).code, cudaErrorInvalidValue);
  kv.head_dim = 64;
  kv.n_kv_heads = 2;  // 3 query heads over 2 KV heads
  EXPECT_EQ(paged_attention_prefill(kv, batch, {3, 1.0f, 0, 64}, out.get(), nullptr).code, cudaErrorInvalidValue);
  kv.n_kv_heads = 1;
  const PrefillBatch misaligned{q.get() + 1, t, 1, table.get(), 4};
  EXPECT_EQ(paged_attention_prefill(kv, misaligned, {1, 1.0f, 0, 64}, out.get(), nullptr).code, cudaErrorInvalidValue);
  const PrefillBatch none{q.get(), nullptr, 0, table.get(), 4};
  EXPECT_EQ(paged_attention_prefill(kv, none, {1, 1.0f, 0, 64}, out.get(), nullptr).code, cudaSuccess);
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
