#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

#include "kernels/cpu/outlier_refine.h"
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
  VecDotRowsFn dot_rows;  // the same dot on up to kMaxDotRows tokens at once
  const uint8_t* w;
  size_t w_stride;  // bytes between weight rows
  const uint8_t* a;
  size_t a_stride;  // bytes between activation rows
  int64_t cols;
  int64_t rows;
  int64_t n_tokens;
  float* y;
  // Outlier refinement with the residual rows inside the dot (32-element
  // block types); null when off or for the other types.
  VecDotRowsRefinedFn dot_rows_refined;
  const OutlierBlocks* outliers;
  // The lane kernel and the prepared panels (32-element types at a SIMD
  // level); when set, it computes every dot of this job, refined or not.
  VecDotPanelFn dot_panel;
  const DotPanel* panels;
};

static_assert(kMaxDotRows == kOutlierMaskTokens, "a multi-row dot covers one mask byte");

// Each weight row is dotted with up to kMaxDotRows tokens per call, its blocks
// unpacked once for all of them; a single token takes the one-row dot (the
// same bits, without the dispatch over row counts). With refinement, a chunk
// of tokens goes through the refined dot (a token without refined blocks gets
// the same bits either way).
void run_panel_rows(const MatmulJob& j, int64_t r0, int64_t r1) {
  if (j.n_tokens == 1) {  // the one-row panel: blocks in lanes
    for (int64_t r = r0; r < r1; ++r)
      j.dot_panel(j.cols, j.w + static_cast<size_t>(r) * j.w_stride, j.panels[0], 1, j.y + r);
    return;
  }
  for (int64_t t0 = 0; t0 < j.n_tokens; t0 += kTokenTile) {
    const int64_t t1 = std::min(j.n_tokens, t0 + kTokenTile);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = j.w + static_cast<size_t>(r) * j.w_stride;
      for (int64_t t = t0; t < t1; t += kMaxDotRows) {  // t: a multiple of kMaxDotRows
        const int n_a = static_cast<int>(std::min<int64_t>(kMaxDotRows, t1 - t));
        float out[kMaxDotRows];
        j.dot_panel(j.cols, wr, j.panels[t / kMaxDotRows], n_a, out);
        for (int k = 0; k < n_a; ++k) j.y[(t + k) * j.rows + r] = out[k];
      }
    }
  }
}

void run_rows(const MatmulJob& j, int64_t r0, int64_t r1) {
  if (j.dot_panel != nullptr) {
    run_panel_rows(j, r0, r1);
    return;
  }
  const OutlierBlocks* ob = j.dot_rows_refined != nullptr ? j.outliers : nullptr;
  for (int64_t t0 = 0; t0 < j.n_tokens; t0 += kTokenTile) {
    const int64_t t1 = std::min(j.n_tokens, t0 + kTokenTile);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = j.w + static_cast<size_t>(r) * j.w_stride;
      if (t1 - t0 == 1 && (ob == nullptr || ob->count[static_cast<size_t>(t0)] == 0)) {
        j.y[t0 * j.rows + r] = j.dot(j.cols, wr, j.a + static_cast<size_t>(t0) * j.a_stride);
        continue;
      }
      for (int64_t t = t0; t < t1; t += kMaxDotRows) {  // t: a multiple of kMaxDotRows
        const int n_a = static_cast<int>(std::min<int64_t>(kMaxDotRows, t1 - t));
        float out[kMaxDotRows];
        const uint8_t* a = j.a + static_cast<size_t>(t) * j.a_stride;
        if (ob != nullptr) {
          j.dot_rows_refined(j.cols, wr, a, j.a_stride, ob->residual_row(t), ob->row_bytes,
                             ob->mask_of_chunk(t / kMaxDotRows), n_a, out);
        } else {
          j.dot_rows(j.cols, wr, a, j.a_stride, n_a, out);
        }
        for (int k = 0; k < n_a; ++k) j.y[(t + k) * j.rows + r] = out[k];
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
  const float ratio = scratch.outlier_ratio;
  if (ratio > 0.0f) prepare_outlier_blocks(act, n_tokens, cols, scratch.outliers);
  auto quantize = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* row = dst + static_cast<size_t>(t) * s;
      act.quantize_row(x + t * cols, row, cols);
      if (ratio > 0.0f) refine_row(act, x + t * cols, row, cols, ratio, t, scratch.outliers);
    }
  };
  if (pool != nullptr && n_tokens > 1) {
    pool->parallel_for(0, n_tokens, 1, quantize);
  } else {
    quantize(0, n_tokens);
  }
  if (ratio > 0.0f) finish_outlier_masks(n_tokens, scratch.outliers);
  return dst;
}

// The panel arrays of chunk c in the scratch (`size` entries each).
struct PanelArrays {
  float *d, *s, *lo_d, *lo_s;
  int32_t *sum, *lo_sum;
  uint8_t *q, *lo_q;  // null with lanes 1
};

PanelArrays panel_arrays(MatmulScratch& scratch, size_t size, size_t code_bytes, int64_t c) {
  float* f = scratch.panel_floats.data() + 4 * size * static_cast<size_t>(c);
  int32_t* i = scratch.panel_sums.data() + 2 * size * static_cast<size_t>(c);
  uint8_t* q = code_bytes != 0 ? scratch.panel_codes.data() + 2 * code_bytes * static_cast<size_t>(c) : nullptr;
  return PanelArrays{f, f + size, f + 2 * size, f + 3 * size, i, i + size, q, q != nullptr ? q + code_bytes : nullptr};
}

// The panels of the quantized rows a (after refinement): one per chunk of 8
// tokens (lanes 8), or one with lanes 1 for a single token.
void prepare_panels(GgmlType act, const uint8_t* a, size_t a_stride, int64_t n_tokens, int64_t cols, bool refined,
                    ThreadPool* pool, MatmulScratch& scratch) {
  const int64_t blocks = cols / 32;
  const int lanes = n_tokens == 1 ? 1 : static_cast<int>(kMaxDotRows);
  const int64_t chunks = (n_tokens + kMaxDotRows - 1) / kMaxDotRows;
  const auto size = static_cast<size_t>((blocks + 7) / 8 * 8 * lanes);
  const size_t code_bytes = lanes == 1 ? 0 : static_cast<size_t>((blocks + 7) / 8 * 8 * kPanelCodeBytes);
  scratch.panel_floats.resize(4 * size * static_cast<size_t>(chunks));
  scratch.panel_sums.resize(2 * size * static_cast<size_t>(chunks));
  scratch.panel_codes.resize(2 * code_bytes * static_cast<size_t>(chunks));
  scratch.panels.resize(static_cast<size_t>(chunks));
  const OutlierBlocks& ob = scratch.outliers;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t t0 = c * kMaxDotRows, t1 = std::min(n_tokens, t0 + kMaxDotRows);
    bool any = false;
    for (int64_t t = t0; refined && t < t1; ++t) any = any || ob.count[static_cast<size_t>(t)] > 0;
    // A chunk without refined blocks runs the plain kernel (the same bits).
    const PanelArrays p = panel_arrays(scratch, size, code_bytes, c);
    scratch.panels[static_cast<size_t>(c)] = DotPanel{a + static_cast<size_t>(t0) * a_stride,
                                                      a_stride,
                                                      any ? ob.residual_row(t0) : nullptr,
                                                      ob.row_bytes,
                                                      any ? ob.mask_of_chunk(c) : nullptr,
                                                      p.d,
                                                      p.s,
                                                      p.sum,
                                                      p.lo_d,
                                                      p.lo_s,
                                                      p.lo_sum,
                                                      p.q,
                                                      any ? p.lo_q : nullptr,
                                                      lanes};
  }
  auto fill = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c = t / kMaxDotRows;
      const PanelArrays p = panel_arrays(scratch, size, code_bytes, c);
      const int lane = static_cast<int>(t % lanes);
      const uint8_t* row = a + static_cast<size_t>(t) * a_stride;
      fill_panel_row(act, row, blocks, lanes, lane, p.d, p.s, p.sum);
      if (lanes > 1) fill_panel_codes(act, row, blocks, lane, p.q);
      if (scratch.panels[static_cast<size_t>(c)].lo != nullptr) {
        const int32_t* index = ob.index.data() + t * ob.blocks_per_row;
        const int32_t count = ob.count[static_cast<size_t>(t)];
        fill_panel_residuals(act, ob.residual_row(t), index, count, blocks, lanes, lane, p.lo_d, p.lo_s, p.lo_sum);
        if (lanes > 1) fill_panel_residual_codes(act, ob.residual_row(t), index, count, blocks, lane, p.lo_q);
      }
    }
  };
  if (pool != nullptr && n_tokens > kMaxDotRows) {
    pool->parallel_for(0, n_tokens, kMaxDotRows, fill);
  } else {
    fill(0, n_tokens);
  }
  // Lanes of the last chunk past the last token: zero codes and numbers
  // (computed, never stored).
  if (lanes > 1 && n_tokens % kMaxDotRows != 0) {
    const PanelArrays p = panel_arrays(scratch, size, code_bytes, chunks - 1);
    for (auto lane = static_cast<int>(n_tokens % kMaxDotRows); lane < kMaxDotRows; ++lane) {
      fill_panel_residuals(act, nullptr, nullptr, 0, blocks, lanes, lane, p.d, p.s, p.sum);
      fill_panel_residuals(act, nullptr, nullptr, 0, blocks, lanes, lane, p.lo_d, p.lo_s, p.lo_sum);
      fill_panel_residual_codes(act, nullptr, nullptr, 0, blocks, lane, p.q);
      fill_panel_residual_codes(act, nullptr, nullptr, 0, blocks, lane, p.lo_q);
    }
  }
}

// Adds the refined blocks' dots (outlier_refine.h) of rows [r0, r1) for the
// types whose dot has no refined form (K types: 256-element blocks, so one
// call per refined block costs little next to the block's work). In block
// order per (row, token): batching cannot change a result.
void add_outlier_dots(const MatmulJob& j, const OutlierBlocks& ob, size_t block_bytes, int64_t block_elems, int64_t r0,
                      int64_t r1) {
  for (int64_t t = 0; t < j.n_tokens; ++t) {
    const int32_t count = ob.count[static_cast<size_t>(t)];
    if (count == 0) continue;
    const int32_t* index = ob.index.data() + t * ob.blocks_per_row;
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = j.w + static_cast<size_t>(r) * j.w_stride;
      float extra = 0.0f;
      for (int32_t s = 0; s < count; ++s) {
        extra += j.dot(block_elems, wr + static_cast<size_t>(index[s]) * block_bytes, ob.residual_block(t, index[s]));
      }
      j.y[t * j.rows + r] += extra;
    }
  }
}

}  // namespace

namespace {

// One matrix of a matmul_many call: its job and where its rows start in the
// concatenated row range.
struct ManyPart {
  MatmulJob job;
  const QuantOps* ops;
  bool separate_outliers;
  int64_t first_row;
};

}  // namespace

void matmul_many(std::span<const WeightMatrix> ws, const float* x, int64_t n_tokens, std::span<float* const> ys,
                 ThreadPool* pool, MatmulScratch& scratch) {
  assert(!ws.empty() && ws.size() == ys.size() && ws.size() <= kMaxMatmulMany);
  const QuantOps* first = quant_ops(ws[0].type);
  assert(first != nullptr && first->vec_dot != nullptr);
  size_t a_stride = 0;
  const uint8_t* a = prepare_activations(*first, x, n_tokens, ws[0].cols, pool, scratch, &a_stride);
  const bool refined = first->vec_dot_type != GgmlType::kF32 && scratch.outlier_ratio > 0.0f;
  bool panels = false;
  for (const WeightMatrix& w : ws) panels = panels || quant_ops(w.type)->vec_dot_panel != nullptr;
  if (panels) prepare_panels(first->vec_dot_type, a, a_stride, n_tokens, ws[0].cols, refined, pool, scratch);
  std::array<ManyPart, kMaxMatmulMany> parts;
  int64_t total_rows = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    const WeightMatrix& w = ws[i];
    const QuantOps* ops = quant_ops(w.type);
    assert(ops != nullptr && ops->vec_dot != nullptr && ops->vec_dot_type == first->vec_dot_type);
    assert(w.cols == ws[0].cols && w.cols % ops->block_elems == 0 && w.row_stride >= row_bytes(w.type, w.cols));
    parts[i] =
        ManyPart{MatmulJob{ops->vec_dot, ops->vec_dot_rows, static_cast<const uint8_t*>(w.data), w.row_stride, a,
                           a_stride, w.cols, w.rows, n_tokens, ys[i], refined ? ops->vec_dot_rows_refined : nullptr,
                           refined ? &scratch.outliers : nullptr, ops->vec_dot_panel, scratch.panels.data()},
                 ops, refined && ops->vec_dot_rows_refined == nullptr, total_rows};
    total_rows += w.rows;
  }
  // Rows [r0, r1) of the concatenation, split at the matrices' boundaries.
  auto rows = [&](int64_t r0, int64_t r1) {
    for (size_t i = 0; i < ws.size(); ++i) {
      const ManyPart& p = parts[i];
      const int64_t lo = std::max(r0, p.first_row) - p.first_row;
      const int64_t hi = std::min(r1, p.first_row + p.job.rows) - p.first_row;
      if (lo >= hi) continue;
      run_rows(p.job, lo, hi);
      if (p.separate_outliers)
        add_outlier_dots(p.job, scratch.outliers, p.ops->block_bytes, p.ops->block_elems, lo, hi);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(0, total_rows, kRowTile, rows);
  } else {
    rows(0, total_rows);
  }
}

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool,
            MatmulScratch& scratch) {
  matmul_many(std::span<const WeightMatrix>(&w, 1), x, n_tokens, std::span<float* const>(&y, 1), pool, scratch);
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
