// Achieved memory bandwidth of the decode kernels at Llama-3-8B shapes,
// against the measured device-to-device copy bandwidth (the ceiling) and the
// H200's ~4.8 TB/s datasheet peak. GEMVs with f32 and 8-bit activations
// (GemvActivations), weights rotated over >= 256 MiB of copies so no run is
// served from L2. Prints a table; exits 0 with a message when no CUDA device
// exists. Bytes counted: the weights (GEMV) or the K and V rows read
// (attention); activations are negligible.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/attention_prefill.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/mmq.h"
#include "kernels/cuda/paged_attention.h"

namespace hc = hearth::kernels::cuda;
using hearth::kernels::GgmlType;

namespace {

double g_copy_gbs = 0.0;  // measured device-to-device copy bandwidth (read + write)

// Median over 5 rounds of the mean milliseconds of `fn` over `iters` launches,
// after a warm-up.
template <typename Fn>
double time_ms(Fn&& fn, int iters) {
  cudaEvent_t a = nullptr, b = nullptr;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) fn(i);
  std::vector<double> rounds;
  for (int k = 0; k < 5; ++k) {
    cudaEventRecord(a);
    for (int i = 0; i < iters; ++i) fn(i);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    rounds.push_back(static_cast<double>(ms) / iters);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

// The same for `iters` launches captured in a CUDA graph and replayed: the
// GPU's time without the CPU's launch gaps (what a graph-captured decode step sees).
template <typename Fn>
double time_graph_ms(Fn&& fn, int iters, cudaStream_t s) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t e = nullptr;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return 0.0;
  for (int i = 0; i < iters; ++i) fn(i);
  if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&e, g, 0) != cudaSuccess) return 0.0;
  cudaEvent_t a = nullptr, b = nullptr;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaGraphLaunch(e, s);
  std::vector<double> rounds;
  for (int k = 0; k < 5; ++k) {
    cudaEventRecord(a, s);
    cudaGraphLaunch(e, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    rounds.push_back(static_cast<double>(ms) / iters);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(e);
  cudaGraphDestroy(g);
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

// The ceiling: a 1 GiB device-to-device copy, bytes read plus written.
void measure_copy() {
  const size_t n = size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess) return;
  cudaMemset(a, 0x5a, n);
  const double ms = time_ms([&](int) { cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice); }, 5);
  g_copy_gbs = 2.0 * static_cast<double>(n) / (ms * 1e6);
  std::printf("copy d2d 1 GiB  %8.1f us  %7.1f GB/s (read + write): the ceiling below\n", ms * 1e3, g_copy_gbs);
  cudaFree(a);
  cudaFree(b);
}

// Weight bytes from a fixed generator (never zeros: see METHOD.md); copies
// enough that the rotation over them (>= 256 MiB) never runs from the 50 MB L2.
bool bench_gemv(GgmlType type, int64_t rows, int64_t cols, int n_tokens, hc::GemvActivations act, int blocks_per_sm = 0,
                int lanes = 0, int prefetch = -1, int staged = -1) {
  const size_t stride = hearth::kernels::row_bytes(type, cols), bytes = stride * rows;
  const int copies = static_cast<int>(std::max<size_t>(1, (size_t{256} << 20) / bytes + 1));
  std::vector<uint8_t> host(bytes);
  std::mt19937 rng(7);
  std::vector<uint8_t> tile(1 << 20);  // a random 1 MiB tile repeated: cheap to make at 500 MB
  for (auto& v : tile) v = static_cast<uint8_t>(rng() & 0x3fu);  // small scales, finite halves
  for (size_t i = 0; i < bytes; ++i) host[i] = tile[i % tile.size()];
  std::vector<void*> w(static_cast<size_t>(copies), nullptr);
  for (auto& p : w) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) return false;
    cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice);
  }
  void *x = nullptr, *y = nullptr;
  cudaMalloc(&x, sizeof(float) * cols * n_tokens);
  cudaMalloc(&y, sizeof(float) * rows * n_tokens);
  std::vector<float> hx(static_cast<size_t>(cols * n_tokens));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : hx) v = nd(rng);
  cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
  hc::GemvOptions opt;
  opt.activations = act;
  opt.q8_blocks_per_sm = blocks_per_sm;
  opt.q8_lanes = lanes;
  opt.q8_prefetch = prefetch;
  opt.q8_staged = staged;
  hc::Status st{};
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  const auto run = [&](int i) {
    const hc::DeviceMatrix m{type, w[static_cast<size_t>(i % copies)], rows, cols, stride};
    const hc::Status one = hc::gemv(opt, m, static_cast<float*>(x), n_tokens, static_cast<float*>(y), s);
    if (!one.ok()) st = one;
  };
  const double ms = time_ms(run, 40);
  const double graph_ms = time_graph_ms(run, 40, s);
  cudaStreamDestroy(s);
  const hc::DeviceMatrix m0{type, w[0], rows, cols, stride};
  const bool q8 = act == hc::GemvActivations::kQ8 && hc::gemv_q8_applies(m0, n_tokens);
  const double gbs = static_cast<double>(bytes) / (ms * 1e6);
  char bps[48] = "";
  if (blocks_per_sm > 0 || lanes > 0 || prefetch >= 0 || staged >= 0) {
    std::snprintf(bps, sizeof bps, " b%d L%d p%d s%d", blocks_per_sm, lanes, prefetch, staged);
  }
  const double graph_gbs = graph_ms > 0 ? static_cast<double>(bytes) / (graph_ms * 1e6) : 0.0;
  const double copy = g_copy_gbs > 0 ? 100.0 / g_copy_gbs : 0.0;
  std::printf(
      "gemv %-5s %6lld x %-6lld tokens %d %-3s%-9s %7.1f us %7.1f GB/s %5.1f%% of copy | graph %7.1f us %7.1f GB/s "
      "%5.1f%% of copy%s\n",
      hearth::kernels::type_traits(type)->name, static_cast<long long>(rows), static_cast<long long>(cols), n_tokens,
      q8 ? "q8" : "f32", bps, ms * 1e3, gbs, gbs * copy, graph_ms * 1e3, graph_gbs, graph_gbs * copy,
      st.ok() ? "" : "  (launch failed)");
  for (void* p : w) cudaFree(p);
  cudaFree(x);
  cudaFree(y);
  return st.ok();
}

// Multi-token products at one shape: mmq with f16 activations (convert +
// f16 tensor-core product) and with q8 ones (quantize + int8 tensor-core
// product), split-K scratch as the backend gives it, against the f16 path
// (dequantize to f16, convert x, cuBLAS), weights rotated as in bench_gemv.
// Prints us, the weights' GB/s and the TOP/s of each.
bool bench_mmq(GgmlType type, int64_t rows, int64_t cols, int n_tokens, cublasHandle_t handle) {
  const size_t stride = hearth::kernels::row_bytes(type, cols), bytes = stride * rows;
  const int copies = static_cast<int>(std::max<size_t>(1, (size_t{256} << 20) / bytes + 1));
  std::vector<uint8_t> host(bytes);
  std::mt19937 rng(7);
  std::vector<uint8_t> tile(1 << 20);
  for (auto& v : tile) v = static_cast<uint8_t>(rng() & 0x3fu);
  for (size_t i = 0; i < bytes; ++i) host[i] = tile[i % tile.size()];
  std::vector<void*> w(static_cast<size_t>(copies), nullptr);
  for (auto& p : w) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) return false;
    cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice);
  }
  const hc::DeviceMatrix m0{type, w[0], rows, cols, stride};
  void *x = nullptr, *y = nullptr, *act = nullptr, *scratch = nullptr, *f16 = nullptr;
  const size_t scratch_bytes = std::max({hc::mmq_scratch_bytes(m0, n_tokens, hc::MmqActivations::kQ8),
                                         hc::mmq_scratch_bytes(m0, n_tokens, hc::MmqActivations::kF16),
                                         hc::mmq_scratch_bytes(m0, n_tokens, hc::MmqActivations::kF16Wg)});
  const size_t f16_bytes = hc::matmul_f16_workspace_bytes(m0, n_tokens);
  cudaMalloc(&x, sizeof(float) * cols * n_tokens);
  cudaMalloc(&y, sizeof(float) * rows * n_tokens);
  cudaMalloc(&act, hc::mmq_act_bytes(n_tokens, cols));
  cudaMalloc(&scratch, std::max<size_t>(scratch_bytes, 256));
  cudaMalloc(&f16, f16_bytes);
  std::vector<float> hx(static_cast<size_t>(cols * n_tokens));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : hx) v = nd(rng);
  cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
  hc::Status st{};
  hc::MmqActivations kind = hc::MmqActivations::kF16;
  const auto mmq = [&](int i) {
    const hc::DeviceMatrix m{type, w[static_cast<size_t>(i % copies)], rows, cols, stride};
    hc::Status one = hc::mmq_quantize(static_cast<float*>(x), n_tokens, cols, act, nullptr, kind);
    if (one.ok()) one = hc::mmq(m, act, n_tokens, static_cast<float*>(y), {}, scratch, scratch_bytes, nullptr, kind);
    if (!one.ok()) st = one;
  };
  const auto f16path = [&](int i) {
    const hc::DeviceMatrix m{type, w[static_cast<size_t>(i % copies)], rows, cols, stride};
    const hc::Status one =
        hc::matmul_f16(handle, m, static_cast<float*>(x), n_tokens, static_cast<float*>(y), f16, f16_bytes, nullptr);
    if (!one.ok()) st = one;
  };
  const double t_h = time_ms(mmq, 20);
  double t_wg = 0.0;
  if (hc::mmq_f16_wg_supported()) {
    kind = hc::MmqActivations::kF16Wg;
    t_wg = time_ms(mmq, 20);
  }
  kind = hc::MmqActivations::kQ8;
  const double t_q = time_ms(mmq, 20), t_f16 = time_ms(f16path, 10);
  const double ops = 2.0 * static_cast<double>(rows) * static_cast<double>(cols) * n_tokens;
  std::printf(
      "mmq %-5s %6lld x %-6lld tokens %3d  f16 %8.1f us %7.1f GB/s %6.1f TOP/s | q8 %8.1f us %6.1f TOP/s | "
      "f16+cuBLAS %8.1f us %6.1f TOP/s | f16/q8 %.2fx | wgmma %8.1f us %6.1f TOP/s%s\n",
      hearth::kernels::type_traits(type)->name, static_cast<long long>(rows), static_cast<long long>(cols), n_tokens,
      t_h * 1e3, static_cast<double>(bytes) / (t_h * 1e6), ops / (t_h * 1e9), t_q * 1e3, ops / (t_q * 1e9), t_f16 * 1e3,
      ops / (t_f16 * 1e9), t_q / t_h, t_wg * 1e3, t_wg > 0 ? ops / (t_wg * 1e9) : 0.0,
      st.ok() ? "" : "  (launch failed)");
  for (void* p : w) cudaFree(p);
  for (void* p : {x, y, act, scratch, f16}) cudaFree(p);
  return st.ok();
}

// Several matrices of one width: separate gemv calls vs one gemv_fused
// (q/k/v, gate/up of Llama-3-8B), graph-replayed, q8 activations.
bool bench_fused(GgmlType type, std::vector<int64_t> rows, int64_t cols, int staged = -1, int blocks_per_sm = 0) {
  const size_t copies = 8;  // > 50 MB of weights in rotation for the smaller sets
  std::vector<std::vector<void*>> w(copies);
  std::vector<void*> y;
  size_t bytes = 0;
  std::vector<uint8_t> host;
  for (int64_t r : rows) {
    const size_t b = hearth::kernels::row_bytes(type, cols) * r;
    bytes += b;
    host.assign(b, 0x21);
    for (auto& set : w) {
      void* p = nullptr;
      if (cudaMalloc(&p, b) != cudaSuccess) return false;
      cudaMemcpy(p, host.data(), b, cudaMemcpyHostToDevice);
      set.push_back(p);
    }
    void* p = nullptr;
    cudaMalloc(&p, sizeof(float) * r);
    y.push_back(p);
  }
  void* x = nullptr;
  cudaMalloc(&x, sizeof(float) * cols);
  std::vector<float> hx(static_cast<size_t>(cols), 0.5f);
  cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice);
  hc::GemvOptions opt;
  opt.activations = hc::GemvActivations::kQ8;
  opt.q8_staged = staged;
  opt.q8_blocks_per_sm = blocks_per_sm;
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  hc::Status st{};
  double ms[2] = {0.0, 0.0};
  for (int fused = 0; fused < 2; ++fused) {
    const auto run = [&](int i) {
      std::vector<hc::DeviceMatrix> m;
      std::vector<hc::GemvOutput> outs;
      for (size_t k = 0; k < rows.size(); ++k) {
        m.push_back(hc::DeviceMatrix{type, w[static_cast<size_t>(i) % copies][k], rows[k], cols,
                                     hearth::kernels::row_bytes(type, cols)});
      }
      for (size_t k = 0; k < rows.size(); ++k) outs.push_back(hc::GemvOutput{&m[k], static_cast<float*>(y[k]), {}});
      if (fused != 0) {
        const hc::Status one =
            hc::gemv_fused(opt, outs.data(), static_cast<int>(outs.size()), static_cast<float*>(x), 1, s);
        if (!one.ok()) st = one;
      } else {
        for (const auto& o : outs) {
          const hc::Status one = hc::gemv(opt, *o.w, static_cast<float*>(x), 1, o.y, s);
          if (!one.ok()) st = one;
        }
      }
    };
    ms[fused] = time_graph_ms(run, 40, s);
  }
  std::printf(
      "gemv_fused %-5s %zu matrices x %-6lld s%d b%d separate %7.1f us  fused %7.1f us  (%.1f%% of copy fused)%s\n",
      hearth::kernels::type_traits(type)->name, rows.size(), static_cast<long long>(cols), staged, blocks_per_sm,
      ms[0] * 1e3, ms[1] * 1e3, g_copy_gbs > 0 ? 100.0 * static_cast<double>(bytes) / (ms[1] * 1e6) / g_copy_gbs : 0.0,
      st.ok() ? "" : "  (launch failed)");
  cudaStreamDestroy(s);
  for (auto& set : w) {
    for (void* p : set) cudaFree(p);
  }
  for (void* p : y) cudaFree(p);
  cudaFree(x);
  return st.ok();
}

// Decode of n_seqs sequences of `ctx` tokens each: 32 query heads, 8 kv heads,
// head_dim 128 (Llama-3-8B). K/V hold random values (never zeros) in as many
// copies as keep the rotation over them >= 256 MiB (a decode step reads each
// layer's cache once, never from L2). split 0: choose_split_len.
bool bench_attention(hearth::KvPrecision dtype, int n_seqs, int ctx,
                     hc::AttentionKernel kernel = hc::AttentionKernel::kAuto, int split = 0) {
  const int n_heads = 32, n_kv = 8, D = 128, bs = 16;
  const int blocks_per_seq = (ctx + bs - 1) / bs;
  const int64_t n_blocks = static_cast<int64_t>(n_seqs) * blocks_per_seq;
  const size_t esize = dtype == hearth::KvPrecision::kF16 ? 2 : 1;
  const size_t pool = static_cast<size_t>(n_blocks) * bs * n_kv * D * esize;
  // q8_0: the f16 scales (one per 32 codes) follow the codes in each copy.
  const bool q8 = dtype == hearth::KvPrecision::kQ8_0;
  const size_t scales = q8 ? pool / 16 : 0;
  const int copies = static_cast<int>(std::max<size_t>(1, (size_t{256} << 20) / (2 * pool) + 1));
  std::vector<uint8_t> host(pool + scales);
  for (size_t i = pool; i + 1 < host.size(); i += 2) host[i] = 0x00, host[i + 1] = 0x24;  // f16 2^-6
  std::mt19937 rng(7);
  for (size_t i = 0; i < pool; i += esize) {
    const auto r = static_cast<uint32_t>(rng());
    if (esize == 2) {
      const uint16_t h = static_cast<uint16_t>((r & 0x83ffu) | 0x3800u);  // +-[0.5, 1)
      std::memcpy(&host[i], &h, 2);
    } else {
      host[i] = static_cast<uint8_t>((r & 0x87u) | 0x30u);  // e4m3 +-[0.5, 1)
    }
  }
  std::vector<void*> ks(static_cast<size_t>(copies), nullptr), vs(static_cast<size_t>(copies), nullptr);
  for (int c = 0; c < copies; ++c) {
    if (cudaMalloc(&ks[static_cast<size_t>(c)], pool + scales) != cudaSuccess ||
        cudaMalloc(&vs[static_cast<size_t>(c)], pool + scales) != cudaSuccess) {
      std::printf("attn: cudaMalloc failed\n");
      return false;
    }
    cudaMemcpy(ks[static_cast<size_t>(c)], host.data(), pool + scales, cudaMemcpyHostToDevice);
    cudaMemcpy(vs[static_cast<size_t>(c)], host.data(), pool + scales, cudaMemcpyHostToDevice);
  }
  void *q = nullptr, *out = nullptr, *tables = nullptr, *pos = nullptr, *seq = nullptr, *ws = nullptr;
  std::vector<float> hq(static_cast<size_t>(n_seqs) * n_heads * D);
  std::uniform_real_distribution<float> uq(-1.0f, 1.0f);
  for (float& x : hq) x = uq(rng);
  cudaMalloc(&q, hq.size() * sizeof(float));
  cudaMemcpy(q, hq.data(), hq.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMalloc(&out, sizeof(float) * hq.size());
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
  if (split <= 0) split = hc::choose_split_len(n_seqs, n_heads, n_kv, ctx, sms);
  const size_t ws_bytes = hc::paged_attention_workspace_bytes(n_seqs, n_heads, D, ctx, split);
  cudaMalloc(&ws, ws_bytes + 16);
  const hc::AttentionBatch batch{static_cast<float*>(q),
                                 static_cast<int32_t*>(pos),
                                 static_cast<int32_t*>(seq),
                                 static_cast<int32_t*>(tables),
                                 blocks_per_seq,
                                 n_seqs,
                                 ctx};
  const hc::PagedAttentionParams params{n_heads, 0.088f, 0, split, kernel};
  hc::Status st{};
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  const auto run = [&](int i) {
    const auto c = static_cast<size_t>(i % copies);
    void* kd = q8 ? static_cast<uint8_t*>(ks[c]) + pool : nullptr;
    void* vd = q8 ? static_cast<uint8_t*>(vs[c]) + pool : nullptr;
    const hc::PagedKvCache kv{ks[c], vs[c], dtype, 1.0f, 1.0f, n_blocks, bs, n_kv, D, kd, vd};
    const hc::Status s = hc::paged_attention(kv, batch, params, static_cast<float*>(out), ws, ws_bytes, stream);
    if (!s.ok()) st = s;
  };
  const double ms = time_ms(run, 4 * copies);
  // Graph-replayed: the GPU's time without the CPU's launches (a decode step's graph).
  const double graph_ms = time_graph_ms(run, 4 * copies, stream);
  cudaStreamDestroy(stream);
  const double gbs = 2.0 * static_cast<double>(pool + scales) / (ms * 1e6);
  const char* kname = kernel == hc::AttentionKernel::kV12      ? "v12"
                      : kernel == hc::AttentionKernel::kWide   ? "wide"
                      : kernel == hc::AttentionKernel::kStream ? "strm"
                                                               : "auto";
  std::printf(
      "attn decode %-4s %-4s seqs %2d ctx %6d split %5d (%4d chunks)  %8.1f us  %7.1f GB/s  %5.1f%% of copy | graph "
      "%7.1f us %5.1f%%%s\n",
      kname,
      dtype == hearth::KvPrecision::kF16 ? "f16"
      : q8                               ? "q8_0"
                                         : "fp8",
      n_seqs, ctx, split, (ctx + split - 1) / split, ms * 1e3, gbs, g_copy_gbs > 0 ? 100.0 * gbs / g_copy_gbs : 0.0,
      graph_ms * 1e3,
      graph_ms > 0 && g_copy_gbs > 0 ? 100.0 * 2.0 * static_cast<double>(pool + scales) / (graph_ms * 1e6) / g_copy_gbs
                                     : 0.0,
      st.ok() ? "" : "  (launch failed)");
  for (int c = 0; c < copies; ++c) cudaFree(ks[static_cast<size_t>(c)]), cudaFree(vs[static_cast<size_t>(c)]);
  for (void* p : {q, out, tables, pos, seq, ws}) cudaFree(p);
  return st.ok();
}

// The tensor cores' f16 rate: an 8192^3 cuBLAS product, f32 accumulate (the prompt attention's ceiling).
double measure_f16_tflops(cublasHandle_t handle) {
  const int n = 8192;
  void *a = nullptr, *c = nullptr;
  if (cudaMalloc(&a, size_t{2} * n * n) != cudaSuccess || cudaMalloc(&c, size_t{4} * n * n) != cudaSuccess) return 0.0;
  cudaMemset(a, 0x3c, size_t{2} * n * n);  // 1.0009765625 in every f16 (not zeros)
  const auto* w = static_cast<const uint16_t*>(a);
  const double ms =
      time_ms([&](int) { (void)hc::gemm_f16(handle, w, w, static_cast<float*>(c), n, n, n, nullptr); }, 5);
  cudaFree(a);
  cudaFree(c);
  const double tflops = 2.0 * n * n * n / (ms * 1e9);
  std::printf("cuBLAS f16 %d^3: %.1f TFLOP/s: the ceiling below\n", n, tflops);
  return tflops;
}

// A prompt of `tokens` after `prefix` cached positions, 8B shape (32/8 heads
// of 128, f16 cache): the split-KV kernels for every token against the
// tensor-core tiles (attention_prefill.h). FLOPs: 4 x head_dim per (query
// head, key) pair attended.
bool bench_prefill(int prefix, int tokens, double f16_tflops) {
  const int n_heads = 32, n_kv = 8, D = 128, bs = 16, ctx = prefix + tokens;
  const int blocks = (ctx + bs - 1) / bs;
  const size_t pool = static_cast<size_t>(blocks) * bs * n_kv * D * 2;
  std::vector<uint16_t> hkv(pool / 2);
  std::mt19937 rng(9);
  for (uint16_t& h : hkv) h = static_cast<uint16_t>((rng() & 0x83ffu) | 0x3800u);  // +-[0.5, 1)
  std::vector<float> hq(static_cast<size_t>(tokens) * n_heads * D);
  std::uniform_real_distribution<float> uq(-1.0f, 1.0f);
  for (float& x : hq) x = uq(rng);
  std::vector<int32_t> table(static_cast<size_t>(blocks)), pos(static_cast<size_t>(tokens)), tiles;
  for (int i = 0; i < blocks; ++i) table[static_cast<size_t>(i)] = i;
  for (int t = 0; t < tokens; ++t) pos[static_cast<size_t>(t)] = prefix + t;
  const int tt = hc::prefill_tile_tokens(D, n_heads, n_kv);
  for (int t = 0; t < tokens; t += tt) tiles.insert(tiles.end(), {t, std::min(tt, tokens - t), 0, prefix + t});
  void *k = nullptr, *v = nullptr, *q = nullptr, *out = nullptr, *dt = nullptr, *dp = nullptr, *dti = nullptr,
       *ws = nullptr;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int split = hc::choose_split_len(tokens, n_heads, n_kv, ctx, sms);
  const size_t ws_bytes = hc::paged_attention_workspace_bytes(tokens, n_heads, D, ctx, split);
  for (const auto& [ptr, bytes] : {std::pair{&k, pool},
                                   {&v, pool},
                                   {&q, hq.size() * 4},
                                   {&out, hq.size() * 4},
                                   {&dt, table.size() * 4},
                                   {&dp, pos.size() * 4},
                                   {&dti, tiles.size() * 4},
                                   {&ws, ws_bytes + 16}}) {
    if (cudaMalloc(ptr, bytes) != cudaSuccess) return false;
  }
  cudaMemcpy(k, hkv.data(), pool, cudaMemcpyHostToDevice);
  cudaMemcpy(v, hkv.data(), pool, cudaMemcpyHostToDevice);
  cudaMemcpy(q, hq.data(), hq.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dt, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dp, pos.data(), pos.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dti, tiles.data(), tiles.size() * 4, cudaMemcpyHostToDevice);
  const hc::PagedKvCache kv{k, v, hearth::KvPrecision::kF16, 1.0f, 1.0f, blocks, bs, n_kv, D};
  const hc::PagedAttentionParams params{n_heads, 0.088f, 0, split};
  const hc::AttentionBatch batch{
      static_cast<float*>(q), static_cast<int32_t*>(dp), nullptr, static_cast<int32_t*>(dt), blocks, tokens, ctx};
  const hc::PrefillBatch pb{static_cast<float*>(q), static_cast<const hc::PrefillTile*>(dti),
                            static_cast<int>(tiles.size() / 4), static_cast<int32_t*>(dt), blocks};
  hc::Status st{};
  const auto keep = [&](hc::Status s) { st = s.ok() ? st : s; };
  const double ms_split = time_ms(
      [&](int) { keep(hc::paged_attention(kv, batch, params, static_cast<float*>(out), ws, ws_bytes, nullptr)); }, 3);
  const double ms_tiles =
      time_ms([&](int) { keep(hc::paged_attention_prefill(kv, pb, params, static_cast<float*>(out), nullptr)); }, 5);
  const double flop = 4.0 * D * n_heads * (static_cast<double>(tokens) * prefix + tokens * (tokens + 1.0) / 2.0);
  for (const auto& [name, ms] : {std::pair{"split-KV", ms_split}, {"tiles", ms_tiles}}) {
    const double tf = flop / (ms * 1e9);
    std::printf("prefill attn %-8s prefix %6d tokens %5d  %9.1f us  %6.1f TFLOP/s  %5.1f%% of f16%s\n", name, prefix,
                tokens, ms * 1e3, tf, f16_tflops > 0 ? 100.0 * tf / f16_tflops : 0.0, st.ok() ? "" : "  (failed)");
  }
  for (void* p : {k, v, q, out, dt, dp, dti, ws}) cudaFree(p);
  return st.ok();
}

}  // namespace

// `kernels_cuda_bench TYPE ROWS COLS`: that one GEMV shape only, f32 then q8
// activations (for a profiler run); no arguments: the whole table.
int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("no CUDA device: benchmark skipped\n");
    return 0;
  }
  bool ok = true;
  using A = hc::GemvActivations;
  if (argc == 4 &&
      std::string(argv[1]) == "attn") {  // one case: attn CTX SEQS (f16, the chooser's kernel), for a profiler
    measure_copy();
    return bench_attention(hearth::KvPrecision::kF16, std::atoi(argv[3]), std::atoi(argv[2])) ? 0 : 1;
  }
  if (argc == 4) {
    for (const GgmlType t : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
      if (std::string(argv[1]) != hearth::kernels::type_traits(t)->name) continue;
      const int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
      ok = bench_gemv(t, rows, cols, 1, A::kF32) && bench_gemv(t, rows, cols, 1, A::kQ8);
      return ok ? 0 : 1;
    }
    std::printf("unknown type %s\n", argv[1]);
    return 1;
  }
  if (argc == 2 && std::string(argv[1]) == "attn") {  // decode attention: v12 vs wide kernels, chunk lengths
    measure_copy();
    using K = hc::AttentionKernel;
    for (int ctx : {256, 1024, 4096, 16384}) {
      for (int seqs : {1, 16}) {
        for (K k : {K::kV12, K::kWide, K::kStream}) ok = bench_attention(hearth::KvPrecision::kF16, seqs, ctx, k) && ok;
      }
    }
    for (K k : {K::kWide, K::kStream}) {
      for (int split : {32, 64, 96, 128, 256}) ok = bench_attention(hearth::KvPrecision::kF16, 1, 4096, k, split) && ok;
      for (int split : {64, 128, 256, 512}) ok = bench_attention(hearth::KvPrecision::kF16, 1, 16384, k, split) && ok;
    }
    for (K k : {K::kV12, K::kWide, K::kStream}) ok = bench_attention(hearth::KvPrecision::kFp8E4M3, 1, 4096, k) && ok;
    for (K k : {K::kV12, K::kWide}) ok = bench_attention(hearth::KvPrecision::kQ8_0, 1, 4096, k) && ok;
    ok = bench_attention(hearth::KvPrecision::kQ8_0, 16, 4096, K::kWide) && ok;
    return ok ? 0 : 1;
  }
  if (argc == 2 && std::string(argv[1]) == "prefill") {  // prompt attention: split-KV vs tensor-core tiles
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    const double f16 = measure_f16_tflops(handle);
    cublasDestroy(handle);
    for (const auto& [prefix, tokens] : {std::pair{0, 512}, {0, 4096}, {3584, 512}, {7680, 512}, {0, 8192}}) {
      ok = bench_prefill(prefix, tokens, f16) && ok;
    }
    return ok ? 0 : 1;
  }
  if (argc == 5 && std::string(argv[1]) == "mmq") {  // one shape: mmq ROWS COLS TOKENS (Q4_0), for a profiler
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    ok = bench_mmq(GgmlType::kQ4_0, std::atoll(argv[2]), std::atoll(argv[3]), std::atoi(argv[4]), handle);
    cublasDestroy(handle);
    return ok ? 0 : 1;
  }
  if (argc == 2 && std::string(argv[1]) == "mmq") {  // multi-token products: mmq vs the f16 path
    measure_copy();
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    const int64_t mshapes[][2] = {{4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}, {128256, 4096}};
    for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K}) {
      for (const auto& s : mshapes) {
        for (int t : {2, 8, 16, 64, 512}) {
          if (s[0] == 128256 && t == 512) continue;
          ok = bench_mmq(type, s[0], s[1], t, handle) && ok;
        }
      }
    }
    for (int t : {4, 32, 128, 256}) ok = bench_mmq(GgmlType::kQ4_0, 14336, 4096, t, handle) && ok;
    cublasDestroy(handle);
    return ok ? 0 : 1;
  }
  const int64_t shapes[][2] = {{4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}, {128256, 4096}};
  if (argc == 2 && std::string(argv[1]) == "staged") {  // one-token q8 GEMV: direct loads vs staged weights
    measure_copy();
    // staged (0 direct, 1 default, k at most k stages), blocks per SM (0 default)
    const int variants[][2] = {{0, 0}, {1, 0}, {2, 1}, {2, 2}, {3, 1}, {8, 1}};
    for (const auto& s : shapes) {
      if (s[0] == 1024) continue;  // k and v run fused with q
      for (const auto& v : variants) ok = bench_gemv(GgmlType::kQ4_0, s[0], s[1], 1, A::kQ8, v[1], 0, -1, v[0]) && ok;
    }
    for (GgmlType type : {GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
      for (const auto& s : shapes) {
        if (s[0] == 1024) continue;
        for (int st : {0, 1}) ok = bench_gemv(type, s[0], s[1], 1, A::kQ8, 0, 0, -1, st) && ok;
      }
    }
    for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K}) {
      for (const auto& v : {std::array<int, 2>{0, 0}, {1, 0}, {2, 1}, {2, 2}}) {
        ok = bench_fused(type, {4096, 1024, 1024}, 4096, v[0], v[1]) && ok;  // q, k, v
        ok = bench_fused(type, {14336, 14336}, 4096, v[0], v[1]) && ok;      // gate, up
      }
    }
    return ok ? 0 : 1;
  }
  measure_copy();
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
    for (const auto& s : shapes) {
      ok = bench_gemv(type, s[0], s[1], 1, A::kF32) && ok;
      ok = bench_gemv(type, s[0], s[1], 1, A::kQ8) && ok;
    }
  }
  for (GgmlType type : {GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ5_K}) {
    ok = bench_gemv(type, 14336, 4096, 1, A::kF32) && ok;
    ok = bench_gemv(type, 14336, 4096, 1, A::kQ8) && ok;
  }
  for (const auto& s : shapes) ok = bench_gemv(GgmlType::kF16, s[0], s[1], 1, A::kF32) && ok;
  // Prefetch off / on (-1 above: the default), and 1 vs as many resident
  // blocks as fit; lanes from the row length.
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0}) {
    for (const auto& s : shapes) {
      for (int pf : {0, 1}) ok = bench_gemv(type, s[0], s[1], 1, A::kQ8, 0, 0, pf) && ok;
    }
  }
  for (int pf : {0, 1}) ok = bench_gemv(GgmlType::kQ4_0, 14336, 4096, 1, A::kQ8, 1, 0, pf) && ok;
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_K}) {
    ok = bench_fused(type, {4096, 1024, 1024}, 4096) && ok;  // q, k, v
    ok = bench_fused(type, {14336, 14336}, 4096) && ok;      // gate, up
  }
  for (int t : {2, 4, 8}) ok = bench_gemv(GgmlType::kQ4_K, 14336, 4096, t, A::kF32) && ok;
  for (int seqs : {1, 8}) {
    ok = bench_attention(hearth::KvPrecision::kF16, seqs, 4096) && ok;
    ok = bench_attention(hearth::KvPrecision::kFp8E4M3, seqs, 4096) && ok;
    ok = bench_attention(hearth::KvPrecision::kQ8_0, seqs, 4096) && ok;
  }
  return ok ? 0 : 1;
}
