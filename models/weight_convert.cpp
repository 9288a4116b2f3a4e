#include "models/weight_convert.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/cpu/quant_ops.h"
#include "models/weight_format.h"

namespace hearth::models {
namespace {

using gguf::GgmlType;

constexpr GgmlType kTargets[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0,
                                 GgmlType::kQ6_K, GgmlType::kQ5_1, GgmlType::kQ5_0, GgmlType::kQ5_K,
                                 GgmlType::kQ4_1, GgmlType::kQ4_0, GgmlType::kQ4_K};

bool is_matrix(const gguf::TensorInfo& t) {
  return t.n_dims == 2 && kernels::is_weight_type(t.type);
}

std::string name_of(GgmlType type) {
  return gguf::ggml_type_name(type);
}

// Why matrix t cannot become `target`, or "" when it can (or needs nothing).
std::string refusal(const gguf::TensorInfo& t, GgmlType target) {
  if (t.type == target) return "";
  if (bits_per_weight(target) > bits_per_weight(t.type)) {
    return name_of(target) + " (" + std::to_string(bits_per_weight(target)).substr(0, 4) +
           " bits per weight) is finer than tensor '" + std::string(t.name) + "' (" + name_of(t.type) + ", " +
           std::to_string(bits_per_weight(t.type)).substr(0, 4) +
           "): converting cannot restore the precision it lost; choose a coarser format or the file's own";
  }
  const std::int64_t block = kernels::type_traits(target)->block_elems;
  if (t.ne[0] % block != 0) {
    return "tensor '" + std::string(t.name) + "' has rows of " + std::to_string(t.ne[0]) +
           " values, not whole blocks of " + std::to_string(block) + " as " + name_of(target) + " needs";
  }
  return "";
}

// Rows [begin, end) of t into dst (row_bytes(target) each).
void convert_rows(const gguf::TensorInfo& t, GgmlType target, std::int64_t begin, std::int64_t end, std::byte* dst) {
  const kernels::QuantOps* from = kernels::quant_ops(t.type);
  const kernels::QuantOps* to = kernels::quant_ops(target);
  const std::int64_t cols = t.ne[0];
  const std::size_t in_row = t.row_bytes(), out_row = kernels::row_bytes(target, cols);
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (std::int64_t r = begin; r < end; ++r) {
    from->dequant_row(t.data + static_cast<std::size_t>(r) * in_row, row.data(), cols);
    to->quantize_row(row.data(), dst + static_cast<std::size_t>(r) * out_row, cols);
  }
}

}  // namespace

Result<gguf::GgmlType> parse_weight_quant(std::string_view name) {
  std::string names;
  for (GgmlType t : kTargets) {
    if (name == name_of(t)) return t;
    names += (names.empty() ? "" : ", ") + name_of(t);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "--quant " + std::string(name) + ": not a weight format Hearth converts to (" + names + ")");
}

double bits_per_weight(gguf::GgmlType type) {
  const kernels::TypeTraits* t = kernels::type_traits(type);
  return t == nullptr ? 0.0 : 8.0 * static_cast<double>(t->block_bytes) / static_cast<double>(t->block_elems);
}

Result<ConversionPlan> plan_conversion(const gguf::GgufFile& file, gguf::GgmlType target) {
  ConversionPlan p;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (!is_matrix(t) || t.type == target) {
      p.weights_bytes += t.n_bytes;
      continue;
    }
    if (const std::string why = refusal(t, target); !why.empty()) {
      return make_error(ErrorCode::kUnsupported, "--quant " + name_of(target) + ": " + why);
    }
    p.weights_bytes += kernels::row_bytes(target, t.ne[0]) * static_cast<std::size_t>(t.ne[1]);
    ++p.matrices;
  }
  return p;
}

Result<ConversionReport> convert_weights(gguf::GgufFile& file, gguf::GgmlType target, int threads) {
  HEARTH_ASSIGN_OR_RETURN(const ConversionPlan plan, plan_conversion(file, target));
  ConversionReport report;
  report.from = weight_format_of(file);
  report.to = name_of(target);
  report.matrices = plan.matrices;
  const auto t0 = std::chrono::steady_clock::now();
  const int n_threads = std::max(1, threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()));
  const std::span<const gguf::TensorInfo> tensors = file.tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const gguf::TensorInfo& t = tensors[i];
    if (!is_matrix(t) || t.type == target) continue;
    const std::int64_t rows = t.ne[1];
    std::vector<std::byte> out;
    try {
      out.resize(kernels::row_bytes(target, t.ne[0]) * static_cast<std::size_t>(rows));
    } catch (const std::bad_alloc&) {
      return make_error(ErrorCode::kOutOfMemory,
                        "--quant " + report.to + ": no memory for tensor '" + std::string(t.name) + "' converted");
    }
    // Rows in contiguous shares, one per thread: each thread writes its own rows only.
    const std::int64_t share = (rows + n_threads - 1) / n_threads;
    std::vector<std::jthread> pool;
    for (std::int64_t begin = share; begin < rows; begin += share) {
      pool.emplace_back([&, begin] { convert_rows(t, target, begin, std::min(rows, begin + share), out.data()); });
    }
    convert_rows(t, target, 0, std::min(rows, share), out.data());
    pool.clear();  // joins
    file.replace_tensor_data(i, target, std::move(out));
  }
  report.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace hearth::models
