// Shared helpers of the CUDA kernel tests: the device check that skips a test
// on machines without a GPU, device buffers poisoned before use, random data.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda::test {

// True when a CUDA device can run our kernels; else *why says what is missing.
inline bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    *why = "cudaGetDeviceCount found none";
    return false;
  }
  return true;
}

#define HEARTH_REQUIRE_CUDA_DEVICE()                                                          \
  do {                                                                                        \
    std::string why_;                                                                         \
    if (!::hearth::kernels::cuda::test::cuda_device_available(&why_))                         \
      GTEST_SKIP() << "no CUDA device: " << why_ << " (GPU tests run on the device machine)"; \
  } while (0)

inline std::string describe(const Status& s) {
  return std::string(s.what) + ": " + cudaGetErrorString(s.code);
}

#define ASSERT_CUDA_OK(expr)                                               \
  do {                                                                     \
    const ::hearth::kernels::cuda::Status st_ = (expr);                    \
    ASSERT_TRUE(st_.ok()) << ::hearth::kernels::cuda::test::describe(st_); \
  } while (0)

#define ASSERT_RT_OK(call)                                                 \
  do {                                                                     \
    const cudaError_t e_ = (call);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_); \
  } while (0)

// A device array of T, filled with 0xff bytes on creation (NaN for f32 and
// f16): elements a kernel fails to write show up as NaN.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    if (cudaMalloc(&ptr_, std::max<size_t>(n, 1) * sizeof(T)) != cudaSuccess) {
      ptr_ = nullptr;
      ADD_FAILURE() << "cudaMalloc of " << n * sizeof(T) << " bytes failed";
    }
    if (ptr_ != nullptr) (void)cudaMemset(ptr_, 0xff, std::max<size_t>(n, 1) * sizeof(T));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { (void)cudaFree(ptr_); }

  T* get() const { return static_cast<T*>(ptr_); }
  size_t size() const { return n_; }
  bool ok() const { return ptr_ != nullptr; }
  void upload(const std::vector<T>& host) {
    (void)cudaMemcpy(ptr_, host.data(), std::min(host.size(), n_) * sizeof(T), cudaMemcpyHostToDevice);
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    const cudaError_t sync = cudaDeviceSynchronize();  // surfaces faults of the kernels before
    if (sync != cudaSuccess) ADD_FAILURE() << "kernel failed: " << cudaGetErrorString(sync);
    const cudaError_t copy = cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    if (copy != cudaSuccess) ADD_FAILURE() << "download failed: " << cudaGetErrorString(copy);
    return host;
  }

 private:
  void* ptr_ = nullptr;
  size_t n_;
};

// Gaussian values with a few 4x outliers, never all zero.
inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float sigma = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int64_t k = 0; k < n / 64 + 1; ++k) v[static_cast<size_t>(pick(rng))] *= 4.0f;
  return v;
}

// sum((a-b)^2) / sum(b^2).
inline double nmse(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0 ? num / den : num;
}

}  // namespace hearth::kernels::cuda::test
