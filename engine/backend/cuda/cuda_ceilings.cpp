#include "engine/backend/cuda/cuda_ceilings.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/backend/cuda/device_buffer.h"
#include "engine/core/log.h"

namespace hearth::cuda {
namespace {

constexpr int kPasses = 5;

// Best time in ms of `kPasses` runs of `work` on the stream, timed with events; 0 on a CUDA failure.
float best_ms(cudaStream_t stream, const std::function<bool()>& work) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    if (start != nullptr) cudaEventDestroy(start);
    return 0;
  }
  float best = 0;
  bool ok = work();  // warm-up
  for (int pass = 0; ok && pass < kPasses; ++pass) {
    ok = cudaEventRecord(start, stream) == cudaSuccess && work() && cudaEventRecord(stop, stream) == cudaSuccess &&
         cudaEventSynchronize(stop) == cudaSuccess;
    float ms = 0;
    if (ok && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms > 0)
      best = best == 0 ? ms : std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ok ? best : 0;
}

double copy_bandwidth(const CudaContext& ctx) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  auto src = DeviceBuffer::allocate(kBytes, "ceiling probe (copy source)");
  auto dst = DeviceBuffer::allocate(kBytes, "ceiling probe (copy destination)");
  if (!src || !dst) return 0;
  if (cudaMemsetAsync(src->get(), 1, kBytes, ctx.stream()) != cudaSuccess) return 0;
  const float ms = best_ms(ctx.stream(), [&] {
    return cudaMemcpyAsync(dst->get(), src->get(), kBytes, cudaMemcpyDeviceToDevice, ctx.stream()) == cudaSuccess;
  });
  return ms > 0 ? 2.0 * static_cast<double>(kBytes) / (ms * 1e-3) : 0.0;
}

double gemm_flops(const CudaContext& ctx) {
  constexpr int kN = 4096;
  constexpr std::size_t kBytes = std::size_t{kN} * kN * sizeof(std::uint16_t) /* f16 */;
  auto a = DeviceBuffer::allocate(kBytes, "ceiling probe (A)");
  auto b = DeviceBuffer::allocate(kBytes, "ceiling probe (B)");
  auto c = DeviceBuffer::allocate(kBytes, "ceiling probe (C)");
  if (!a || !b || !c) return 0;
  // 0x3C00 is 1.0 in f16 and 0x2000 is 2^-7: finite inputs, any values time alike.
  if (cudaMemsetAsync(a->get(), 0x20, kBytes, ctx.stream()) != cudaSuccess ||
      cudaMemsetAsync(b->get(), 0x20, kBytes, ctx.stream()) != cudaSuccess) {
    return 0;
  }
  const float alpha = 1.0f, beta = 0.0f;
  const float ms = best_ms(ctx.stream(), [&] {
    return cublasGemmEx(ctx.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, a->get(), CUDA_R_16F, kN, b->get(),
                        CUDA_R_16F, kN, &beta, c->get(), CUDA_R_16F, kN, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  });
  return ms > 0 ? 2.0 * kN * static_cast<double>(kN) * kN / (ms * 1e-3) : 0.0;
}

}  // namespace

DeviceCeilings measure_cuda_ceilings(const CudaContext& ctx) {
  DeviceCeilings out;
  if (!ctx.make_current()) return out;
  out.bytes_per_s = copy_bandwidth(ctx);
  out.flops_per_s = gemm_flops(ctx);
  if (cudaStreamSynchronize(ctx.stream()) != cudaSuccess) {
    log::get("cuda")->warn("ceiling probe: {}", cudaGetErrorString(cudaGetLastError()));
  }
  static_cast<void>(cudaGetLastError());  // a failed probe must not be blamed on the next kernel
  out.source = "measured on " + ctx.name() +
               ": device-to-device copy of 256 MiB (read + written, best of 5), cuBLAS FP16 GEMM 4096^3 (best of 5)";
  return out;
}

}  // namespace hearth::cuda
