// The device state a CUDA model runs with: the chosen GPU, one stream, a
// cuBLAS handle bound to it, and the device's properties. Kernel launchers
// return kernels::cuda::Status; to_result turns it into the engine's errors.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "hearth/result.h"
#include "kernels/cuda/status.h"

namespace hearth::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no GPU (never an error).
int device_count();

struct DeviceMemoryInfo {
  std::size_t free_bytes = 0;   // cudaMemGetInfo: free on the whole device (all processes)
  std::size_t total_bytes = 0;  // the device's memory
};

// kOutOfMemory for an allocation failure, kInternal for any other CUDA error;
// the message names `context` and the failed call.
Result<void> to_result(kernels::cuda::Status status, std::string_view context);

class CudaContext {
 public:
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  // Selects `device` (0-based) and creates the stream and cuBLAS handle.
  // kNotFound when no such device exists.
  static Result<std::unique_ptr<CudaContext>> create(int device);

  // Makes this context's device current on the calling thread (the runtime's
  // current device is per thread; the engine may call from any thread).
  Result<void> make_current() const;

  Result<DeviceMemoryInfo> memory_info() const;
  Result<void> synchronize() const;

  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  const std::string& name() const { return name_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }

 private:
  CudaContext() = default;

  int device_ = 0;
  int sm_count_ = 1;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace hearth::cuda
