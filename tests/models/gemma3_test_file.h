// A tiny random Gemma 3 GGUF for the C++ model tests (the CUDA-vs-CPU test,
// the load refusals): 256 wide, 6 layers (layer 5 global), 2 heads of 128
// (q 256 wide), 1 KV head, FFN 512, vocab 600, a sliding window of 8, matrices
// of one ggml type (quantized from random normals by the CPU kernels), F32
// norms near 1, a SentencePiece-style vocabulary. Written with engine/gguf's
// writer; `edit` may change the writer before the file is written (crafted
// files: another architecture, a tensor of an unsupported type).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "engine/gguf/ggml_types.h"
#include "engine/gguf/gguf_writer.h"
#include "hearth/result.h"

namespace hearth::models::test {

struct TinyGemma3 {
  gguf::GgmlType matrix_type = gguf::GgmlType::kF16;
  std::uint64_t seed = 1;
  std::string architecture = "gemma3";
  // Tensors given another type (name -> type): written as random bytes of that type's size.
  std::function<gguf::GgmlType(const std::string& name, gguf::GgmlType type)> tensor_type;
};

inline constexpr std::uint32_t kTinyGemma3Vocab = 600;
inline constexpr std::int32_t kTinyGemma3Window = 8;

Result<void> write_tiny_gemma3(const TinyGemma3& spec, const std::filesystem::path& path);

}  // namespace hearth::models::test
