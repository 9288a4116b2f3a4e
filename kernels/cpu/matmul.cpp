#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cassert>

#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels {
namespace {

// Tile sizes: a tile of kRowTile weight rows is read from memory once and
// reused from L1/L2 across kTokenTile tokens, whose quantized activations
// (kTokenTile x ~1.1 bytes x cols) stay in L2.
constexpr int64_t kRowTile = 16;
constexpr int64_t kTokenTile = 32;

struct MatmulJob {
  VecDotFn dot;
  const uint8_t* w;
  size_t w_stride;  // bytes between weight rows
  const uint8_t* a;
  size_t a_stride;  // bytes between activation rows
  int64_t cols;
  int64_t rows;
  int64_t n_tokens;
  float* y;
};

void run_rows(const MatmulJob& j, int64_t r0, int64_t r1) {
  for (int64_t t0 = 0; t0 < j.n_tokens; t0 += kTokenTile) {
    const int64_t t1 = std::min(j.n_tokens, t0 + kTokenTile);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = j.w + static_cast<size_t>(r) * j.w_stride;
      for (int64_t t = t0; t < t1; ++t) {
        j.y[t * j.rows + r] = j.dot(j.cols, wr, j.a + static_cast<size_t>(t) * j.a_stride);
      }
    }
  }
}

// Converts x to the activation type once; returns the rows and their stride.
const uint8_t* prepare_activations(const QuantOps& ops, const float* x, int64_t n_tokens, int64_t cols,
                                   ThreadPool* pool, MatmulScratch& scratch, size_t* stride) {
  if (ops.vec_dot_type == GgmlType::kF32) {
    *stride = static_cast<size_t>(cols) * sizeof(float);
    return reinterpret_cast<const uint8_t*>(x);
  }
  const QuantOps& act = *quant_ops(ops.vec_dot_type);
  assert(cols % act.block_elems == 0);
  *stride = row_bytes(act.type, cols);
  scratch.activations.resize(*stride * static_cast<size_t>(n_tokens));
  uint8_t* dst = scratch.activations.data();
  const size_t s = *stride;
  auto quantize = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) act.quantize_row(x + t * cols, dst + static_cast<size_t>(t) * s, cols);
  };
  if (pool != nullptr && n_tokens > 1) {
    pool->parallel_for(0, n_tokens, 1, quantize);
  } else {
    quantize(0, n_tokens);
  }
  return dst;
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool,
            MatmulScratch& scratch) {
  const QuantOps* ops = quant_ops(w.type);
  assert(ops != nullptr && ops->vec_dot != nullptr);
  assert(w.cols % ops->block_elems == 0 && w.row_stride >= row_bytes(w.type, w.cols));
  size_t a_stride = 0;
  const uint8_t* a = prepare_activations(*ops, x, n_tokens, w.cols, pool, scratch, &a_stride);
  const MatmulJob job{
      ops->vec_dot, static_cast<const uint8_t*>(w.data), w.row_stride, a, a_stride, w.cols, w.rows, n_tokens, y};
  auto rows = [&job](int64_t r0, int64_t r1) { run_rows(job, r0, r1); };
  if (pool != nullptr) {
    pool->parallel_for(0, w.rows, kRowTile, rows);
  } else {
    rows(0, w.rows);
  }
}

void matmul_reference(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  const QuantOps* ops = quant_ops(w.type, CpuLevel::kScalar);
  assert(ops != nullptr);
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    ops->dequant_row(static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * w.row_stride, row.data(), w.cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      double sum = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) sum += static_cast<double>(row[static_cast<size_t>(c)]) * x[t * w.cols + c];
      y[t * w.rows + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace hearth::kernels
