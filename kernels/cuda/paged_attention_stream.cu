// The stream kernel (v20; paged_attention.h, AttentionKernel::kStream): the
// wide kernel's blocks and arithmetic (paged_attention_wide.cuh) with the
// K/V rows staged in shared memory by cp.async.
#include <cuda_runtime_api.h>

#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/paged_attention_wide.cuh"

namespace hearth::kernels::cuda::attn_detail {
namespace {

// ---- The stream path (v20): K/V tiles staged in shared memory, several in flight ----
//
// The wide kernel's blocks, rows and arithmetic (bit-identical outputs for
// the same chunking), but a block's rows reach it by cp.async: an iteration's
// kStep K and V rows are one tile (16 KB for f16 at any head size), and
// kStreamStages - 1 tiles are in flight while the block works on one. So a
// block whose chunk is two tiles long (8B at 4,096 positions) issues all its
// loads in one round, and long chunks stream instead of alternating between
// loading and computing. f16 and fp8 caches (q8_0's 2-byte scales take no
// cp.async; it keeps the wide kernel).
constexpr int kStreamStages = 3;

template <KvPrecision kDtype>
__host__ __device__ constexpr int stream_esize() {
  return kDtype == KvPrecision::kF16 ? 2 : 1;
}

// One stage: K then V, kStep rows each; a row is kD elements as the cache holds them.
template <KvPrecision kDtype, int kLanes>
__host__ __device__ constexpr int stream_tile_bytes() {
  return 2 * WideShape<kLanes>::kStep * WideShape<kLanes>::kD * stream_esize<kDtype>();
}

// The merge's (max, sum) array, rounded to 16 bytes, then its outputs; both over the stages.
template <int kLanes>
constexpr int kStreamMlBytes = (WideShape<kLanes>::kWorkers * kMaxGroup * 2 * 4 + 15) / 16 * 16;

template <KvPrecision kDtype, int kLanes>
constexpr size_t stream_smem_bytes() {
  constexpr size_t stages = static_cast<size_t>(kStreamStages) * stream_tile_bytes<kDtype, kLanes>();
  constexpr size_t merge =
      kStreamMlBytes<kLanes> + sizeof(float) * WideShape<kLanes>::kWorkers * kMaxGroup * WideShape<kLanes>::kD;
  return stages > merge ? stages : merge;
}

template <KvPrecision kDtype, int kLanes>
__global__ void __launch_bounds__(kWideThreads, kWideMinBlocks) attn_stream_kernel(AttnArgs a) {
  static_assert(kDtype != KvPrecision::kQ8_0, "q8_0 caches take the wide kernel");
  using Shape = WideShape<kLanes>;
  constexpr int kD = Shape::kD, kPerWarp = Shape::kPerWarp, kWorkers = Shape::kWorkers, kStep = Shape::kStep;
  constexpr int kRowBytes = kD * stream_esize<kDtype>();
  constexpr int kPieces = kRowBytes / 16;               // 16-byte copies a row
  constexpr int kRowsPerPass = kWideThreads / kPieces;  // rows the block's threads cover per copy
  constexpr int kCopies = kStep / kRowsPerPass;         // copies per thread per K (and per V) tile
  constexpr int kTile = stream_tile_bytes<kDtype, kLanes>();
  static_assert(kWideThreads % kPieces == 0 && kStep % kRowsPerPass == 0, "tile shape");
  extern __shared__ __align__(16) uint8_t stream_smem[];
  pdl_launch_dependents();
  pdl_wait();
  const int row = blockIdx.x, t = token_of(a.token_index, row), chunk = blockIdx.z;
  const int g = blockIdx.y / a.subgroups;
  const int h0 = g * a.group + (blockIdx.y % a.subgroups) * kMaxGroup;
  const int gs = min(kMaxGroup, g * a.group + a.group - h0);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int sub = lane % kLanes, worker = warp * kPerWarp + lane / kLanes;
  const int p = a.positions[t];
  const int first = a.window > 0 ? max(0, p - a.window + 1) : 0;
  const int lo = max(chunk * a.split_len, first), hi = min((chunk + 1) * a.split_len, p + 1);
  const int n_tiles = hi > lo ? (hi - lo + kStep - 1) / kStep : 0;
  const int seq = a.token_seq != nullptr ? a.token_seq[t] : 0;
  const int32_t* table = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;
  // This thread copies piece `col` of rows row0 + kRowsPerPass * j of each tile.
  const int col = static_cast<int>(threadIdx.x) % kPieces, row0 = static_cast<int>(threadIdx.x) / kPieces;
  const int64_t slot_bytes = static_cast<int64_t>(a.n_kv_heads) * kRowBytes;
  const int64_t head_byte = static_cast<int64_t>(g) * kRowBytes + col * 16;
  const auto* kbase = static_cast<const uint8_t*>(a.k);
  const auto* vbase = static_cast<const uint8_t*>(a.v);
  // Pool blocks of the next tile to issue (read a tile ahead of its copies).
  int32_t blk[kCopies];
  const auto read_table = [&](int tile) {
#pragma unroll
    for (int j = 0; j < kCopies; ++j) {
      const int pos = lo + tile * kStep + row0 + kRowsPerPass * j;
      blk[j] = tile < n_tiles && pos < hi ? __ldg(table + pos / a.block_size) : 0;
    }
  };
  const auto issue = [&](int tile) {
    uint8_t* const st = stream_smem + (tile % kStreamStages) * kTile;
#pragma unroll
    for (int j = 0; j < kCopies; ++j) {
      const int r = row0 + kRowsPerPass * j, pos = lo + tile * kStep + r;
      if (pos < hi) {
        const int64_t off = (static_cast<int64_t>(blk[j]) * a.block_size + pos % a.block_size) * slot_bytes + head_byte;
        cp_async16(st + r * kRowBytes + col * 16, kbase + off);
        cp_async16(st + (kStep + r) * kRowBytes + col * 16, vbase + off);
      }
    }
  };
  read_table(0);
#pragma unroll
  for (int s = 0; s < kStreamStages - 1; ++s) {
    if (s < n_tiles) {
      issue(s);
      read_table(s + 1);
    }
    cp_async_commit();
  }

  float qv[kMaxGroup][kWideElems], acc[kMaxGroup][kWideElems], m[kMaxGroup], l[kMaxGroup];
  wide_start<kLanes>(a, t, h0, gs, sub, qv, acc, m, l);
  const int lane_byte = sub * kWideElems * stream_esize<kDtype>();
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int next = tile + kStreamStages - 1;  // into the stage the previous iteration read
    if (next < n_tiles) {
      issue(next);
      read_table(next + 1);
    }
    cp_async_commit();
    cp_async_wait<kStreamStages - 1>();
    __syncthreads();
    const uint8_t* const st = stream_smem + (tile % kStreamStages) * kTile;
    const int base = lo + tile * kStep;
    WideRaw<kDtype> kr[kWideRows], vr[kWideRows];
#pragma unroll
    for (int j = 0; j < kWideRows; ++j) {
      const int r = j * kWorkers + worker;
      if (base + r < hi) {
        kr[j] = wide_smem<kDtype>(st + r * kRowBytes + lane_byte);
        vr[j] = wide_smem<kDtype>(st + (kStep + r) * kRowBytes + lane_byte);
      } else {
        kr[j] = wide_zero<kDtype>();
        vr[j] = wide_zero<kDtype>();
      }
    }
    wide_fold<kDtype, kLanes>(base, worker, hi, kr, vr, qv, acc, m, l);
    __syncthreads();
  }
  cp_async_wait_all();  // the groups past the last tile are empty
  // The merge's arrays reuse the stages (every thread is past its last read of them).
  auto* s_ml = reinterpret_cast<float(*)[kMaxGroup][2]>(stream_smem);
  auto* s_acc = reinterpret_cast<float(*)[kMaxGroup][kD]>(stream_smem + kStreamMlBytes<kLanes>);
  wide_finish<kLanes>(a, row, t, chunk, h0, gs, sub, worker, acc, m, l, s_ml, s_acc);
}

// The stream kernel of an f16 or fp8 cache, with its shared memory. Its
// dynamic limit is set once, also at sizes within the default 48 KB: that
// default is 48 KB less the kernel's static shared memory, so a static byte
// added to a 48 KB kernel would otherwise fail every launch ("invalid
// argument"; it did, session 17's last-block merge).
template <KvPrecision kDtype, int kLanes>
KernelChoice stream_kernel() {
  constexpr size_t smem = stream_smem_bytes<kDtype, kLanes>();
  static const bool ready = [] {
    return cudaFuncSetAttribute(attn_stream_kernel<kDtype, kLanes>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(smem)) == cudaSuccess;
  }();
  if (!ready) return {};
  return {attn_stream_kernel<kDtype, kLanes>, smem};
}

template <int kLanes>
KernelChoice stream_kernel_for(KvPrecision dtype) {
  switch (dtype) {
    case KvPrecision::kF16:
      return stream_kernel<KvPrecision::kF16, kLanes>();
    case KvPrecision::kFp8E4M3:
      return stream_kernel<KvPrecision::kFp8E4M3, kLanes>();
    case KvPrecision::kQ8_0:
      break;
  }
  return {};
}

}  // namespace

KernelChoice stream_kernel_choice(KvPrecision dtype, int head_dim) {
  switch (head_dim) {
    case 32:
      return stream_kernel_for<4>(dtype);
    case 64:
      return stream_kernel_for<8>(dtype);
    case 128:
      return stream_kernel_for<16>(dtype);
    case 256:
      return stream_kernel_for<32>(dtype);
    default:
      return {};
  }
}

bool stream_pays(int split_len, int head_dim) {
  return split_len > (kStreamStages - 1) * (kWideRows * kWideThreads * kWideElems / head_dim);
}

}  // namespace hearth::kernels::cuda::attn_detail
