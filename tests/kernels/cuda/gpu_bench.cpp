// Achieved memory bandwidth of the decode kernels at Llama-3-8B shapes,
// against the H200's ~4.8 TB/s (HBM3e datasheet). Prints a table; exits 0
// with a message when no CUDA device exists. Bytes counted: the weights (GEMV)
// or the K and V rows read (attention); activations are negligible.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/paged_attention.h"

namespace hc = hearth::kernels::cuda;
using hearth::kernels::GgmlType;

namespace {

constexpr double kPeakGBs = 4800.0;

// Mean milliseconds of `fn` over `iters` launches after a warm-up.
template <typename Fn>
double time_ms(Fn&& fn, int iters) {
  cudaEvent_t a = nullptr, b = nullptr;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) fn();
  cudaEventRecord(a);
  for (int i = 0; i < iters; ++i) fn();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return static_cast<double>(ms) / iters;
}

bool bench_gemv(GgmlType type, int64_t rows, int64_t cols, int n_tokens) {
  const size_t stride = hearth::kernels::row_bytes(type, cols);
  void *w = nullptr, *x = nullptr, *y = nullptr;
  if (cudaMalloc(&w, stride * rows) != cudaSuccess) return false;
  cudaMalloc(&x, sizeof(float) * cols * n_tokens);
  cudaMalloc(&y, sizeof(float) * rows * n_tokens);
  cudaMemset(w, 0x11, stride * rows);  // small finite scales; values do not change the timing
  cudaMemset(x, 0, sizeof(float) * cols * n_tokens);
  const hc::DeviceMatrix m{type, w, rows, cols, stride};
  hc::Status st{};
  const double ms =
      time_ms([&] { st = hc::gemv(m, static_cast<float*>(x), n_tokens, static_cast<float*>(y), nullptr); }, 20);
  const double gbs = static_cast<double>(stride * rows) / (ms * 1e6);
  std::printf("gemv %-5s %6lld x %-6lld tokens %d  %8.1f us  %7.1f GB/s  %5.1f%% of peak%s\n",
              hearth::kernels::type_traits(type)->name, static_cast<long long>(rows), static_cast<long long>(cols),
              n_tokens, ms * 1e3, gbs, 100.0 * gbs / kPeakGBs, st.ok() ? "" : "  (launch failed)");
  cudaFree(w);
  cudaFree(x);
  cudaFree(y);
  return st.ok();
}

// Decode of n_seqs sequences of `ctx` tokens each: 32 query heads, 8 kv heads, head_dim 128.
bool bench_attention(hearth::KvPrecision dtype, int n_seqs, int ctx) {
  const int n_heads = 32, n_kv = 8, D = 128, bs = 16;
  const int blocks_per_seq = ctx / bs;
  const int64_t n_blocks = static_cast<int64_t>(n_seqs) * blocks_per_seq;
  const size_t esize = dtype == hearth::KvPrecision::kF16 ? 2 : 1;
  const size_t pool = static_cast<size_t>(n_blocks) * bs * n_kv * D * esize;
  void *k = nullptr, *v = nullptr, *q = nullptr, *out = nullptr, *tables = nullptr, *pos = nullptr, *seq = nullptr,
       *ws = nullptr;
  if (cudaMalloc(&k, pool) != cudaSuccess || cudaMalloc(&v, pool) != cudaSuccess) return false;
  cudaMemset(k, 0x11, pool);
  cudaMemset(v, 0x11, pool);
  cudaMalloc(&q, sizeof(float) * n_seqs * n_heads * D);
  cudaMemset(q, 0, sizeof(float) * n_seqs * n_heads * D);
  cudaMalloc(&out, sizeof(float) * n_seqs * n_heads * D);
  std::vector<int32_t> h_tables(static_cast<size_t>(n_blocks)), h_pos(static_cast<size_t>(n_seqs), ctx - 1),
      h_seq(static_cast<size_t>(n_seqs));
  for (size_t i = 0; i < h_tables.size(); ++i) h_tables[i] = static_cast<int32_t>(i);
  for (size_t i = 0; i < h_seq.size(); ++i) h_seq[i] = static_cast<int32_t>(i);
  cudaMalloc(&tables, h_tables.size() * 4);
  cudaMalloc(&pos, h_pos.size() * 4);
  cudaMalloc(&seq, h_seq.size() * 4);
  cudaMemcpy(tables, h_tables.data(), h_tables.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(pos, h_pos.data(), h_pos.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(seq, h_seq.data(), h_seq.size() * 4, cudaMemcpyHostToDevice);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int split = hc::choose_split_len(n_seqs, n_heads, n_kv, ctx, sms);
  const size_t ws_bytes = hc::paged_attention_workspace_bytes(n_seqs, n_heads, D, ctx, split);
  cudaMalloc(&ws, ws_bytes + 16);
  const hc::PagedKvCache kv{k, v, dtype, 1.0f, 1.0f, n_blocks, bs, n_kv, D};
  const hc::AttentionBatch batch{static_cast<float*>(q),
                                 static_cast<int32_t*>(pos),
                                 static_cast<int32_t*>(seq),
                                 static_cast<int32_t*>(tables),
                                 blocks_per_seq,
                                 n_seqs,
                                 ctx};
  const hc::PagedAttentionParams params{n_heads, 0.088f, 0, split};
  hc::Status st{};
  const double ms = time_ms(
      [&] { st = hc::paged_attention(kv, batch, params, static_cast<float*>(out), ws, ws_bytes, nullptr); }, 20);
  const double gbs = 2.0 * static_cast<double>(pool) / (ms * 1e6);
  std::printf("attn decode %-4s seqs %d ctx %d split %d  %8.1f us  %7.1f GB/s  %5.1f%% of peak%s\n",
              dtype == hearth::KvPrecision::kF16 ? "f16" : "fp8", n_seqs, ctx, split, ms * 1e3, gbs,
              100.0 * gbs / kPeakGBs, st.ok() ? "" : "  (launch failed)");
  for (void* p : {k, v, q, out, tables, pos, seq, ws}) cudaFree(p);
  return st.ok();
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("no CUDA device: benchmark skipped\n");
    return 0;
  }
  bool ok = true;
  const int64_t shapes[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {128256, 4096}};
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0, GgmlType::kF16}) {
    for (const auto& s : shapes) ok = bench_gemv(type, s[0], s[1], 1) && ok;
  }
  for (int t : {2, 4, 8}) ok = bench_gemv(GgmlType::kQ4_K, 14336, 4096, t) && ok;
  for (int seqs : {1, 8}) {
    ok = bench_attention(hearth::KvPrecision::kF16, seqs, 4096) && ok;
    ok = bench_attention(hearth::KvPrecision::kFp8E4M3, seqs, 4096) && ok;
  }
  return ok ? 0 : 1;
}
