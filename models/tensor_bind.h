// Binding a GGUF's tensors to an architecture's weight struct, shared by every
// architecture (llama family, gemma3): each tensor checked for presence, shape
// and a type the kernels compute before anything is uploaded, and the checked
// reference handed to the backend (backend::Ops::upload_*).
#pragma once

#include <cstdint>
#include <string>

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "hearth/result.h"

namespace hearth::models {

// A weight matrix [rows][cols] (GGUF ne = [cols, rows]) or vector [cols].
struct WeightRef {
  const gguf::TensorInfo* info = nullptr;  // null for an absent optional tensor
  std::uint32_t type = 0;                  // ggml type id
  std::int64_t rows = 1;                   // output features
  std::int64_t cols = 0;                   // input features (contiguous)
  const void* data = nullptr;

  explicit operator bool() const { return info != nullptr; }
};

// Tensor `name` with GGUF shape [cols] (rows == 0) or [cols, rows].
// kCorruptFile names a missing (non-optional) tensor or a wrong shape;
// kUnsupported a type Hearth cannot compute with (f32_only: anything but F32).
Result<WeightRef> bind_tensor(const gguf::GgufFile& f, const std::string& name, std::int64_t cols, std::int64_t rows,
                              bool optional, bool f32_only);

// Key `key` as an unsigned integer in 1..max (kCorruptFile otherwise).
Result<std::uint32_t> positive_key(const gguf::GgufFile& f, const std::string& key, std::uint64_t max);

// The bytes of a bound tensor (0 when absent).
inline std::size_t tensor_bytes(const WeightRef& w) {
  return w ? w.info->n_bytes : 0;
}

Result<backend::Matrix> upload_matrix(backend::Ops& ops, const WeightRef& w,
                                      backend::MatrixUse use = backend::MatrixUse::kLinear);
// An empty Vector for an absent optional tensor.
Result<backend::Vector> upload_vector(backend::Ops& ops, const WeightRef& w);

}  // namespace hearth::models
