// Multi-token 8-bit-activation products on the int8 tensor cores (mmq.h),
// and the entry points of both kinds.
//
// Work split. A block of 4 warps computes 64 weight rows (16 per warp: one
// m16 tile) x NT tokens (NT / 8 n8 tiles) over a range of "stages" of 512
// columns (16 units of 32). Per stage:
//   - each lane of a warp holds one 256-element chunk of one of the warp's 16
//     rows (lanes l and l + 16: the row's two chunks, adjacent in memory) in
//     registers, read with 16-byte loads one stage ahead (the loads of stage
//     s + 1 are in flight while stage s is multiplied), and writes it as 8
//     units of 32 int8 codes and (d, m) into the warp's own shared tile;
//   - the block copies the NT tokens' codes and (d, s) of the stage into a
//     shared tile (cp.async: already quantized by mmq_quantize);
//   - per unit, each warp does NT / 8 mma.m16n8k32 (s8 x s8 -> s32) and adds
//     d_w d_x sumi + m_w s_x to its f32 accumulators (a thread owns rows g,
//     g + 8 and tokens 2t, 2t + 1 of each n8 tile, the mma's C layout).
// Codes are kept in "pair order" (words 0, 4, 1, 5, 2, 6, 3, 7 of a unit), so
// an A or B fragment register pair (k 4t.., k 16 + 4t..) is one 8-byte shared
// load, conflict-free per half warp.
//
// Split-K. Where the row tiles x token tiles are too few to fill the GPU
// (a 4096-row matrix is 64 tiles), blockIdx.z takes a range of stages and
// writes its partial sums to scratch; a second kernel adds the splits in
// order plus bias and residual. Without splits the epilogue is fused.
//
// f16 activations: mmq_f16.cu (its own kernel, sm_80+); this file plans and
// launches both.
//
// Arithmetic per output: a unit's int32 dot (exact), converted to f32 exactly
// (|sumi| < 2^22: the 1.5 * 2^23 trick), times (d_w d_x), plus m_w s_x for
// the types with an offset, accumulated unit by unit in f32. The rows'
// activations are those of the one-token GEMV (same codes, same d and s).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <utility>

#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/mmq.h"
#include "kernels/cuda/mmq_args.cuh"
#include "kernels/cuda/mmq_units.cuh"
#include "kernels/cuda/q8_chunk.cuh"

namespace hearth::kernels::cuda {
namespace {

using mmq_detail::MmqArgs;
using mmq_detail::store_output;
using mmq_detail::with_tile;
using mmq_detail::with_type;
using mmq_units::MmqType;
using mmq_units::WUnit;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
constexpr int kBlockRows = 16 * kWarps;
constexpr int kStageUnits = 16;  // 512 columns: two 256-element chunks per row
constexpr int kUnitWords = 8;    // 32 int8 codes
constexpr size_t kDefaultSmem = 48 * 1024;
constexpr int64_t kDefaultMaxTokens = 64;  // mmq_max_tokens() without the environment
// mmq_f16_min_tokens() without the environment: f16 activations from 9 rows
// (v20, H100: 16 streams +25%, 64 streams +27% over int8; from 2 rows no
// better at 16 and 3% slower at 64; docs/perf-notes.md v20).
constexpr int64_t kDefaultF16MinTokens = 9;

// Shared tile sizes (bytes) per block.
__host__ __device__ constexpr size_t a_bytes() {
  return static_cast<size_t>(kWarps) * kStageUnits * 16 * (4 * kUnitWords + 8);
}
__host__ __device__ constexpr size_t b_bytes(int nt) {
  return static_cast<size_t>(nt) * kStageUnits * (4 * kUnitWords + 8);
}
// x -> codes in pair order, (d, s) per unit. One warp per unit of 32 values;
// the f32 operations of gemv_q8.cu's quantize_unit (amax exact in any order,
// id = 127 / amax, codes rint(x id), d = amax / 127, s = d * sum(codes)).
__global__ void mmq_quantize_kernel(const float* __restrict__ x, int64_t units, uint32_t* __restrict__ codes,
                                    float2* __restrict__ ds) {
  pdl_launch_dependents();
  pdl_wait();  // x comes from the kernel before
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; u < units;
       u += warps) {
    const float v = x[32 * u + lane];
    float amax = fabsf(v);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    const int q = __float2int_rn(v * id);
    int qsum = q;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) qsum += __shfl_xor_sync(0xffffffffu, qsum, off);
    // Lane p < 8 writes pair-order word p: natural word i = p / 2 + 4 (p % 2),
    // elements 4i .. 4i + 3.
    const int i = lane % 8 / 2 + 4 * (lane % 2);
    uint32_t w = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t b = static_cast<uint32_t>(__shfl_sync(0xffffffffu, q, 4 * i + k)) & 0xffu;
      w |= b << (8 * k);
    }
    if (lane < 8) codes[8 * u + lane] = w;
    if (lane == 0) ds[u] = make_float2(amax / 127.0f, amax / 127.0f * static_cast<float>(qsum));
  }
}

// D = A B (C = 0): A 16x32 s8 (rows g, g + 8; k 4t.., 16 + 4t..), B 32x8 s8.
// Compute capability 8.0 and later (the host never launches mmq below it).
__device__ __forceinline__ void mma_s8(const uint2 a_lo, const uint2 a_hi, const uint2 b, int (&d)[4]) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800
  d[0] = d[1] = d[2] = d[3] = 0;
  static_cast<void>(a_lo), static_cast<void>(a_hi), static_cast<void>(b);
  __trap();
#else
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %10, %10, %10};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a_lo.x), "r"(a_hi.x), "r"(a_lo.y), "r"(a_hi.y), "r"(b.x), "r"(b.y), "r"(0));
#endif
}

// An int32 of magnitude < 2^22 as f32, exactly: 1.5 * 2^23 + v has ulp 1.
__device__ __forceinline__ float small_int_to_float(int v) {
  return __int_as_float(v + 0x4b400000) - 12582912.0f;
}

template <GgmlType T, int NT>
__global__ void __launch_bounds__(kThreads) mmq_kernel(const MmqArgs a) {
  using Tr = MmqType<T>;
  constexpr int kNV = Tr::kChunkBytes / 16;
  constexpr int kTiles = NT / 8;
  extern __shared__ uint4 smem[];
  const int warp = static_cast<int>(threadIdx.x) / kWarp, lane = static_cast<int>(threadIdx.x) % kWarp;
  const int g = lane / 4, t = lane % 4;
  // Shared: per warp A codes [16 units][16 rows][8 words] and A (d, m)
  // [16 units][16 rows]; then B codes [16 units][NT][8 words], B (d, s) [16][NT].
  uint32_t* a_codes = reinterpret_cast<uint32_t*>(smem) + warp * (kStageUnits * 16 * kUnitWords);
  float2* a_ds = reinterpret_cast<float2*>(reinterpret_cast<uint32_t*>(smem) + kWarps * kStageUnits * 16 * kUnitWords) +
                 warp * (kStageUnits * 16);
  uint32_t* b_codes = reinterpret_cast<uint32_t*>(reinterpret_cast<uint8_t*>(smem) + a_bytes());
  float2* b_ds = reinterpret_cast<float2*>(b_codes + kStageUnits * NT * kUnitWords);

  const int64_t tok0 = static_cast<int64_t>(blockIdx.x) * NT;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kBlockRows + 16 * warp;
  const int s_begin = static_cast<int>(blockIdx.z) * a.stages_per_split;
  const int s_end = min(a.stages, s_begin + a.stages_per_split);
  const int64_t my_row = min(row0 + (lane & 15), a.rows - 1);  // a clamped row is computed, never stored
  const uint8_t* my_w = a.w + static_cast<size_t>(my_row) * a.stride;
  const int half = lane >> 4;
  const int64_t units_per_token = a.cols / 32;

  float acc[kTiles][4];
#pragma unroll
  for (int j = 0; j < kTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  const auto load_w = [&](int s) {
    const int c = min(2 * s + half, a.chunks - 1);  // a clamped chunk is loaded, never used
    return load_chunk<kNV>(my_w + static_cast<size_t>(c) * Tr::kChunkBytes);
  };
  Chunk<kNV> cur = load_w(s_begin);
  pdl_launch_dependents();
  pdl_wait();  // the codes (and the residual) come from the kernels before; the weights never change
  for (int s = s_begin; s < s_end; ++s) {
    const int units = min(kStageUnits, 8 * (a.chunks - 2 * s));  // 8 or 16
    __syncthreads();                                             // every warp is done with the last stage's tiles
    // B: NT tokens x units x 32 bytes, and (d, s).
    for (int i = static_cast<int>(threadIdx.x); i < NT * 2 * kStageUnits; i += kThreads) {
      const int tok = i / (2 * kStageUnits), part = i % (2 * kStageUnits), u = part / 2;
      if (u >= units) continue;
      const int64_t gt = min(tok0 + tok, a.n_tokens - 1);
      cp_async16(b_codes + (u * NT + tok) * kUnitWords + 4 * (part % 2),
                 a.codes + static_cast<size_t>(gt) * a.cols + static_cast<size_t>(s) * 512 + 16 * part);
    }
    for (int i = static_cast<int>(threadIdx.x); i < NT * kStageUnits; i += kThreads) {
      const int tok = i / kStageUnits, u = i % kStageUnits;
      if (u >= units) continue;
      const int64_t gt = min(tok0 + tok, a.n_tokens - 1);
      cp_async8(b_ds + u * NT + tok, a.ds + gt * units_per_token + 16 * s + u);
    }
    // A: this lane's chunk as 8 units (its row lane & 15, units 8 half ..).
    if (2 * s + half < a.chunks) {
#pragma unroll
      for (int b = 0; b < 8; ++b) {
        const WUnit wu = Tr::unit(cur, b);
        const int u = 8 * half + b, r = lane & 15;
        uint4* dst = reinterpret_cast<uint4*>(a_codes + (u * 16 + r) * kUnitWords);
        dst[0] = make_uint4(wu.q[0], wu.q[4], wu.q[1], wu.q[5]);
        dst[1] = make_uint4(wu.q[2], wu.q[6], wu.q[3], wu.q[7]);
        a_ds[u * 16 + r] = make_float2(wu.d, wu.m);
      }
    }
    if (s + 1 < s_end) cur = load_w(s + 1);  // in flight during this stage's products
    cp_async_wait_all();
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kStageUnits; ++u) {
      if (u >= units) break;
      const uint2 a_lo = *reinterpret_cast<const uint2*>(a_codes + (u * 16 + g) * kUnitWords + 2 * t);
      const uint2 a_hi = *reinterpret_cast<const uint2*>(a_codes + (u * 16 + g + 8) * kUnitWords + 2 * t);
      const float2 wd_lo = a_ds[u * 16 + g], wd_hi = a_ds[u * 16 + g + 8];
#pragma unroll
      for (int j = 0; j < kTiles; ++j) {
        const uint2 b = *reinterpret_cast<const uint2*>(b_codes + (u * NT + 8 * j + g) * kUnitWords + 2 * t);
        const float4 xd = *reinterpret_cast<const float4*>(b_ds + u * NT + 8 * j + 2 * t);  // (d, s) x 2 tokens
        int d[4];
        mma_s8(a_lo, a_hi, b, d);
        acc[j][0] = fmaf(small_int_to_float(d[0]), wd_lo.x * xd.x, acc[j][0]);
        acc[j][1] = fmaf(small_int_to_float(d[1]), wd_lo.x * xd.z, acc[j][1]);
        acc[j][2] = fmaf(small_int_to_float(d[2]), wd_hi.x * xd.x, acc[j][2]);
        acc[j][3] = fmaf(small_int_to_float(d[3]), wd_hi.x * xd.z, acc[j][3]);
        if constexpr (Tr::kOffset) {
          acc[j][0] = fmaf(wd_lo.y, xd.y, acc[j][0]);
          acc[j][1] = fmaf(wd_lo.y, xd.w, acc[j][1]);
          acc[j][2] = fmaf(wd_hi.y, xd.y, acc[j][2]);
          acc[j][3] = fmaf(wd_hi.y, xd.w, acc[j][3]);
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) store_output(a, tok0 + 8 * j + 2 * t + (e & 1), row0 + g + 8 * (e >> 1), acc[j][e]);
  }
}

// y = sum over splits in order (+ bias) (+ residual).
__global__ void mmq_reduce_kernel(const float* __restrict__ partial, int splits, int64_t n, int64_t rows, float* y,
                                  const float* bias, const float* residual) {
  pdl_launch_dependents();
  pdl_wait();
  const int64_t total = n * rows;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = partial[i];
    for (int s = 1; s < splits; ++s) v += partial[static_cast<size_t>(s) * static_cast<size_t>(total) + i];
    if (bias != nullptr) v += bias[i % rows];
    if (residual != nullptr) v += residual[i];
    y[i] = v;
  }
}

bool device_has_int8_mma() {
  return device_cc_major() >= 8;
}

int token_tile(int64_t n) {
  return n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64;
}

size_t smem_bytes(int nt) {
  return a_bytes() + b_bytes(nt);
}

struct Plan {
  int nt = 8;
  unsigned token_tiles = 1, row_tiles = 1;
  int splits = 1, stages_per_split = 1, stages = 1;
};

// The int8 kernel: raises its dynamic shared-memory limit where it needs
// more than the default 48 KB, and returns its blocks resident per
// multiprocessor (registers and shared memory); once per instantiation.
template <GgmlType T, int NT>
int resident_q8() {
  static std::atomic<int> cached{0};
  int r = cached.load(std::memory_order_relaxed);
  if (r > 0) return r;
  const size_t bytes = smem_bytes(NT);
  if ((bytes > kDefaultSmem && cudaFuncSetAttribute(mmq_kernel<T, NT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(bytes)) != cudaSuccess) ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, mmq_kernel<T, NT>, kThreads, bytes) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    r = 1;
  }
  r = std::max(r, 1);
  cached.store(r, std::memory_order_relaxed);
  return r;
}

int resident_blocks(GgmlType t, int nt, MmqActivations kind) {
  if (kind == MmqActivations::kF16Wg) return std::max(1, mmq_detail::f16_wg_resident(t, nt));
  if (kind == MmqActivations::kF16) return std::max(1, mmq_detail::f16_resident(t, nt));
  return with_type(t, [&](auto type) {
    return with_tile(nt, [&](auto tile) { return resident_q8<decltype(type)::value, decltype(tile)::value>(); });
  });
}

// The int8 kernel's blocks are 64 rows x 512 columns a stage, the f16
// kernels' 128 x 256; the split count: mmq_choose_split.
Plan plan(const DeviceMatrix& w, int64_t n, size_t scratch_bytes, MmqActivations kind) {
  const bool f16 = kind != MmqActivations::kQ8;
  Plan p;
  p.nt = token_tile(n);
  p.token_tiles = static_cast<unsigned>((n + p.nt - 1) / p.nt);
  const int block_rows = f16 ? mmq_detail::kF16BlockRows : kBlockRows;
  p.row_tiles = static_cast<unsigned>((w.rows + block_rows - 1) / block_rows);
  const int chunks = static_cast<int>(w.cols / 256);
  p.stages = f16 ? chunks : (chunks + 1) / 2;
  const int64_t tiles = static_cast<int64_t>(p.token_tiles) * p.row_tiles;
  const int64_t resident_all =
      static_cast<int64_t>(std::max(1, device_limits().sms)) * resident_blocks(w.type, p.nt, kind);
  const size_t per_split = static_cast<size_t>(n * w.rows) * sizeof(float);
  const int max_splits = static_cast<int>(std::min<size_t>(static_cast<size_t>(p.stages), scratch_bytes / per_split));
  // A stage's weight bytes per row; a block's partial sums and one split's
  // read-back by the reduction, in stages of weight bytes.
  // HEARTH_CUDA_MMQ_SPLIT_BYTES=0: the model without them (A/B runs).
  static const bool count_bytes = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ_SPLIT_BYTES");
    return v == nullptr || std::atoi(v) != 0;
  }();
  const double w_row = static_cast<double>(w.row_stride) / chunks * (f16 ? 1 : 2);
  const double block_write = count_bytes ? p.nt * 4.0 / w_row : 0.0;
  const double reduce_read = count_bytes ? static_cast<double>(n) * static_cast<double>(w.rows) * 4.0 /
                                               (static_cast<double>(resident_all) * block_rows * w_row)
                                         : 0.0;
  const MmqSplit s = mmq_choose_split(tiles, p.stages, resident_all, max_splits, block_write, reduce_read);
  p.splits = s.splits;
  p.stages_per_split = s.stages_per_split;
  return p;
}

template <GgmlType T, int NT>
Status launch_q8(const MmqArgs& a, const Plan& p, cudaStream_t stream) {
  resident_q8<T, NT>();  // raises the shared-memory limit
  HEARTH_CUDA_CHECK(launch_pdl(mmq_kernel<T, NT>, dim3(p.token_tiles, p.row_tiles, static_cast<unsigned>(p.splits)),
                               kThreads, smem_bytes(NT), stream, a));
  return check_launch("mmq_kernel");
}

size_t align256(size_t n) {
  return (n + 255) / 256 * 256;
}

}  // namespace

MmqSplit mmq_choose_split(int64_t tiles, int stages, int64_t resident, int max_splits, double block_write,
                          double reduce_read) {
  MmqSplit best{1, std::max(1, stages)};
  double best_cost = -1.0;
  resident = std::max<int64_t>(1, resident);
  for (int s = 1; s <= std::max(1, std::min(max_splits, stages)); ++s) {
    const int sps = (stages + s - 1) / s, eff = (stages + sps - 1) / sps;
    if (eff != s) continue;  // the same split as a smaller s
    const int64_t rounds = (tiles * eff + resident - 1) / resident;
    double cost = static_cast<double>(rounds * sps);
    if (eff > 1)
      cost += static_cast<double>(rounds) * block_write + eff * reduce_read + 1.0;  // + the reduction's launch
    if (best_cost < 0.0 || cost < best_cost) {
      best_cost = cost;
      best = MmqSplit{eff, sps};
    }
  }
  return best;
}

bool mmq_applies(const DeviceMatrix& w) {
  switch (w.type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
      break;
    default:
      return false;
  }
  return w.cols > 0 && w.cols % 256 == 0 && w.rows > 0 && w.row_stride % 16 == 0 &&
         reinterpret_cast<uintptr_t>(w.data) % 16 == 0 && device_has_int8_mma();
}

int64_t mmq_f16_min_tokens() {
  static const int64_t n = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ_F16");
    if (v == nullptr || *v == '\0') return kDefaultF16MinTokens;
    const long long k = std::atoll(v);
    return k <= 0 ? int64_t{-1} : std::max<int64_t>(2, k);
  }();
  return n;
}

bool mmq_f16_supported() {
  return mmq_detail::f16_supported();
}

bool mmq_f16_wg_supported() {
  return mmq_detail::f16_wg_supported();
}

MmqActivations mmq_activations(int64_t n_tokens) {
  static const bool wgmma = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ_WGMMA");
    return v != nullptr && std::atoi(v) != 0;
  }();
  const int64_t from = mmq_f16_min_tokens();
  if (from <= 0 || n_tokens < from || !mmq_detail::f16_supported()) return MmqActivations::kQ8;
  return wgmma && mmq_detail::f16_wg_supported() ? MmqActivations::kF16Wg : MmqActivations::kF16;
}

size_t mmq_act_bytes(int64_t n_tokens, int64_t cols) {
  const auto values = static_cast<size_t>(n_tokens * cols);
  const size_t q8 = align256(values) + align256(values / 32 * 8);
  const size_t f16 = align256(2 * values) + align256(static_cast<size_t>(n_tokens) * sizeof(float));
  return std::max(q8, f16);
}

Status mmq_quantize(const float* x, int64_t n_tokens, int64_t cols, void* act, cudaStream_t stream,
                    MmqActivations kind) {
  HEARTH_CUDA_REQUIRE(x != nullptr && act != nullptr && n_tokens > 0 && cols > 0 && cols % 256 == 0);
  if (kind == MmqActivations::kAuto) kind = mmq_activations(n_tokens);
  HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(act) % 256 == 0);
  const auto values = static_cast<size_t>(n_tokens * cols);
  if (kind == MmqActivations::kF16) return mmq_detail::to_f16(x, n_tokens, cols, act, align256(2 * values), stream);
  if (kind == MmqActivations::kF16Wg) {
    return mmq_detail::to_f16_wg(x, n_tokens, cols, act, align256(2 * values), stream);
  }
  auto* codes = static_cast<uint32_t*>(act);
  auto* ds = reinterpret_cast<float2*>(static_cast<uint8_t*>(act) + align256(values));
  const int64_t units = n_tokens * cols / 32;
  constexpr int kQThreads = 256;
  const auto grid =
      static_cast<unsigned>(std::min<int64_t>((units + kQThreads / kWarp - 1) / (kQThreads / kWarp), 65536));
  HEARTH_CUDA_CHECK(launch_pdl(mmq_quantize_kernel, dim3(grid), kQThreads, 0, stream, x, units, codes, ds));
  return check_launch("mmq_quantize_kernel");
}

size_t mmq_scratch_bytes(const DeviceMatrix& w, int64_t n_tokens, MmqActivations kind) {
  if (kind == MmqActivations::kAuto) kind = mmq_activations(n_tokens);
  const Plan p = plan(w, n_tokens, static_cast<size_t>(-1), kind);
  return p.splits > 1 ? static_cast<size_t>(p.splits) * static_cast<size_t>(n_tokens * w.rows) * sizeof(float) : 0;
}

Status mmq(const DeviceMatrix& w, const void* act, int64_t n_tokens, float* y, const GemvEpilogue& epilogue,
           void* scratch, size_t scratch_bytes, cudaStream_t stream, MmqActivations kind) {
  HEARTH_CUDA_REQUIRE(mmq_applies(w) && act != nullptr && y != nullptr && n_tokens > 0);
  HEARTH_CUDA_REQUIRE(n_tokens <= 0x7fffffff && w.rows <= 0x7fffffff);
  if (kind == MmqActivations::kAuto) kind = mmq_activations(n_tokens);
  const bool f16 = kind != MmqActivations::kQ8;
  HEARTH_CUDA_REQUIRE(!f16 || mmq_detail::f16_supported());
  HEARTH_CUDA_REQUIRE(kind != MmqActivations::kF16Wg || mmq_detail::f16_wg_supported());
  const Plan p = plan(w, n_tokens, scratch == nullptr ? 0 : scratch_bytes, kind);
  HEARTH_CUDA_REQUIRE(p.token_tiles <= 0x7fffffffu && p.row_tiles <= 65535u);
  const auto values = static_cast<size_t>(n_tokens * w.cols);
  MmqArgs a{};
  a.w = static_cast<const uint8_t*>(w.data);
  a.stride = w.row_stride;
  a.rows = w.rows;
  a.chunks = static_cast<int>(w.cols / 256);
  a.stages = p.stages;
  a.stages_per_split = p.stages_per_split;
  a.codes = static_cast<const uint8_t*>(act);
  a.ds = reinterpret_cast<const float2*>(static_cast<const uint8_t*>(act) + align256(f16 ? 2 * values : values));
  a.n_tokens = n_tokens;
  a.cols = w.cols;
  a.y = y;
  a.bias = epilogue.bias;
  a.residual = epilogue.residual;
  a.partial = static_cast<float*>(scratch);
  const dim3 grid(p.token_tiles, p.row_tiles, static_cast<unsigned>(p.splits));
  if (kind == MmqActivations::kF16Wg) {
    HEARTH_CUDA_TRY(mmq_detail::launch_f16_wg(w.type, p.nt, a, grid, stream));
  } else if (f16) {
    HEARTH_CUDA_TRY(mmq_detail::launch_f16(w.type, p.nt, a, grid, stream));
  } else {
    HEARTH_CUDA_TRY(with_type(w.type, [&](auto type) {
      return with_tile(
          p.nt, [&](auto tile) { return launch_q8<decltype(type)::value, decltype(tile)::value>(a, p, stream); });
    }));
  }
  if (p.splits <= 1) return {};
  const int64_t total = n_tokens * w.rows;
  const auto reduce_grid = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 4096));
  HEARTH_CUDA_CHECK(launch_pdl(mmq_reduce_kernel, dim3(reduce_grid), 256, 0, stream,
                               static_cast<const float*>(a.partial), p.splits, n_tokens, w.rows, y, epilogue.bias,
                               epilogue.residual));
  return check_launch("mmq_reduce_kernel");
}

bool mmq_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ");
    return v == nullptr || std::atoi(v) != 0;
  }();
  return on;
}

int64_t mmq_max_tokens() {
  // Measured (docs/perf-notes.md v10): mmq is 1.4-4x faster than the f16
  // path up to 64 rows, 0.8x at 128 and 0.33x at 512 (prompts: cuBLAS on f16
  // tensor cores then wins); a warm 512-token prompt 8,654 tok/s with this
  // limit against 5,096 with mmq for every product.
  static const int64_t n = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ_MAX_TOKENS");
    const long long k = v == nullptr ? 0 : std::atoll(v);
    return k > 0 ? static_cast<int64_t>(k) : kDefaultMaxTokens;
  }();
  return n;
}

}  // namespace hearth::kernels::cuda
