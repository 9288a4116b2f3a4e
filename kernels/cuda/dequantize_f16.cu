#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/dequantize_f16.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per 32-element unit, grid-stride over all rows * units; each
// thread writes its 64 output bytes as four 16-byte stores.
template <GgmlType T>
__global__ void __launch_bounds__(kThreads)
    dequant_f16_kernel(const uint8_t* __restrict__ src, size_t stride, int64_t rows, int64_t units,
                       uint16_t* __restrict__ out) {
  const int64_t total = rows * units;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t r = i / units, u = i % units;
    float w[kUnit];
    Unit<T>::load(src + r * stride, u, w);
    uint4* dst = reinterpret_cast<uint4*>(out + i * kUnit);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      uint32_t words[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        words[j] = static_cast<uint32_t>(float_to_half_bits(w[8 * k + 2 * j])) |
                   (static_cast<uint32_t>(float_to_half_bits(w[8 * k + 2 * j + 1])) << 16);
      }
      dst[k] = make_uint4(words[0], words[1], words[2], words[3]);
    }
  }
}

struct DequantArgs {
  unsigned grid;
  cudaStream_t stream;
  const DeviceMatrix* m;
  uint16_t* out;
};

template <GgmlType T>
struct DequantLaunch {
  static void run(const DequantArgs& a) {
    dequant_f16_kernel<T><<<a.grid, kThreads, 0, a.stream>>>(static_cast<const uint8_t*>(a.m->data), a.m->row_stride,
                                                             a.m->rows, a.m->cols / kUnit, a.out);
  }
};

}  // namespace

Status dequantize_to_f16(const DeviceMatrix& m, uint16_t* out, cudaStream_t stream) {
  HEARTH_CUDA_TRY(validate_matrix(m));
  HEARTH_CUDA_REQUIRE(out != nullptr && reinterpret_cast<uintptr_t>(out) % 16 == 0);
  const int64_t total = m.rows * (m.cols / kUnit);
  // Enough blocks to fill the device several times over; the loop covers the rest.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65536);
  dispatch_type<DequantLaunch>(m.type, DequantArgs{static_cast<unsigned>(blocks), stream, &m, out});
  return check_launch("dequant_f16_kernel");
}

}  // namespace hearth::kernels::cuda
