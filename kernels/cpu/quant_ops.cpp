#include "kernels/cpu/quant_ops.h"

#include <array>
#include <cassert>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/vec_dot.h"

namespace hearth::kernels {
namespace {

constexpr size_t kLevels = 3;

// The per-ISA functions that differ between levels.
struct IsaFns {
  VecDotFn f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k;
  VecDotRowsFn f32_rows, f16_rows, bf16_rows, q4_0_rows, q4_1_rows, q5_0_rows, q5_1_rows, q8_0_rows, q4_k_rows,
      q5_k_rows, q6_k_rows;
  VecDotRowsRefinedFn q4_0_refined, q4_1_refined, q5_0_refined, q5_1_refined, q8_0_refined;
  QuantizeRowFn q8_0_act, q8_1_act, q8_k_act;
  VecDotPanelFn q4_0_panel, q4_1_panel, q5_0_panel, q5_1_panel, q8_0_panel;
};

// ns::quantize_row_q8_0 etc.: the scalar quantizers live in hearth::kernels.
#define HEARTH_ISA_FNS(ns, act, panels)                                                                             \
  IsaFns {                                                                                                          \
    ns::vec_dot_f32, ns::vec_dot_f16, ns::vec_dot_bf16, ns::vec_dot_q4_0_q8_0, ns::vec_dot_q4_1_q8_1,               \
        ns::vec_dot_q5_0_q8_0, ns::vec_dot_q5_1_q8_1, ns::vec_dot_q8_0_q8_0, ns::vec_dot_q4_k_q8_k,                 \
        ns::vec_dot_q5_k_q8_k, ns::vec_dot_q6_k_q8_k, ns::vec_dot_f32_rows, ns::vec_dot_f16_rows,                   \
        ns::vec_dot_bf16_rows, ns::vec_dot_q4_0_q8_0_rows, ns::vec_dot_q4_1_q8_1_rows, ns::vec_dot_q5_0_q8_0_rows,  \
        ns::vec_dot_q5_1_q8_1_rows, ns::vec_dot_q8_0_q8_0_rows, ns::vec_dot_q4_k_q8_k_rows,                         \
        ns::vec_dot_q5_k_q8_k_rows, ns::vec_dot_q6_k_q8_k_rows, ns::vec_dot_q4_0_q8_0_rows_refined,                 \
        ns::vec_dot_q4_1_q8_1_rows_refined, ns::vec_dot_q5_0_q8_0_rows_refined, ns::vec_dot_q5_1_q8_1_rows_refined, \
        ns::vec_dot_q8_0_q8_0_rows_refined, act::quantize_row_q8_0, act::quantize_row_q8_1, act::quantize_row_q8_k, \
        panels                                                                                                      \
  }

#define HEARTH_NO_PANELS nullptr, nullptr, nullptr, nullptr, nullptr
#define HEARTH_PANELS(ns)                                                                                             \
  ns::vec_dot_q4_0_q8_0_panel, ns::vec_dot_q4_1_q8_1_panel, ns::vec_dot_q5_0_q8_0_panel, ns::vec_dot_q5_1_q8_1_panel, \
      ns::vec_dot_q8_0_q8_0_panel
constexpr IsaFns kScalarFns = HEARTH_ISA_FNS(scalar, hearth::kernels, HEARTH_NO_PANELS);
constexpr IsaFns kAvx2Fns = HEARTH_ISA_FNS(avx2, avx2, HEARTH_PANELS(avx2));
constexpr IsaFns kAvx512Fns = HEARTH_ISA_FNS(avx512, avx512, HEARTH_PANELS(avx512));
#undef HEARTH_PANELS
#undef HEARTH_NO_PANELS
#undef HEARTH_ISA_FNS

constexpr size_t kTypes = 13;

using Table = std::array<QuantOps, kTypes>;

Table make_table(const IsaFns& f) {
  using T = GgmlType;
  return Table{{
      {T::kF32, "F32", 1, 4, dequantize_row_f32, quantize_row_f32, T::kF32, f.f32, f.f32_rows, nullptr, nullptr},
      {T::kF16, "F16", 1, 2, dequantize_row_f16, quantize_row_f16, T::kF32, f.f16, f.f16_rows, nullptr, nullptr},
      {T::kBF16, "BF16", 1, 2, dequantize_row_bf16, quantize_row_bf16, T::kF32, f.bf16, f.bf16_rows, nullptr, nullptr},
      {T::kQ4_0, "Q4_0", 32, 18, dequantize_row_q4_0, quantize_row_q4_0, T::kQ8_0, f.q4_0, f.q4_0_rows, f.q4_0_refined,
       f.q4_0_panel},
      {T::kQ4_1, "Q4_1", 32, 20, dequantize_row_q4_1, quantize_row_q4_1, T::kQ8_1, f.q4_1, f.q4_1_rows, f.q4_1_refined,
       f.q4_1_panel},
      {T::kQ5_0, "Q5_0", 32, 22, dequantize_row_q5_0, quantize_row_q5_0, T::kQ8_0, f.q5_0, f.q5_0_rows, f.q5_0_refined,
       f.q5_0_panel},
      {T::kQ5_1, "Q5_1", 32, 24, dequantize_row_q5_1, quantize_row_q5_1, T::kQ8_1, f.q5_1, f.q5_1_rows, f.q5_1_refined,
       f.q5_1_panel},
      {T::kQ8_0, "Q8_0", 32, 34, dequantize_row_q8_0, f.q8_0_act, T::kQ8_0, f.q8_0, f.q8_0_rows, f.q8_0_refined,
       f.q8_0_panel},
      {T::kQ8_1, "Q8_1", 32, 36, dequantize_row_q8_1, f.q8_1_act, T::kQ8_1, nullptr, nullptr, nullptr, nullptr},
      {T::kQ4_K, "Q4_K", 256, 144, dequantize_row_q4_k, quantize_row_q4_k, T::kQ8_K, f.q4_k, f.q4_k_rows, nullptr,
       nullptr},
      {T::kQ5_K, "Q5_K", 256, 176, dequantize_row_q5_k, quantize_row_q5_k, T::kQ8_K, f.q5_k, f.q5_k_rows, nullptr,
       nullptr},
      {T::kQ6_K, "Q6_K", 256, 210, dequantize_row_q6_k, quantize_row_q6_k, T::kQ8_K, f.q6_k, f.q6_k_rows, nullptr,
       nullptr},
      {T::kQ8_K, "Q8_K", 256, 292, dequantize_row_q8_k, f.q8_k_act, T::kQ8_K, nullptr, nullptr, nullptr, nullptr},
  }};
}

const std::array<Table, kLevels>& tables() {
  static const std::array<Table, kLevels> all{make_table(kScalarFns), make_table(kAvx2Fns), make_table(kAvx512Fns)};
  return all;
}

}  // namespace

const QuantOps* quant_ops(GgmlType type, CpuLevel level) {
  assert(static_cast<int>(level) <= static_cast<int>(cpu_level()));
  for (const QuantOps& ops : tables()[static_cast<size_t>(level)]) {
    if (ops.type == type) return &ops;
  }
  return nullptr;
}

const QuantOps* quant_ops(GgmlType type) {
  static const CpuLevel level = cpu_level();
  return quant_ops(type, level);
}

}  // namespace hearth::kernels
