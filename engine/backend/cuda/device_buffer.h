// Device memory owned by one object (RAII): freed when the buffer goes, so an
// error half-way through a load leaves nothing behind.
#pragma once

#include <cstddef>
#include <string_view>

#include "hearth/result.h"

namespace hearth::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // cudaMalloc of `bytes` (256-byte aligned) on the current device. kOutOfMemory
  // names `what` and the bytes; other CUDA failures are kInternal.
  static Result<DeviceBuffer> allocate(std::size_t bytes, std::string_view what);
  // Bytes every DeviceBuffer of this process holds now (every device
  // allocation of the backend goes through here): what a dropped model must
  // give back (tests/models/cuda/switching_cuda_test.cpp).
  static std::size_t live_bytes();

  // Synchronous copy of `bytes` host bytes to the start of the buffer.
  Result<void> upload(const void* host, std::size_t bytes, std::string_view what);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void release();

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace hearth::cuda
