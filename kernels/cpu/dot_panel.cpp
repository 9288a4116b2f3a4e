#include "kernels/cpu/dot_panel.h"

#include <cassert>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"

namespace hearth::kernels {
namespace {

int32_t code_sum(const int8_t* qs) {
  int32_t sum = 0;
  for (int k = 0; k < kQK32; ++k) sum += qs[k];
  return sum;
}

size_t act_block_bytes(GgmlType act) {
  assert(act == GgmlType::kQ8_0 || act == GgmlType::kQ8_1);
  return act == GgmlType::kQ8_1 ? sizeof(BlockQ8_1) : sizeof(BlockQ8_0);
}

// The numbers of one block into slot `at` of (d, s or sum).
void put(GgmlType act, const uint8_t* block, size_t at, float* d, float* s, int32_t* sum) {
  if (act == GgmlType::kQ8_1) {
    const auto* b = reinterpret_cast<const BlockQ8_1*>(block);
    d[at] = fp16_to_f32(b->d);
    s[at] = fp16_to_f32(b->s);
  } else {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(block);
    d[at] = fp16_to_f32(b->d);
    sum[at] = code_sum(b->qs);
  }
}

void clear(GgmlType act, size_t at, float* d, float* s, int32_t* sum) {
  d[at] = 0.0f;
  if (act == GgmlType::kQ8_1) {
    s[at] = 0.0f;
  } else {
    sum[at] = 0;
  }
}

int64_t padded(int64_t blocks) {
  return (blocks + 7) / 8 * 8;
}

}  // namespace

void fill_panel_row(GgmlType act, const void* row, int64_t blocks, int lanes, int lane, float* d, float* s,
                    int32_t* sum) {
  const size_t block_bytes = act_block_bytes(act);
  const auto* a = static_cast<const uint8_t*>(row);
  for (int64_t i = 0; i < padded(blocks); ++i) {
    const auto at = static_cast<size_t>(i * lanes + lane);
    if (i < blocks) {
      put(act, a + static_cast<size_t>(i) * block_bytes, at, d, s, sum);
    } else {
      clear(act, at, d, s, sum);
    }
  }
}

void fill_panel_residuals(GgmlType act, const void* lo, const int32_t* index, int32_t count, int64_t blocks, int lanes,
                          int lane, float* lo_d, float* lo_s, int32_t* lo_sum) {
  const size_t block_bytes = act_block_bytes(act);
  for (int64_t i = 0; i < padded(blocks); ++i) clear(act, static_cast<size_t>(i * lanes + lane), lo_d, lo_s, lo_sum);
  const auto* l = static_cast<const uint8_t*>(lo);
  for (int32_t k = 0; k < count; ++k) {
    assert(index[k] >= 0 && index[k] < blocks);
    put(act, l + static_cast<size_t>(index[k]) * block_bytes, static_cast<size_t>(index[k] * lanes + lane), lo_d, lo_s,
        lo_sum);
  }
}

namespace {

const int8_t* codes_of(GgmlType act, const uint8_t* block) {
  return act == GgmlType::kQ8_1 ? reinterpret_cast<const BlockQ8_1*>(block)->qs
                                : reinterpret_cast<const BlockQ8_0*>(block)->qs;
}

// Row `lane`'s 32 codes (null: zeros) into a block's interleaved bytes.
void put_codes(const int8_t* qs, int lane, uint8_t* block) {
  const int h = lane / 4, u = lane % 4;
  for (int j = 0; j < 4; ++j) {
    uint8_t* v = block + (2 * j + h) * 32;
    if (qs != nullptr) {
      std::memcpy(v + 4 * u, qs + 4 * j, 4);
      std::memcpy(v + 16 + 4 * u, qs + 16 + 4 * j, 4);
    } else {
      std::memset(v + 4 * u, 0, 4);
      std::memset(v + 16 + 4 * u, 0, 4);
    }
  }
}

}  // namespace

void fill_panel_codes(GgmlType act, const void* row, int64_t blocks, int lane, uint8_t* q) {
  const size_t block_bytes = act_block_bytes(act);
  const auto* a = static_cast<const uint8_t*>(row);
  for (int64_t i = 0; i < padded(blocks); ++i) {
    put_codes(i < blocks ? codes_of(act, a + static_cast<size_t>(i) * block_bytes) : nullptr, lane,
              q + i * kPanelCodeBytes);
  }
}

void fill_panel_residual_codes(GgmlType act, const void* lo, const int32_t* index, int32_t count, int64_t blocks,
                               int lane, uint8_t* lo_q) {
  const size_t block_bytes = act_block_bytes(act);
  for (int64_t i = 0; i < padded(blocks); ++i) put_codes(nullptr, lane, lo_q + i * kPanelCodeBytes);
  const auto* l = static_cast<const uint8_t*>(lo);
  for (int32_t k = 0; k < count; ++k) {
    put_codes(codes_of(act, l + static_cast<size_t>(index[k]) * block_bytes), lane, lo_q + index[k] * kPanelCodeBytes);
  }
}

}  // namespace hearth::kernels
