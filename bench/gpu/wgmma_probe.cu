// A probe for the next mmq design (issue 20, perf-notes v19): Hopper's
// warpgroup mma (wgmma) with A (dequantized weights) from registers and B
// (the tokens' f16 activations) from shared memory through a matrix
// descriptor, no swizzle, K-major. Not part of the product: it settles two
// questions on the device before the kernel is written.
//  1. Layout: which of the descriptor's two byte offsets (the "leading" and
//     the "stride" one) steps between 8x8 core matrices along K and which
//     along N, for two arrangements of the core matrices. Each candidate's
//     64x64x16 product is checked against a float reference.
//  2. Rate: m64n64k16 from registers, back to back (one warpgroup per
//     block, several blocks per SM), in TFLOP/s, beside mma.sync m16n8k16
//     (the f16 mmq kernel's instruction) issued the same way.
// Build: nvcc -O2 -std=c++17 -arch=sm_90a -o wgmma_probe wgmma_probe.cu
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__device__ __forceinline__ uint64_t desc_of(const void* smem, uint32_t lbo, uint32_t sbo) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3ffffu) >> 4);
  d |= static_cast<uint64_t>((lbo & 0x3ffffu) >> 4) << 16;
  d |= static_cast<uint64_t>((sbo & 0x3ffffu) >> 4) << 32;
  return d;  // base offset 0, no swizzle
}

// d (32 f32 per thread) += A (4 x 32-bit f16 pairs per thread) x B (descriptor).
__device__ __forceinline__ void wgmma_64x64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %36, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %37, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc));
#else
  (void)d, (void)a, (void)desc, (void)accumulate;
  __trap();
#endif
}

__device__ __forceinline__ void wg_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wg_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ uint32_t pack(__half lo, __half hi) {
  return static_cast<uint32_t>(__half_as_ushort(lo)) | (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
}

// Byte offset of B element (n, k) (n < 64, k < 16) with core matrices
// (8 n x 8 k, 16-byte rows, 128 contiguous bytes) kstep apart along K and
// nstep apart along N.
__host__ __device__ uint32_t b_offset(int n, int k, uint32_t kstep, uint32_t nstep) {
  return static_cast<uint32_t>(k / 8) * kstep + static_cast<uint32_t>(n / 8) * nstep + (n % 8) * 16 + (k % 8) * 2;
}

// One warpgroup: D[64 m][64 n] = A[64][16] B[64 n][16 k]^T.
__global__ void layout_kernel(const __half* a, const __half* b, float* out, uint32_t kstep, uint32_t nstep,
                              uint32_t lbo, uint32_t sbo) {
  __shared__ __align__(128) unsigned char sb[4096];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  for (int i = tid; i < 64 * 16; i += 128) {
    const int n = i / 16, k = i % 16;
    *reinterpret_cast<__half*>(sb + b_offset(n, k, kstep, nstep)) = b[i];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int r = 16 * warp + g;
  const uint32_t af[4] = {pack(a[r * 16 + 2 * t], a[r * 16 + 2 * t + 1]),
                          pack(a[(r + 8) * 16 + 2 * t], a[(r + 8) * 16 + 2 * t + 1]),
                          pack(a[r * 16 + 2 * t + 8], a[r * 16 + 2 * t + 9]),
                          pack(a[(r + 8) * 16 + 2 * t + 8], a[(r + 8) * 16 + 2 * t + 9])};
  float d[32];
  for (float& v : d) v = 0.0f;
  wg_fence();
  wgmma_64x64(d, af, desc_of(sb, lbo, sbo), 0);
  wg_commit();
  wg_wait<0>();
  for (int j = 0; j < 8; ++j) {
    out[r * 64 + 8 * j + 2 * t] = d[4 * j];
    out[r * 64 + 8 * j + 2 * t + 1] = d[4 * j + 1];
    out[(r + 8) * 64 + 8 * j + 2 * t] = d[4 * j + 2];
    out[(r + 8) * 64 + 8 * j + 2 * t + 1] = d[4 * j + 3];
  }
}

// Rate: each warpgroup issues `iters` x 4 wgmma (k 64 per group of 4) over a
// 64 x 64 B tile in shared memory, A in registers, up to 2 groups in flight.
__global__ void __launch_bounds__(128) rate_wgmma(float* sink, int iters, uint32_t lbo, uint32_t sbo) {
  __shared__ __align__(128) unsigned char sb[64 * 64 * 2];
  for (int i = threadIdx.x; i < 64 * 64; i += 128) reinterpret_cast<__half*>(sb)[i] = __float2half(0.001f * (i % 7));
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
  float d[32];
  for (float& v : d) v = 0.0f;
  for (int it = 0; it < iters; ++it) {
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      wgmma_64x64(d, a, desc_of(sb + kk * 2048, lbo, sbo), 1);
    }
    wg_commit();
    wg_wait<1>();  // A stays as it is: wgmma reads it asynchronously
  }
  wg_wait<0>();
  float s = 0.0f;
  for (float v : d) s += v;
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

__global__ void __launch_bounds__(128) rate_mma_sync(float* sink, int iters) {
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
  uint32_t b0 = threadIdx.x * 11u, b1 = threadIdx.x * 13u;
  float d[2][8][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[i][j][0]), "+f"(d[i][j][1]), "+f"(d[i][j][2]), "+f"(d[i][j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
      }
    }
    b0 ^= 0x00010001u;
  }
  float s = 0.0f;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j)
      for (int e = 0; e < 4; ++e) s += d[i][j][e];
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

}  // namespace

int main() {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<__half> ha(64 * 16), hb(64 * 16);
  std::vector<float> fa(64 * 16), fb(64 * 16);
  for (int i = 0; i < 64 * 16; ++i) {
    ha[i] = __float2half(u(rng)), fa[i] = __half2float(ha[i]);
    hb[i] = __float2half(u(rng)), fb[i] = __half2float(hb[i]);
  }
  std::vector<double> ref(64 * 64, 0.0);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n)
      for (int k = 0; k < 16; ++k) ref[m * 64 + n] += static_cast<double>(fa[m * 16 + k]) * fb[n * 16 + k];
  __half *da = nullptr, *db = nullptr;
  float* dout = nullptr;
  CHECK(cudaMalloc(&da, 64 * 16 * 2));
  CHECK(cudaMalloc(&db, 64 * 16 * 2));
  CHECK(cudaMalloc(&dout, 64 * 64 * 4));
  CHECK(cudaMemcpy(da, ha.data(), 64 * 16 * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), 64 * 16 * 2, cudaMemcpyHostToDevice));
  struct Case {
    const char* name;
    uint32_t kstep, nstep, lbo, sbo;
  };
  // Arrangement 1: the two K core matrices of an n group adjacent (kstep 128, nstep 256).
  // Arrangement 2: all n groups of one K half adjacent (nstep 128, kstep 1024).
  const Case cases[] = {
      {"kstep 128 nstep 256, lbo=kstep sbo=nstep", 128, 256, 128, 256},
      {"kstep 128 nstep 256, lbo=nstep sbo=kstep", 128, 256, 256, 128},
      {"kstep 1024 nstep 128, lbo=kstep sbo=nstep", 1024, 128, 1024, 128},
  };
  std::vector<float> out(64 * 64);
  uint32_t good_lbo = 0, good_sbo = 0;
  for (const Case& c : cases) {
    CHECK(cudaMemset(dout, 0xff, 64 * 64 * 4));
    layout_kernel<<<1, 128>>>(da, db, dout, c.kstep, c.nstep, c.lbo, c.sbo);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out.data(), dout, 64 * 64 * 4, cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (int i = 0; i < 64 * 64; ++i) worst = std::fmax(worst, std::fabs(out[i] - ref[i]));
    const bool ok = worst < 1e-3;
    std::printf("layout %-44s max |err| %.3g  %s\n", c.name, worst, ok ? "MATCH" : "no");
    if (ok && c.kstep == 128 && good_lbo == 0) good_lbo = c.lbo, good_sbo = c.sbo;
  }
  // Rate: the rate kernel's B tile is 4 k16 slices of 2,048 bytes (arrangement 1 within each).
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, 4096));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const int iters = 4096;
  for (int per_sm : {1, 2, 4, 8}) {
    const int blocks = sms * per_sm;
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(cudaEventRecord(e0));
      rate_wgmma<<<blocks, 128>>>(sink, iters, good_lbo ? good_lbo : 128, good_sbo ? good_sbo : 256);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
    }
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double flop = 2.0 * 64 * 64 * 16 * 4.0 * iters * blocks;
    std::printf("wgmma m64n64k16 (A regs), %d warpgroups/SM: %.1f TFLOP/s\n", per_sm, flop / (ms * 1e9));
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(cudaEventRecord(e0));
      rate_mma_sync<<<blocks, 128>>>(sink, iters);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
    }
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double flop2 = 2.0 * 16 * 8 * 16 * 16.0 * 4 * iters * blocks;
    std::printf("mma.sync m16n8k16, %d x 4 warps/SM:          %.1f TFLOP/s\n", per_sm, flop2 / (ms * 1e9));
  }
  CHECK(cudaGetLastError());
  return 0;
}
