// Quantized weight matrix times f32 activations, for decode (one token: a
// matrix-vector product) and prefill (many tokens). Activations are converted
// once per call to the weight type's vec_dot_type (8-bit blocks for the
// quantized types); rows are split over the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/dot_panel.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/outlier_refine.h"
#include "kernels/cpu/thread_pool.h"

namespace hearth::kernels {

// A row-major weight matrix [rows][cols]: each row holds cols / block_elems
// blocks of `type`, rows start row_stride bytes apart (GGUF: ne[0] = cols).
struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;       // multiple of the type's block_elems
  size_t row_stride = 0;  // bytes; >= row_bytes(type, cols)
};

// Reused between calls so a decode step allocates nothing; also carries the
// activation precision.
struct MatmulScratch {
  std::vector<uint8_t> activations;  // [n_tokens][row_bytes(vec_dot_type, cols)]
  OutlierBlocks outliers;            // refined blocks of those rows
  // Activation panels (dot_panel.h) for the 32-element weight types' lane
  // kernels: one per chunk of 8 tokens, or one of the single token.
  std::vector<float> panel_floats;   // per chunk: d, s, lo_d, lo_s
  std::vector<int32_t> panel_sums;   // per chunk: sum, lo_sum
  std::vector<uint8_t> panel_codes;  // per chunk of 8: q, lo_q
  std::vector<DotPanel> panels;
  // Outlier refinement of the 8-bit activation blocks (outlier_refine.h):
  // blocks whose scale exceeds this many times their row's median block scale
  // get a second, finer block. 0: plain 8-bit blocks, llama.cpp's arithmetic.
  float outlier_ratio = kDefaultOutlierRatio;
};

// y[t][r] = sum_c W[r][c] * x[t][c].
// x: [n_tokens][cols] f32; y: [n_tokens][rows] f32 (no aliasing with x).
// Preconditions: w.type has a vec_dot (quant_ops(w.type)->vec_dot != nullptr),
// w.cols is a multiple of the activation type's block_elems too (256 for the
// K-quants). pool may be null (single-threaded).
void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool,
            MatmulScratch& scratch);

// Several matrices applied to the same activations (q/k/v, gate/up): x is
// quantized once and the rows of all of them are split over the pool in one
// parallel_for (one barrier instead of one per matrix). ys[i]: [n_tokens]
// [ws[i].rows], bit-identical to matmul(ws[i], x, ...). Preconditions: as
// matmul's for each matrix; all have the same cols and the same
// vec_dot_type (quant_ops(type)->vec_dot_type); at most kMaxMatmulMany.
inline constexpr size_t kMaxMatmulMany = 4;
void matmul_many(std::span<const WeightMatrix> ws, const float* x, int64_t n_tokens, std::span<float* const> ys,
                 ThreadPool* pool, MatmulScratch& scratch);

// Reference: each weight row dequantized to f32 and dotted in double with the
// unquantized activations. Slow; for tests and benchmarks only.
void matmul_reference(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y);

}  // namespace hearth::kernels
