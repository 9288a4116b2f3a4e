// The distribution of a GGUF file's quantization scales (hearth-cli inspect
// --scales, issue 19): per layer type (the tensor name without its "blk.N."
// prefix), the mean and standard deviation of the effective scale of every
// block (or sub-block) of its quantized tensors. A layer type whose scales sit
// far above the others is where a mixed-precision path risks overflow.
//
// The effective scale: d of Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 blocks; d x sc of
// each sub-block of Q4_K / Q5_K (6-bit sc, 8 per super-block) and Q6_K (int8
// sc, 16 per super-block). Block layouts: kernels/cpu/quant_blocks.h. Other
// types (float, Q2_K, Q3_K...) are counted as tensors but have no scales here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"

namespace hearth::gguf {

struct ScaleStats {
  std::uint64_t tensors = 0;  // quantized tensors of this layer type
  std::uint64_t count = 0;    // scales seen
  double mean = 0;
  double stddev = 0;  // population standard deviation
  double min = 0;
  double max = 0;
  std::map<std::string, std::uint64_t> types;  // ggml type name -> tensors
};

// "blk.12.attn_q.weight" -> "attn_q.weight"; other names unchanged.
std::string layer_type(std::string_view tensor_name);
// Calls `sink` with every effective scale of `t`; false when its type has no block scales.
bool for_each_scale(const TensorInfo& t, void (*sink)(void*, double), void* ctx);
// Layer type -> statistics, over every tensor of the file with block scales.
std::map<std::string, ScaleStats> scale_statistics(const GgufFile& file);

}  // namespace hearth::gguf
