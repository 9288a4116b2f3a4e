// Bit layouts of the quantized blocks, identical to ggml's so GGUF tensor data
// is used in place. Plain structs only (no inline code): the SIMD translation
// units include this header with their own compiler flags.
//
// f16 scales are stored as raw IEEE half bits (uint16_t). Element order within
// a block is documented per type; see also docs in REFERENCE.md.
#pragma once

#include <cstdint>

namespace hearth::kernels {

inline constexpr int kQK32 = 32;  // elements of a "legacy" block
inline constexpr int kQKK = 256;  // elements of a K-quant super-block
inline constexpr int kKScaleBytes = 12;

// y[j] = ((qs[j] & 15) - 8) d, y[j + 16] = ((qs[j] >> 4) - 8) d, j < 16.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK32 / 2];
};

// y = q d + m, nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK32 / 2];
};

// 5th bit of element j is bit j of qh (little-endian u32); y = (q - 16) d.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK32 / 2];
};

// As Q5_0 without the offset: y = q d + m.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK32 / 2];
};

// y = q d.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK32];
};

// Activation block: y = q d; s = d * sum(q), so offsets (Q4_1's m) dot in O(1).
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK32];
};

// 8 sub-blocks of 32 with 6-bit scale and min each (packed in scales[12]);
// chunk c < 4 holds qs[32c..32c+31]: low nibbles are elements 64c..64c+31
// (sub-block 2c), high nibbles 64c+32..64c+63 (sub-block 2c+1).
// y = d sc q - dmin m.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQKK / 2];
};

// As Q4_K; the 5th bit of element 64c+l (l < 32) is bit 2c of qh[l], of element
// 64c+32+l bit 2c+1 of qh[l].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};

// 16 sub-blocks of 16 with int8 scales; y = d sc (q - 32), q 6 bits: the low 4
// in ql, the high 2 in qh (layout in dequantize_q6_k).
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};

// Activation block for the K-quant dots: y = q d, bsums[i] = sum of qs[16i..16i+15].
struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace hearth::kernels
