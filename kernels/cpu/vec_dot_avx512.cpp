// AVX-512 (F/BW/VL) + VNNI build of the SIMD dots: the same kernels as the
// AVX2 build on 256-bit vectors, with vpdpbusd replacing maddubs + madd in the
// byte dots (on Zen 4, 512-bit ops are split in two 256-bit halves anyway).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot.h"

#define HEARTH_SIMD_VNNI 1

namespace hearth::kernels::avx512 {
#include "kernels/cpu/simd/common.inc"
#include "kernels/cpu/simd/kquants.inc"
#include "kernels/cpu/simd/legacy.inc"
}  // namespace hearth::kernels::avx512
