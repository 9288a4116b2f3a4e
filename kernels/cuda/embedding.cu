#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/embedding.h"

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// grid.x: unit blocks of a row, grid.y: token. One thread per 32-element unit.
template <GgmlType T>
__global__ void __launch_bounds__(kThreads)
    embedding_kernel(const uint8_t* __restrict__ table, size_t stride, int64_t rows, int64_t units,
                     const int32_t* __restrict__ ids, float* __restrict__ out) {
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (u >= units) return;
  const int32_t id = ids[blockIdx.y];
  float w[kUnit];
  if (id >= 0 && id < rows) {
    Unit<T>::load(table + id * stride, u, w);
  } else {
#pragma unroll
    for (int i = 0; i < kUnit; ++i) w[i] = __int_as_float(0x7fc00000);
  }
  float4* dst = reinterpret_cast<float4*>(out + static_cast<int64_t>(blockIdx.y) * units * kUnit) + 8 * u;
#pragma unroll
  for (int k = 0; k < 8; ++k) dst[k] = make_float4(w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]);
}

struct EmbeddingArgs {
  dim3 grid;
  cudaStream_t stream;
  const DeviceMatrix* table;
  const int32_t* ids;
  float* out;
};

template <GgmlType T>
struct EmbeddingLaunch {
  static void run(const EmbeddingArgs& a) {
    embedding_kernel<T><<<a.grid, kThreads, 0, a.stream>>>(static_cast<const uint8_t*>(a.table->data),
                                                           a.table->row_stride, a.table->rows, a.table->cols / kUnit,
                                                           a.ids, a.out);
  }
};

}  // namespace

Status embedding_lookup(const DeviceMatrix& table, const int32_t* ids, int n_tokens, float* out, cudaStream_t stream) {
  HEARTH_CUDA_TRY(validate_matrix(table));
  HEARTH_CUDA_REQUIRE(n_tokens >= 1 && n_tokens <= 65535);
  HEARTH_CUDA_REQUIRE(ids != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(out) % 16 == 0);
  const int64_t units = table.cols / kUnit;
  const EmbeddingArgs args{
      dim3(static_cast<unsigned>((units + kThreads - 1) / kThreads), static_cast<unsigned>(n_tokens)), stream, &table,
      ids, out};
  dispatch_type<EmbeddingLaunch>(table.type, args);
  return check_launch("embedding_kernel");
}

}  // namespace hearth::kernels::cuda
