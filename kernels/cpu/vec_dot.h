// Dot products of one weight row with one activation row, per instruction set.
// w: a row of the weight type, a: a row of its activation type (f32 for the
// float weight types); n elements, a multiple of the weight type's block_elems.
// Result in f32. The quantized dots are integer dots per block, scaled in f32.
// Each *_rows function is the multi-row form (VecDotRowsFn in quant_ops.h):
// its out[j] is bit-identical to the one-row dot of the same namespace.
// *_rows_refined (the 32-element block types) also adds, for row j, the dots
// of the weight blocks with its residual blocks (VecDotRowsRefinedFn).
// *_panel (the 32-element block types, SIMD levels): the same dots from a
// prepared DotPanel (VecDotPanelFn); the SIMD levels' vec_dot, *_rows and
// *_rows_refined of those types build panels themselves and give the same bits.
//
// Declarations only: the SIMD translation units include this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dot_panel.h"

namespace hearth::kernels {

#define HEARTH_VEC_DOT_DECLS                                                                                    \
  float vec_dot_f32(int64_t n, const void* w, const void* a);                                                   \
  void vec_dot_f32_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);         \
  float vec_dot_f16(int64_t n, const void* w, const void* a);                                                   \
  void vec_dot_f16_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);         \
  float vec_dot_bf16(int64_t n, const void* w, const void* a);                                                  \
  void vec_dot_bf16_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);        \
  float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q4_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q4_1_q8_1_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q5_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q5_1_q8_1_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q8_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q4_k_q8_k(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q4_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q5_k_q8_k(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q5_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  float vec_dot_q6_k_q8_k(int64_t n, const void* w, const void* a);                                             \
  void vec_dot_q6_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);   \
  void vec_dot_q4_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, \
                                      size_t lo_stride, const uint8_t* mask, int n_a, float* out);              \
  void vec_dot_q4_1_q8_1_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, \
                                      size_t lo_stride, const uint8_t* mask, int n_a, float* out);              \
  void vec_dot_q5_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, \
                                      size_t lo_stride, const uint8_t* mask, int n_a, float* out);              \
  void vec_dot_q5_1_q8_1_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, \
                                      size_t lo_stride, const uint8_t* mask, int n_a, float* out);              \
  void vec_dot_q8_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, \
                                      size_t lo_stride, const uint8_t* mask, int n_a, float* out);              \
  void vec_dot_q4_0_q8_0_panel(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);               \
  void vec_dot_q4_1_q8_1_panel(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);               \
  void vec_dot_q5_0_q8_0_panel(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);               \
  void vec_dot_q5_1_q8_1_panel(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);               \
  void vec_dot_q8_0_q8_0_panel(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);               \
  void quantize_row_q8_0(const float* src, void* dst, int64_t n);                                               \
  void quantize_row_q8_1(const float* src, void* dst, int64_t n);                                               \
  void quantize_row_q8_k(const float* src, void* dst, int64_t n);

// Portable reference versions (the activation quantizers live in quantize.h).
namespace scalar {
float vec_dot_f32(int64_t n, const void* w, const void* a);
void vec_dot_f32_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_f16(int64_t n, const void* w, const void* a);
void vec_dot_f16_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_bf16(int64_t n, const void* w, const void* a);
void vec_dot_bf16_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* a);
void vec_dot_q4_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* a);
void vec_dot_q4_1_q8_1_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* a);
void vec_dot_q5_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* a);
void vec_dot_q5_1_q8_1_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* a);
void vec_dot_q8_0_q8_0_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q4_k_q8_k(int64_t n, const void* w, const void* a);
void vec_dot_q4_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q5_k_q8_k(int64_t n, const void* w, const void* a);
void vec_dot_q5_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
float vec_dot_q6_k_q8_k(int64_t n, const void* w, const void* a);
void vec_dot_q6_k_q8_k_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);
void vec_dot_q4_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                    size_t lo_stride, const uint8_t* mask, int n_a, float* out);
void vec_dot_q4_1_q8_1_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                    size_t lo_stride, const uint8_t* mask, int n_a, float* out);
void vec_dot_q5_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                    size_t lo_stride, const uint8_t* mask, int n_a, float* out);
void vec_dot_q5_1_q8_1_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                    size_t lo_stride, const uint8_t* mask, int n_a, float* out);
void vec_dot_q8_0_q8_0_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                    size_t lo_stride, const uint8_t* mask, int n_a, float* out);
}  // namespace scalar

// AVX2 + FMA + F16C (256-bit, maddubs for the integer dots).
namespace avx2 {
HEARTH_VEC_DOT_DECLS
}  // namespace avx2

// AVX-512 F/BW/VL + VNNI (vpdpbusd for the integer dots).
namespace avx512 {
HEARTH_VEC_DOT_DECLS
}  // namespace avx512

#undef HEARTH_VEC_DOT_DECLS

}  // namespace hearth::kernels
