#include "kernels/cpu/outlier_refine.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"

namespace hearth::kernels {
namespace {

// The scale d of an activation block (every activation type starts with it).
float block_scale(GgmlType act, const uint8_t* block) {
  if (act == GgmlType::kQ8_K) {
    float d = 0.0f;
    std::memcpy(&d, block, sizeof(d));
    return d;
  }
  uint16_t h = 0;
  std::memcpy(&h, block, sizeof(h));
  return fp16_to_f32(h);
}

// max|x| > crest x RMS(x) over one block: the block's small values lose most of their bits.
bool peaked(const float* x, int64_t n, float crest) {
  float amax = 0.0f;
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    sum_sq += static_cast<double>(x[i]) * x[i];
  }
  const double mean_sq = sum_sq / static_cast<double>(n);
  return static_cast<double>(amax) * amax > static_cast<double>(crest) * crest * mean_sq;
}

// Median of the first n values of v (reorders them).
float median(float* v, int64_t n) {
  float* mid = v + n / 2;
  std::nth_element(v, mid, v + n);
  return *mid;
}

}  // namespace

void prepare_outlier_blocks(const QuantOps& act, int64_t n_tokens, int64_t cols, OutlierBlocks& out) {
  assert(act.vec_dot_type == act.type && cols % act.block_elems == 0);
  out.blocks_per_row = cols / act.block_elems;
  out.block_bytes = act.block_bytes;
  out.row_bytes = static_cast<size_t>(out.blocks_per_row) * act.block_bytes;
  const auto slots = static_cast<size_t>(n_tokens * out.blocks_per_row);
  out.count.assign(static_cast<size_t>(n_tokens), 0);
  if (out.index.size() < slots) out.index.resize(slots);
  if (out.residual.size() < static_cast<size_t>(n_tokens) * out.row_bytes) {
    out.residual.resize(static_cast<size_t>(n_tokens) * out.row_bytes);
  }
}

void refine_row(const QuantOps& act, const float* x, const uint8_t* q, int64_t cols, float ratio, int64_t t,
                OutlierBlocks& out) {
  const int64_t n_blocks = cols / act.block_elems;
  // Block scales, then a copy for the median (nth_element reorders it).
  thread_local std::vector<float> scratch;
  scratch.resize(2 * static_cast<size_t>(n_blocks));
  float* scales = scratch.data();
  float* sorted = scales + n_blocks;
  for (int64_t b = 0; b < n_blocks; ++b)
    scales[b] = block_scale(act.type, q + static_cast<size_t>(b) * act.block_bytes);
  std::copy(scales, scales + n_blocks, sorted);
  const float threshold = ratio * median(sorted, n_blocks);

  std::array<float, kQKK> dequant;
  std::array<float, kQKK> residual;
  const auto elems = static_cast<size_t>(act.block_elems);
  int32_t count = 0;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * act.block_elems;
    if (!(scales[b] > threshold) && !peaked(xb, act.block_elems, kOutlierCrest)) continue;
    const uint8_t* block = q + static_cast<size_t>(b) * act.block_bytes;
    act.dequant_row(block, dequant.data(), act.block_elems);
    for (size_t i = 0; i < elems; ++i) residual[i] = xb[i] - dequant[i];
    out.index[static_cast<size_t>(t * out.blocks_per_row + count)] = static_cast<int32_t>(b);
    act.quantize_row(
        residual.data(),
        out.residual.data() + static_cast<size_t>(t) * out.row_bytes + static_cast<size_t>(b) * out.block_bytes,
        act.block_elems);
    ++count;
  }
  out.count[static_cast<size_t>(t)] = count;
}

void finish_outlier_masks(int64_t n_tokens, OutlierBlocks& out) {
  const int64_t chunks = (n_tokens + kOutlierMaskTokens - 1) / kOutlierMaskTokens;
  out.mask.assign(static_cast<size_t>(chunks * out.blocks_per_row), 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const auto bit = static_cast<uint8_t>(1u << (t % kOutlierMaskTokens));
    uint8_t* m = out.mask.data() + static_cast<size_t>((t / kOutlierMaskTokens) * out.blocks_per_row);
    const int32_t* index = out.index.data() + t * out.blocks_per_row;
    for (int32_t s = 0; s < out.count[static_cast<size_t>(t)]; ++s) m[index[s]] |= bit;
  }
}

}  // namespace hearth::kernels
