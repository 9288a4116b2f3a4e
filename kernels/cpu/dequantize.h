// Rows of any supported type -> f32. Scalar: these run once per token for an
// embedding lookup and in tests, never in the matmul hot loop.
// Every function: n elements, a multiple of the type's block_elems; src holds
// row_bytes(type, n) bytes; dst holds n floats. The arithmetic (order of the
// products and sums) matches ggml's reference, so results are bit-exact with it.
#pragma once

#include <cstdint>

namespace hearth::kernels {

void dequantize_row_f32(const void* src, float* dst, int64_t n);
void dequantize_row_f16(const void* src, float* dst, int64_t n);
void dequantize_row_bf16(const void* src, float* dst, int64_t n);
void dequantize_row_q4_0(const void* src, float* dst, int64_t n);
void dequantize_row_q4_1(const void* src, float* dst, int64_t n);
void dequantize_row_q5_0(const void* src, float* dst, int64_t n);
void dequantize_row_q5_1(const void* src, float* dst, int64_t n);
void dequantize_row_q8_0(const void* src, float* dst, int64_t n);
void dequantize_row_q8_1(const void* src, float* dst, int64_t n);
void dequantize_row_q4_k(const void* src, float* dst, int64_t n);
void dequantize_row_q5_k(const void* src, float* dst, int64_t n);
void dequantize_row_q6_k(const void* src, float* dst, int64_t n);
void dequantize_row_q8_k(const void* src, float* dst, int64_t n);

// The 6-bit scale and min of sub-block j (< 8) of a Q4_K / Q5_K block.
void k_scale_min(const uint8_t* scales, int j, uint8_t* sc, uint8_t* m);

}  // namespace hearth::kernels
