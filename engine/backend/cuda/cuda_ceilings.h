// The GPU's ceilings for the profiler's roofline (hearth/profile.h
// DeviceCeilings), measured on the context's stream with CUDA events: a
// device-to-device copy of 256 MiB (bytes read + written: the bandwidth
// anchor of docs/benchmarks.md) and a cuBLAS FP16 GEMM 4096^3 with FP32
// accumulation (tensor cores); best of 5 each. Buffers are freed at once; a
// device too full for them reports that ceiling as unknown (0).
#pragma once

#include "engine/backend/cuda/cuda_context.h"
#include "hearth/profile.h"

namespace hearth::cuda {

DeviceCeilings measure_cuda_ceilings(const CudaContext& ctx);

}  // namespace hearth::cuda
