// The handles the backend op interface (ops.h) works with: weights, vectors
// and step activations in the backend's memory. Models never dereference them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hearth::backend {

// A weight matrix in the backend's memory, in its GGUF block layout: `rows`
// rows of `cols` elements of ggml `type`, rows `row_stride` bytes apart.
// data: the file mapping (CPU) or device memory (CUDA); models never read it.
struct Matrix {
  std::uint32_t type = 0;  // ggml type id
  const void* data = nullptr;
  std::int64_t rows = 0;  // output features
  std::int64_t cols = 0;  // input features (contiguous)
  std::size_t row_stride = 0;
  explicit operator bool() const { return data != nullptr; }
};

// An f32 vector [n] in the backend's memory (norm weights, biases); empty when absent.
struct Vector {
  const float* data = nullptr;
  std::int64_t n = 0;
  explicit operator bool() const { return data != nullptr; }
};

// A tensor of the file mapping, to be uploaded: [rows][cols] of `type`, `bytes` long.
struct HostTensor {
  std::string_view name;  // for error messages
  std::uint32_t type = 0;
  std::int64_t rows = 1;
  std::int64_t cols = 0;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// A step's activation buffer [n_tokens][width] f32 in the backend's memory.
struct Activation {
  float* data = nullptr;
  std::int64_t width = 0;  // floats per token
  // The same buffer from token row `t` on.
  Activation from_row(std::int64_t t) const { return Activation{data + t * width, width}; }
};
using ActivationId = std::uint32_t;

}  // namespace hearth::backend
