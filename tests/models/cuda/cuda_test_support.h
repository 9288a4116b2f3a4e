// Helpers of the CUDA-vs-CPU model tests: device detection, synthetic model
// files, a CPU and a GPU instance of the same file, and a scripted run of
// forward steps over several sequences.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hearth/engine.h"
#include "hearth/result.h"

namespace hearth::models::test {

// "" when a CUDA device is usable; else why the GPU tests skip.
std::string cuda_skip_reason();

// Skips the calling test, with the reason, where there is no usable GPU.
#define SKIP_WITHOUT_CUDA()                                                            \
  do {                                                                                 \
    if (const std::string why = cuda_skip_reason(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// A small synthetic model (width 256, 2 layers, 4 heads, 2 KV heads, head_dim 64,
// FFN 512, 600 tokens) in a temporary file, removed by the caller.
Result<std::filesystem::path> write_tiny_model(const std::string& arch, const std::string& quant, std::uint64_t seed);
// A synthetic model of a named shape (models/synthetic.h), e.g. "smollm2-135m".
Result<std::filesystem::path> write_shaped_model(const std::string& shape, const std::string& quant,
                                                 std::uint64_t seed);

struct ModelPair {
  ModelBundle cpu, gpu;
};
// Loads `path` on the CPU and on CUDA device 0 and gives both a KV pool of
// `num_blocks` blocks of 16 tokens.
Result<ModelPair> load_pair(const std::filesystem::path& path, bool kv_fp8, std::int32_t num_blocks = 64);

// ||a - b|| / ||b|| over equal-length rows.
double relative_l2(std::span<const float> a, std::span<const float> b);

// One sequence of a scripted run: its KV blocks and the tokens of each step
// (empty: the sequence sits that step out).
struct ScriptedSequence {
  std::vector<std::int32_t> blocks;
  std::vector<std::vector<std::int32_t>> step_tokens;
  bool all_logits = false;  // every new token's logits, not only the last
};

// Runs the script on `model`; returns the logits rows in order (step by step,
// sequence by sequence), each n_vocab floats.
Result<std::vector<std::vector<float>>> run_script(Model& model, std::span<const ScriptedSequence> script);

// `count` token ids in [0, n_vocab), from `seed`.
std::vector<std::int32_t> random_tokens(std::size_t count, std::uint32_t n_vocab, std::uint32_t seed);

}  // namespace hearth::models::test
