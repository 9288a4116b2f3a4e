// Error values of the CUDA launchers. Every host launcher checks its
// preconditions and its launch and returns a Status; nothing throws or exits.
// `what` is static text (a string literal) naming the failed precondition or
// call, so a Status is cheap to copy and never dangles.
#pragma once

#include <cuda_runtime_api.h>

namespace hearth::kernels::cuda {

struct [[nodiscard]] Status {
  cudaError_t code = cudaSuccess;
  const char* what = "";  // static text; "" on success

  bool ok() const { return code == cudaSuccess; }
};

inline Status invalid_argument(const char* what) {
  return Status{cudaErrorInvalidValue, what};
}

// The status of the last launch on this thread (cudaGetLastError).
inline Status check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  return Status{e, e == cudaSuccess ? "" : kernel};
}

}  // namespace hearth::kernels::cuda

// Return an invalid-argument Status naming the condition when it is false.
#define HEARTH_CUDA_REQUIRE(cond)                                                     \
  do {                                                                                \
    if (!(cond)) return ::hearth::kernels::cuda::invalid_argument("requires " #cond); \
  } while (0)

// Return the Status of a CUDA runtime call when it failed.
#define HEARTH_CUDA_CHECK(call)                                                                           \
  do {                                                                                                    \
    const cudaError_t hearth_cuda_err_ = (call);                                                          \
    if (hearth_cuda_err_ != cudaSuccess) return ::hearth::kernels::cuda::Status{hearth_cuda_err_, #call}; \
  } while (0)

// Propagate a failed Status.
#define HEARTH_CUDA_TRY(expr)                                       \
  do {                                                              \
    const ::hearth::kernels::cuda::Status hearth_cuda_st_ = (expr); \
    if (!hearth_cuda_st_.ok()) return hearth_cuda_st_;              \
  } while (0)
