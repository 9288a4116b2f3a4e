// Reproduces random_tokens() of tests/models/cuda/cuda_test_support.cpp and the
// sequences of CudaGemma3Real.LogitsMatchCpuAcrossTheWindow (n_vocab 262144).
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
static std::vector<int32_t> random_tokens(size_t count, uint32_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(n_vocab) - 1);
  std::vector<int32_t> out(count);
  for (auto& t : out) t = dist(rng);
  return out;
}
static void emit(const char* name, std::vector<std::vector<int32_t>> steps) {
  std::printf("%s ", name);
  bool first = true;
  for (auto& s : steps)
    for (auto t : s) {
      std::printf(first ? "%d" : ",%d", t);
      first = false;
    }
  std::printf(" steps");
  for (auto& s : steps) std::printf(" %zu", s.size());
  std::printf("\n");
}
int main() {
  const uint32_t V = 262144;
  auto tok = [&](size_t n, uint32_t s) { return random_tokens(n, V, 900 + s); };
  emit("s0", {tok(37, 1), tok(1, 2), tok(1, 3), tok(1, 4), tok(1, 5)});
  emit("s1", {tok(5, 6), tok(1, 7), tok(1, 8), tok(1, 9), tok(1, 10)});
  emit("s2", {tok(9, 11), tok(3, 12), tok(1, 13)});
  emit("long", {random_tokens(600, V, 77), random_tokens(1, V, 78), random_tokens(1, V, 79), random_tokens(1, V, 80),
                random_tokens(1, V, 81)});
}
