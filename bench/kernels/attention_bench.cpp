// Paged attention micro-benchmarks in SmolLM2-135M's shape (9 query heads,
// 3 KV heads, head_dim 64, f16 KV, block size 16, shuffled block table).
//   prefill/N: a causal N-token batch at positions 0..N-1 (one layer's call);
//   decode/N:  one token at position N-1.
// Reports key-query pairs per second (sum over query rows of visible keys).
// Threads: HEARTH_BENCH_THREADS (default 2); SIMD level: HEARTH_CPU=scalar|avx2.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/fp16.h"

namespace hearth::kernels {
namespace {

constexpr int kHeads = 9, kKvHeads = 3, kHeadDim = 64, kBlock = 16;

int bench_threads() {
  const char* s = std::getenv("HEARTH_BENCH_THREADS");
  return s != nullptr ? std::max(1, std::atoi(s)) : 2;
}

ThreadPool& pool() {
  static ThreadPool p(bench_threads());
  return p;
}

struct Setup {
  std::vector<uint16_t> k, v;  // pool [n_blocks][kBlock][kKvHeads][kHeadDim]
  std::vector<int32_t> table;
  std::vector<float> q, out;
  std::vector<int32_t> positions;
};

// n_ctx positions of context; the batch is its last n_tokens positions.
Setup make_setup(int n_ctx, int n_tokens) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Setup s;
  const int n_blocks = (n_ctx + kBlock - 1) / kBlock;
  const size_t elems = static_cast<size_t>(n_blocks) * kBlock * kKvHeads * kHeadDim;
  s.k.resize(elems);
  s.v.resize(elems);
  for (size_t i = 0; i < elems; ++i) {
    s.k[i] = f32_to_fp16(dist(rng));
    s.v[i] = f32_to_fp16(dist(rng));
  }
  s.table.resize(static_cast<size_t>(n_blocks));
  std::iota(s.table.begin(), s.table.end(), 0);
  std::shuffle(s.table.begin(), s.table.end(), rng);
  s.q.resize(static_cast<size_t>(n_tokens) * kHeads * kHeadDim);
  for (float& f : s.q) f = dist(rng);
  s.out.resize(s.q.size());
  s.positions.resize(static_cast<size_t>(n_tokens));
  std::iota(s.positions.begin(), s.positions.end(), n_ctx - n_tokens);
  return s;
}

void run_attention(benchmark::State& state, int n_ctx, int n_tokens) {
  Setup s = make_setup(n_ctx, n_tokens);
  const PagedKv kv{s.k.data(), s.v.data(), KvDtype::kF16, kBlock, kKvHeads, kHeadDim};
  const AttentionParams params{kHeads, 1.0f / std::sqrt(static_cast<float>(kHeadDim)), 0};
  const auto n_table = static_cast<int64_t>(s.table.size());
  for (auto _ : state) {
    paged_attention(s.q.data(), s.positions.data(), n_tokens, kv, s.table.data(), n_table, params, s.out.data(),
                    &pool());
    benchmark::DoNotOptimize(s.out.data());
  }
  double pairs = 0.0;
  for (int32_t p : s.positions) pairs += static_cast<double>(p + 1) * kHeads;
  state.counters["pairs/s"] = benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_prefill(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  run_attention(state, n, n);
}

void BM_decode(benchmark::State& state) {
  run_attention(state, static_cast<int>(state.range(0)), 1);
}

BENCHMARK(BM_prefill)->Name("attention/prefill")->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_decode)->Name("attention/decode")->Arg(128)->Arg(512)->Arg(2048)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hearth::kernels
