// Activation panels: the per-block numbers of up to 8 activation rows (8-bit
// blocks, Q8_0 or Q8_1) that the lane kernels of the 32-element weight types
// need in f32 (or as exact integer code sums), converted once per matmul
// instead of once per weight row.
//
// The lane kernels put 8 values in the 8 lanes of a vector: the 8 tokens of a
// chunk (batched decode and prefill: `lanes` = 8, index [block][token]) or 8
// consecutive blocks of one token (`lanes` = 1, index [block]). Arrays hold
// the blocks rounded up to a multiple of 8; the padding is zero.
//
// Plain structs and out-of-line functions only: the SIMD translation units
// include this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ggml_type.h"

namespace hearth::kernels {

struct DotPanel {
  const void* a = nullptr;  // activation rows (blocks of the activation type)
  size_t a_stride = 0;      // bytes between them
  // Residual rows of outlier refinement (outlier_refine.h), or null: row j
  // refines block i where bit j of mask[i] is set.
  const void* lo = nullptr;
  size_t lo_stride = 0;
  const uint8_t* mask = nullptr;
  // [padded blocks][lanes]:
  const float* d = nullptr;      // the block's scale d as f32
  const float* s = nullptr;      // Q8_1: the block's s (d * sum of codes) as f32
  const int32_t* sum = nullptr;  // Q8_0: the sum of the block's 32 codes
  const float* lo_d = nullptr;   // as d, s and sum for the residual blocks;
  const float* lo_s = nullptr;   // 0 where the row does not refine the block
  const int32_t* lo_sum = nullptr;
  // lanes 8 only: the rows' codes interleaved for the rows-in-lanes byte dots
  // ([padded blocks][kPanelCodeBytes], layout at fill_panel_codes), and the
  // residual rows' codes the same way (zeros where a row does not refine a
  // block; null when lo is).
  const uint8_t* q = nullptr;
  const uint8_t* lo_q = nullptr;
  int lanes = 8;  // 8: rows in lanes; 1: a single row, blocks in lanes
};

// Bytes of one block's interleaved codes: 8 rows x 32 codes.
inline constexpr int64_t kPanelCodeBytes = 256;

// Writes row `lane`'s entries of blocks [0, blocks) of a panel's d and s
// (act kQ8_1) or d and sum (act kQ8_0) from the activation row `row`; the
// padding entries, up to the next multiple of 8 blocks, are set to 0.
void fill_panel_row(GgmlType act, const void* row, int64_t blocks, int lanes, int lane, float* d, float* s,
                    int32_t* sum);

// The same for the residual arrays (lo_d and lo_s or lo_sum): the blocks
// index[0..count) (ascending, < blocks) from the residual row `lo`, every
// other entry 0.
void fill_panel_residuals(GgmlType act, const void* lo, const int32_t* index, int32_t count, int64_t blocks, int lanes,
                          int lane, float* lo_d, float* lo_s, int32_t* lo_sum);

// Writes row `lane`'s codes (lanes 8) of blocks [0, blocks) into q, zeros
// in the padding blocks. A block's 256 bytes are 8 vectors of 32: vector
// 2j + h (j < 4, h < 2) holds, for rows 4h + u (u < 4), the codes
// [4j, 4j + 4) in bytes 4u..4u+3 and the codes [16 + 4j, 16 + 4j + 4) in
// bytes 16 + 4u..16 + 4u + 3. Broadcasting a weight block's code dwords j and
// 4 + j to the two 128-bit halves then byte-dots 4 rows at once.
void fill_panel_codes(GgmlType act, const void* row, int64_t blocks, int lane, uint8_t* q);

// The same for the residual codes: the blocks index[0..count) from the
// residual row `lo`, zeros elsewhere.
void fill_panel_residual_codes(GgmlType act, const void* lo, const int32_t* index, int32_t count, int64_t blocks,
                               int lane, uint8_t* lo_q);

}  // namespace hearth::kernels
