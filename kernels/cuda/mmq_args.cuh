// What mmq.cu (the int8 kernel, the plan, the entry points), mmq_f16.cu (the
// f16 kernel) and mmq_wg.cu (its wgmma form) share: the kernels' arguments,
// their common epilogue, the compile-time dispatch over types and token
// tiles, and the f16 kernels' host side. Include only from those files (and
// mmq_f16_common.cuh, which the f16 ones share).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda::mmq_detail {

struct MmqArgs {
  const uint8_t* w;
  size_t stride;
  int64_t rows;
  int chunks;  // per row (cols / 256)
  int stages;  // of the kernel's width (int8: ceil(chunks / 2); f16: chunks)
  int stages_per_split;
  const uint8_t* codes;  // [n_tokens][cols] bytes (f16: [n_tokens][cols] halves)
  const float2* ds;      // [n_tokens][cols / 32] (f16: float scale[n_tokens])
  int64_t n_tokens;
  int64_t cols;
  float* y;
  const float* bias;
  const float* residual;
  float* partial;  // [splits][n_tokens][rows], used when gridDim.z > 1
};

// One output of either kernel: to the split's partial sums, or + bias and
// residual (which may alias y) to y.
__device__ __forceinline__ void store_output(const MmqArgs& a, int64_t tok, int64_t row, float v) {
  if (tok >= a.n_tokens || row >= a.rows) return;
  const size_t at = static_cast<size_t>(tok) * static_cast<size_t>(a.rows) + static_cast<size_t>(row);
  if (gridDim.z > 1) {
    a.partial[static_cast<size_t>(blockIdx.z) * static_cast<size_t>(a.n_tokens * a.rows) + at] = v;
    return;
  }
  if (a.bias != nullptr) v += a.bias[row];
  if (a.residual != nullptr) v += a.residual[at];
  a.y[at] = v;
}

// Calls f(std::integral_constant<GgmlType, T>) for the mmq type t.
template <class F>
decltype(auto) with_type(GgmlType t, F&& f) {
  switch (t) {
    case GgmlType::kQ4_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_0>{});
    case GgmlType::kQ4_1:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_1>{});
    case GgmlType::kQ5_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_0>{});
    case GgmlType::kQ5_1:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_1>{});
    case GgmlType::kQ8_0:
      return f(std::integral_constant<GgmlType, GgmlType::kQ8_0>{});
    case GgmlType::kQ4_K:
      return f(std::integral_constant<GgmlType, GgmlType::kQ4_K>{});
    default:
      return f(std::integral_constant<GgmlType, GgmlType::kQ5_K>{});
  }
}

// Calls f(std::integral_constant<int, NT>) for the token tile nt.
template <class F>
decltype(auto) with_tile(int nt, F&& f) {
  switch (nt) {
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
    case 32:
      return f(std::integral_constant<int, 32>{});
    default:
      return f(std::integral_constant<int, 64>{});
  }
}

// The f16 kernel (mmq_f16.cu): 128 weight rows x nt tokens per block, one
// 256-column stage (a chunk per row) at a time; sm_80 and later.
constexpr int kF16BlockRows = 128;
bool f16_supported();
// Blocks of the f16 kernel resident per multiprocessor (0: it cannot run).
int f16_resident(GgmlType t, int nt);
Status launch_f16(GgmlType t, int nt, const MmqArgs& a, dim3 grid, cudaStream_t stream);
// x: [n_tokens][cols] f32 to f16 in the kernel's layout, then the per-token
// scales, in act (mmq_act_bytes).
Status to_f16(const float* x, int64_t n_tokens, int64_t cols, void* act, size_t scale_offset, cudaStream_t stream);
// The wgmma form of the f16 kernel (mmq_wg.cu, sm_90a: the same blocks and
// stages, its own order of the f16 activations).
bool f16_wg_supported();
int f16_wg_resident(GgmlType t, int nt);
Status launch_f16_wg(GgmlType t, int nt, const MmqArgs& a, dim3 grid, cudaStream_t stream);
Status to_f16_wg(const float* x, int64_t n_tokens, int64_t cols, void* act, size_t scale_offset, cudaStream_t stream);

}  // namespace hearth::kernels::cuda::mmq_detail
