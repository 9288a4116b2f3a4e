// AVX2 + FMA + F16C build of the SIMD dots (compiled with those flags only;
// includes nothing with inline code shared with other translation units).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot.h"

#define HEARTH_SIMD_VNNI 0

namespace hearth::kernels::avx2 {
#include "kernels/cpu/simd/common.inc"
#include "kernels/cpu/simd/kquants.inc"
#include "kernels/cpu/simd/legacy.inc"
}  // namespace hearth::kernels::avx2
