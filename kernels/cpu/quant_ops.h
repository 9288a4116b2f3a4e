// One dispatch table per element type: how to dequantize, quantize and dot a
// row of it. Looked up once per matmul (never per element); the entries are
// the widest SIMD build the CPU supports, chosen at first use.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dot_panel.h"
#include "kernels/cpu/ggml_type.h"

namespace hearth::kernels {

// n elements, a multiple of the type's block_elems, in every function below.
using DequantRowFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
// w: a row of the weight type; a: a row of vec_dot_type.
using VecDotFn = float (*)(int64_t n, const void* w, const void* a);
// One weight row against n_a activation rows (1 <= n_a <= kMaxDotRows), the
// weight blocks unpacked once for all of them: out[j] = dot of w with the row
// at a + j * a_stride (bytes). out[j] is bit-identical to vec_dot(n, w, row j)
// of the same level, whatever n_a: batching sequences never changes a result.
using VecDotRowsFn = void (*)(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out);

// vec_dot_rows plus residual rows (outlier_refine.h): row j also adds the
// dot of weight block i with its residual block i wherever bit j of mask[i]
// is set (lo + j * lo_stride: full-length rows of the activation type, read
// only at those blocks; mask: one byte per block). Like vec_dot_rows, out[j]
// depends only on row j's own data and bits, never on n_a or the other rows.
using VecDotRowsRefinedFn = void (*)(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo,
                                     size_t lo_stride, const uint8_t* mask, int n_a, float* out);

// The lane kernels of the 32-element block types (simd/legacy.inc): the
// dots of w with the p.lanes == 8 panel's rows 0..n_a-1 (1 <= n_a <= 8), or
// with the p.lanes == 1 panel's one row (n_a = 1); refined where p.lo is
// set. out[j] is bit-identical to vec_dot_rows(_refined) of the same level.
using VecDotPanelFn = void (*)(int64_t n, const void* w, const DotPanel& p, int n_a, float* out);

// Most activation rows per vec_dot_rows call (the AVX2 build runs them as two
// passes of 4: its 16 vector registers hold the accumulators of 4 rows).
constexpr int kMaxDotRows = 8;

struct QuantOps {
  GgmlType type;
  const char* name;
  int64_t block_elems;  // elements per block
  size_t block_bytes;   // bytes per block
  DequantRowFn dequant_row;
  QuantizeRowFn quantize_row;  // f32 -> this type (round to nearest; SIMD for Q8 activations)
  GgmlType vec_dot_type;       // what activations are converted to for vec_dot (F32: used as is)
  VecDotFn vec_dot;            // null for the activation-only types (Q8_1, Q8_K)
  VecDotRowsFn vec_dot_rows;   // null where vec_dot is
  // The 32-element block types only (null for the float and K types: the
  // matmul adds their residual dots per block).
  VecDotRowsRefinedFn vec_dot_rows_refined;
  // The 32-element block types at the SIMD levels only (null elsewhere).
  VecDotPanelFn vec_dot_panel;
};

// The table for `type` at this CPU's level; nullptr for an unsupported type.
const QuantOps* quant_ops(GgmlType type);

// The table at a given level (tests and benchmarks compare levels).
// Precondition: level <= cpu_level() (the CPU can run it).
const QuantOps* quant_ops(GgmlType type, CpuLevel level);

}  // namespace hearth::kernels
