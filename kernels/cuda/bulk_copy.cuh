// Bulk copies into shared memory completing on mbarriers (sm_90+): one
// thread arms a barrier with the bytes a phase expects, any threads issue
// cp.async.bulk copies that count against it, and waiting on the phase's
// parity makes the bytes visible. Used by the staged GEMV
// (gemv_q8_staged.cu) and the f16 mmq (mmq_f16.cu). Below sm_90 the
// functions trap: their kernels are never launched there. Include only from
// .cu files.
#pragma once

#include <cstdint>

#include "kernels/cuda/mma.cuh"

namespace hearth::kernels::cuda {

// An mbarrier at shared address bar expecting one arrival per phase.
__device__ __forceinline__ void mbar_init(uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
#else
  static_cast<void>(bar);
  __trap();
#endif
}

// Makes the initialized barriers visible to the async proxy (after the
// inits, before any copy names them).
__device__ __forceinline__ void mbar_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// The phase's one arrival, expecting `bytes` more of copies to complete.
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#else
  static_cast<void>(bar), static_cast<void>(bytes);
  __trap();
#endif
}

__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t done = 0;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
#else
  static_cast<void>(bar), static_cast<void>(parity);
  __trap();
  return true;
#endif
}

// Until the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// bytes (a multiple of 16; src and dst 16-byte aligned) from global src to
// shared address dst, counted on bar.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#else
  static_cast<void>(dst), static_cast<void>(src), static_cast<void>(bytes), static_cast<void>(bar);
  __trap();
#endif
}

// Orders this thread's earlier generic accesses to shared memory before its
// later bulk copies (a buffer read, then refilled).
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

}  // namespace hearth::kernels::cuda
