#include "engine/backend/cuda/device_buffer.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <string>
#include <utility>

namespace hearth::cuda {
namespace {

std::atomic<std::size_t> g_live_bytes{0};

}  // namespace

std::size_t DeviceBuffer::live_bytes() {
  return g_live_bytes.load(std::memory_order_relaxed);
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() {
  // A failure here (a sticky error from an earlier fault) has no one to report
  // to; the memory is gone with the context then.
  if (ptr_ != nullptr) {
    static_cast<void>(cudaFree(ptr_));
    g_live_bytes.fetch_sub(bytes_, std::memory_order_relaxed);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

Result<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes, std::string_view what) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  const cudaError_t e = cudaMalloc(&buffer.ptr_, bytes);
  if (e != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // clear the error so later calls are not blamed
    buffer.ptr_ = nullptr;
    const std::string msg = "cannot allocate " + std::to_string(bytes) + " bytes of GPU memory for " +
                            std::string(what) + ": " + cudaGetErrorString(e);
    return make_error(e == cudaErrorMemoryAllocation ? ErrorCode::kOutOfMemory : ErrorCode::kInternal, msg);
  }
  buffer.bytes_ = bytes;
  g_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return buffer;
}

Result<void> DeviceBuffer::upload(const void* host, std::size_t bytes, std::string_view what) {
  if (bytes > bytes_) {
    return make_error(ErrorCode::kInternal, "upload of " + std::string(what) + " is larger than its device buffer");
  }
  const cudaError_t e = cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    return make_error(ErrorCode::kInternal,
                      "copying " + std::string(what) + " to the GPU failed: " + cudaGetErrorString(e));
  }
  return {};
}

}  // namespace hearth::cuda
