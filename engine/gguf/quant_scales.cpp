#include "engine/gguf/quant_scales.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"

namespace hearth::gguf {
namespace {

float half_at(const std::byte* p) {
  std::uint16_t h = 0;
  std::memcpy(&h, p, 2);
  return kernels::fp16_to_f32(h);
}

// The 6-bit scale of sub-block j of a Q4_K / Q5_K super-block (REFERENCE.md).
int k_sub_scale(const std::uint8_t* s, int j) {
  return j < 4 ? (s[j] & 63) : ((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
}

// Welford's running mean and variance (stable over millions of scales).
struct Accumulator {
  std::uint64_t n = 0;
  double mean = 0, m2 = 0, min = 0, max = 0;
  void add(double v) {
    if (n == 0) min = max = v;
    min = std::min(min, v);
    max = std::max(max, v);
    ++n;
    const double d = v - mean;
    mean += d / static_cast<double>(n);
    m2 += d * (v - mean);
  }
};

void accumulate(void* ctx, double v) {
  static_cast<Accumulator*>(ctx)->add(v);
}

}  // namespace

std::string layer_type(std::string_view name) {
  constexpr std::string_view kBlk = "blk.";
  if (name.substr(0, kBlk.size()) != kBlk) return std::string(name);
  const std::size_t dot = name.find('.', kBlk.size());
  return dot == std::string_view::npos ? std::string(name) : std::string(name.substr(dot + 1));
}

bool for_each_scale(const TensorInfo& t, void (*sink)(void*, double), void* ctx) {
  std::size_t block = 0;
  switch (t.type) {
    case GgmlType::kQ4_0:
      block = sizeof(kernels::BlockQ4_0);
      break;
    case GgmlType::kQ4_1:
      block = sizeof(kernels::BlockQ4_1);
      break;
    case GgmlType::kQ5_0:
      block = sizeof(kernels::BlockQ5_0);
      break;
    case GgmlType::kQ5_1:
      block = sizeof(kernels::BlockQ5_1);
      break;
    case GgmlType::kQ8_0:
      block = sizeof(kernels::BlockQ8_0);
      break;
    case GgmlType::kQ4_K:
      block = sizeof(kernels::BlockQ4_K);
      break;
    case GgmlType::kQ5_K:
      block = sizeof(kernels::BlockQ5_K);
      break;
    case GgmlType::kQ6_K:
      block = sizeof(kernels::BlockQ6_K);
      break;
    default:
      return false;
  }
  const std::size_t n_blocks = static_cast<std::size_t>(t.n_bytes) / block;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const std::byte* p = t.data + b * block;
    if (t.type == GgmlType::kQ4_K || t.type == GgmlType::kQ5_K) {
      const float d = half_at(p);  // d, dmin, scales[12] lead both layouts
      const auto* s = reinterpret_cast<const std::uint8_t*>(p + 4);
      for (int j = 0; j < 8; ++j) sink(ctx, static_cast<double>(d) * k_sub_scale(s, j));
    } else if (t.type == GgmlType::kQ6_K) {
      const float d = half_at(p + offsetof(kernels::BlockQ6_K, d));
      const auto* s = reinterpret_cast<const std::int8_t*>(p + offsetof(kernels::BlockQ6_K, scales));
      for (int j = 0; j < 16; ++j) sink(ctx, static_cast<double>(d) * s[j]);
    } else {
      sink(ctx, static_cast<double>(half_at(p)));  // d leads every legacy block
    }
  }
  return true;
}

std::map<std::string, ScaleStats> scale_statistics(const GgufFile& file) {
  std::map<std::string, Accumulator> acc;
  std::map<std::string, ScaleStats> out;
  for (const TensorInfo& t : file.tensors()) {
    const std::string type = layer_type(t.name);
    Accumulator& a = acc[type];
    if (!for_each_scale(t, accumulate, &a)) {
      if (a.n == 0) acc.erase(type);
      continue;
    }
    ScaleStats& s = out[type];
    ++s.tensors;
    ++s.types[std::string(ggml_type_name(t.type))];
  }
  for (auto& [type, s] : out) {
    const Accumulator& a = acc[type];
    s.count = a.n;
    s.mean = a.mean;
    s.stddev = a.n > 0 ? std::sqrt(a.m2 / static_cast<double>(a.n)) : 0.0;
    s.min = a.min;
    s.max = a.max;
  }
  return out;
}

}  // namespace hearth::gguf
