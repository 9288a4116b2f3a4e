#include "models/weight_format.h"

#include <map>
#include <optional>

namespace hearth::models {
namespace {

using gguf::GgmlType;

struct FileType {
  std::uint32_t id;  // general.file_type (llama.cpp's llama_ftype; do not renumber)
  const char* name;  // as llama.cpp's quantize tool names it
  GgmlType main;     // the type most matrices get
};

constexpr FileType kFileTypes[] = {
    {0, "F32", GgmlType::kF32},      {1, "F16", GgmlType::kF16},      {2, "Q4_0", GgmlType::kQ4_0},
    {3, "Q4_1", GgmlType::kQ4_1},    {7, "Q8_0", GgmlType::kQ8_0},    {8, "Q5_0", GgmlType::kQ5_0},
    {9, "Q5_1", GgmlType::kQ5_1},    {10, "Q2_K", GgmlType::kQ2_K},   {11, "Q3_K_S", GgmlType::kQ3_K},
    {12, "Q3_K_M", GgmlType::kQ3_K}, {13, "Q3_K_L", GgmlType::kQ3_K}, {14, "Q4_K_S", GgmlType::kQ4_K},
    {15, "Q4_K_M", GgmlType::kQ4_K}, {16, "Q5_K_S", GgmlType::kQ5_K}, {17, "Q5_K_M", GgmlType::kQ5_K},
    {18, "Q6_K", GgmlType::kQ6_K},   {32, "BF16", GgmlType::kBF16},
};

const FileType* find_file_type(std::uint64_t id) {
  for (const FileType& f : kFileTypes) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// What llama.cpp's quantizer writes instead of a K-type for rows that are not
// a multiple of 256 elements (small models, 576 or 640 wide, are full of them).
std::optional<GgmlType> row_fallback(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_K:
      return GgmlType::kQ5_0;
    case GgmlType::kQ5_K:
      return GgmlType::kQ5_1;
    case GgmlType::kQ6_K:
      return GgmlType::kQ8_0;
    default:
      return std::nullopt;
  }
}

// The type holding the most elements over the layers' matrices (the embedding
// and output matrices get their own types in llama.cpp's mixtures, and a large
// vocabulary would outweigh the layers: Gemma 3 270M's Q8_0 embedding holds
// more elements than its 18 Q4_K_M layers); over every matrix when only those
// exist; nullopt without any.
std::optional<GgmlType> dominant_matrix_type(const gguf::GgufFile& file) {
  std::map<GgmlType, std::uint64_t> elements, all;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.n_dims < 2) continue;
    all[t.type] += t.n_elements;
    if (t.name != "token_embd.weight" && t.name != "output.weight") elements[t.type] += t.n_elements;
  }
  if (elements.empty()) elements = all;
  std::optional<GgmlType> best;
  std::uint64_t most = 0;
  for (const auto& [type, n] : elements) {
    if (n > most) best = type, most = n;
  }
  return best;
}

}  // namespace

std::string weight_format_of(const gguf::GgufFile& file) {
  const std::optional<GgmlType> dominant = dominant_matrix_type(file);
  if (!dominant) return {};
  if (Result<std::uint64_t> id = file.get_uint("general.file_type")) {
    if (const FileType* f = find_file_type(*id)) {
      if (*dominant == f->main || row_fallback(f->main) == dominant) return f->name;
    }
  }
  return gguf::ggml_type_name(*dominant);
}

}  // namespace hearth::models
