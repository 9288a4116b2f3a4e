// Matmul micro-benchmarks: decode (gemv, 1 token) reports GB/s of weight bytes
// read, the quantity that bounds batch-1 decode; prefill (gemm, 128 tokens)
// reports GFLOP/s (2 * rows * cols * tokens per call). Batched decode
// (decode1/decode8: 1 or 8 tokens, as when 8 sequences decode in one step) on
// SmolLM2-135M's shapes: down (576x1536), up/gate (1536x576), output (49152x576).
// Threads: HEARTH_BENCH_THREADS (default 2); SIMD level: HEARTH_CPU=scalar|avx2.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels {
namespace {

int bench_threads() {
  const char* s = std::getenv("HEARTH_BENCH_THREADS");
  return s != nullptr ? std::max(1, std::atoi(s)) : 2;
}

ThreadPool& pool() {
  static ThreadPool p(bench_threads());
  return p;
}

// Byte offsets of the f16 scales in each block type: set to a small normal
// value so random payload bytes make finite weights.
std::vector<size_t> scale_offsets(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
      return {0, 2};
    case GgmlType::kQ6_K:
      return {208};
    default:
      return {0};
  }
}

std::vector<uint8_t> random_matrix(GgmlType type, int64_t rows, int64_t cols) {
  const QuantOps& ops = *quant_ops(type);
  std::mt19937 rng(1);
  std::vector<uint8_t> bytes(row_bytes(type, cols) * static_cast<size_t>(rows));
  if (ops.block_elems == 1) {  // float types: real values, no NaN or subnormals
    std::normal_distribution<float> dist;
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& x : row) x = dist(rng);
      ops.quantize_row(row.data(), bytes.data() + static_cast<size_t>(r) * row_bytes(type, cols), cols);
    }
    return bytes;
  }
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    const auto v = static_cast<uint32_t>(rng());
    std::memcpy(bytes.data() + i, &v, 4);
  }
  const uint16_t small = 0x2000;  // 2^-7
  for (size_t b = 0; b < bytes.size() / ops.block_bytes; ++b) {
    for (size_t off : scale_offsets(type)) std::memcpy(bytes.data() + b * ops.block_bytes + off, &small, 2);
  }
  return bytes;
}

void run_matmul(benchmark::State& state, GgmlType type, int64_t n_tokens) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const std::vector<uint8_t> w = random_matrix(type, rows, cols);
  const WeightMatrix m{type, w.data(), rows, cols, row_bytes(type, cols)};
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  std::mt19937 rng(2);
  std::normal_distribution<float> dist;
  for (float& v : x) v = dist(rng);
  std::vector<float> y(static_cast<size_t>(n_tokens * rows));
  MatmulScratch scratch;
  for (auto _ : state) {
    matmul(m, x.data(), n_tokens, y.data(), &pool(), scratch);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(rows * cols * n_tokens),
                         benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.SetLabel(std::string(quant_ops(type)->name) + " " + cpu_path_name() +
                 " threads=" + std::to_string(pool().size()));
}

void shapes(benchmark::internal::Benchmark* b, GgmlType type) {
  const bool k_quant = quant_ops(type)->vec_dot_type == GgmlType::kQ8_K;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{576, 576}, {1536, 576}, {4096, 4096}, {14336, 4096}}) {
    if (k_quant && cols % 256 != 0) continue;  // K-quant rows are whole 256-element super-blocks
    b->Args({rows, cols});
  }
  b->ArgNames({"rows", "cols"})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

// SmolLM2-135M shapes; K-quant types only where cols is a multiple of 256.
void smollm_shapes(benchmark::internal::Benchmark* b, GgmlType type) {
  const bool k_quant = quant_ops(type)->vec_dot_type == GgmlType::kQ8_K;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{576, 1536}, {1536, 576}, {49152, 576}}) {
    if (k_quant && cols % 256 != 0) continue;
    b->Args({rows, cols});
  }
  b->ArgNames({"rows", "cols"})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

const GgmlType kDecodeTypes[] = {GgmlType::kQ4_1, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K};

const GgmlType kTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                           GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K,
                           GgmlType::kF16,  GgmlType::kBF16, GgmlType::kF32};

[[maybe_unused]] const bool kRegistered = [] {
  for (GgmlType t : kTypes) {
    const std::string name = quant_ops(t)->name;
    shapes(benchmark::RegisterBenchmark(("gemv/" + name).c_str(), [t](benchmark::State& s) { run_matmul(s, t, 1); }),
           t);
    shapes(
        benchmark::RegisterBenchmark(("gemm128/" + name).c_str(), [t](benchmark::State& s) { run_matmul(s, t, 128); }),
        t);
  }
  for (GgmlType t : kDecodeTypes) {
    const std::string name = quant_ops(t)->name;
    for (int64_t n : {1, 8}) {
      smollm_shapes(benchmark::RegisterBenchmark(("decode" + std::to_string(n) + "/" + name).c_str(),
                                                 [t, n](benchmark::State& s) { run_matmul(s, t, n); }),
                    t);
    }
  }
  return true;
}();

}  // namespace
}  // namespace hearth::kernels

BENCHMARK_MAIN();
