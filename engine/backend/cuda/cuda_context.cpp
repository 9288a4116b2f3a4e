#include "engine/backend/cuda/cuda_context.h"

namespace hearth::cuda {
namespace {

Result<void> check(cudaError_t e, std::string_view call) {
  if (e == cudaSuccess) return {};
  static_cast<void>(cudaGetLastError());
  return make_error(e == cudaErrorMemoryAllocation ? ErrorCode::kOutOfMemory : ErrorCode::kInternal,
                    std::string(call) + " failed: " + cudaGetErrorString(e));
}

}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // no driver / no device: not an error here
    return 0;
  }
  return n;
}

Result<void> to_result(kernels::cuda::Status status, std::string_view context) {
  if (status.ok()) return {};
  static_cast<void>(cudaGetLastError());
  const ErrorCode code = status.code == cudaErrorMemoryAllocation ? ErrorCode::kOutOfMemory : ErrorCode::kInternal;
  return make_error(code, std::string(context) + ": " + status.what + " (" + cudaGetErrorString(status.code) + ")");
}

CudaContext::~CudaContext() {
  if (cublas_ != nullptr) static_cast<void>(cublasDestroy(cublas_));
  if (stream_ != nullptr) static_cast<void>(cudaStreamDestroy(stream_));
}

Result<std::unique_ptr<CudaContext>> CudaContext::create(int device) {
  const int n = device_count();
  if (device < 0 || device >= n) {
    return make_error(ErrorCode::kNotFound,
                      "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) + " found)");
  }
  std::unique_ptr<CudaContext> ctx(new CudaContext());
  ctx->device_ = device;
  HEARTH_TRY(check(cudaSetDevice(device), "cudaSetDevice"));
  cudaDeviceProp prop{};
  HEARTH_TRY(check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"));
  ctx->sm_count_ = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
  ctx->name_ = prop.name;
  HEARTH_TRY(check(cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  if (cublasCreate(&ctx->cublas_) != CUBLAS_STATUS_SUCCESS) {
    ctx->cublas_ = nullptr;
    return make_error(ErrorCode::kInternal, "cublasCreate failed on CUDA device " + std::to_string(device));
  }
  if (cublasSetStream(ctx->cublas_, ctx->stream_) != CUBLAS_STATUS_SUCCESS) {
    return make_error(ErrorCode::kInternal, "cublasSetStream failed");
  }
  return ctx;
}

Result<void> CudaContext::make_current() const {
  return check(cudaSetDevice(device_), "cudaSetDevice");
}

Result<DeviceMemoryInfo> CudaContext::memory_info() const {
  HEARTH_TRY(make_current());
  DeviceMemoryInfo info;
  HEARTH_TRY(check(cudaMemGetInfo(&info.free_bytes, &info.total_bytes), "cudaMemGetInfo"));
  return info;
}

Result<void> CudaContext::synchronize() const {
  return check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

}  // namespace hearth::cuda
