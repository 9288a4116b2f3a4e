// LlamaCudaModel against LlamaModel (CPU) on the same file.
//
// Tolerances (relative L2 of each logits row): the CPU multiplies quantized
// weights by activations it first quantizes to 8 bits (Q8_0/Q8_K blocks, a
// relative error of about 1/254 per element that grows through the layers),
// while the GPU keeps activations in f32 (GEMV, steps of <= 8 tokens) or f16
// (cuBLAS, larger steps). So quantized weights get 5e-2, and K-quants 8e-2:
// their CPU activations are Q8_K blocks of 256 values under one scale, coarser
// than Q8_0's 32 (measured on the H200: Q4_0 5e-3, Q8_0 2.5e-2, Q6_K 4.9e-2,
// Q4_K_M 5.8e-2, growing with depth of the decode steps). F16 weights, where
// only the GPU's f16 activations (2^-11 relative) and summation order differ,
// get 5e-3 (measured 1.2e-3). FP8 KV stores K and V with a 1/16 relative step:
// 1.5e-1 there (measured 7.7e-2), a sanity bound; its real criterion is
// perplexity, measured elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <ostream>

#include "cuda_test_support.h"
#include "engine/tokenizer/encoder.h"
#include "models/catalog.h"
#include "models/loader.h"
#if defined(HEARTH_HAVE_CUDA)
#include "models/llama/llama_cuda_model.h"
#endif

namespace hearth::models::test {
namespace {

// Three sequences: a 37-token prompt with every position's logits and a
// 5-token one in one step (cuBLAS path), then decode steps of 2-3 tokens
// (GEMV path), a third prompt of 9 tokens joining mid-way (cuBLAS) and its
// 3-token continuation (multi-token GEMV). 4 blocks of 16 per sequence.
std::vector<ScriptedSequence> mixed_script(std::uint32_t n_vocab, std::uint32_t seed) {
  const auto tok = [&](std::size_t n, std::uint32_t s) { return random_tokens(n, n_vocab, seed * 100 + s); };
  std::vector<ScriptedSequence> script(3);
  script[0].blocks = {0, 1, 2, 3};
  script[0].all_logits = true;
  script[0].step_tokens = {tok(37, 1), tok(1, 2), tok(1, 3), tok(1, 4), tok(1, 5)};
  script[1].blocks = {7, 4, 6, 5};  // out of order on purpose
  script[1].step_tokens = {tok(5, 6), tok(1, 7), tok(1, 8), tok(1, 9), tok(1, 10)};
  script[2].blocks = {9, 8, 10, 11};
  script[2].all_logits = true;
  script[2].step_tokens = {{}, {}, tok(9, 11), tok(3, 12), tok(1, 13)};
  return script;
}

void expect_close(const std::vector<std::vector<float>>& gpu, const std::vector<std::vector<float>>& cpu,
                  double tolerance, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double worst = 0.0;
  for (std::size_t r = 0; r < cpu.size(); ++r) {
    const double err = relative_l2(gpu[r], cpu[r]);
    worst = std::max(worst, err);
    EXPECT_LE(err, tolerance) << what << ": logits row " << r;
  }
  std::cout << what << ": " << cpu.size() << " rows, worst relative L2 " << worst << "\n";
}

void compare_logits(const std::filesystem::path& path, bool kv_fp8, double tolerance, const std::string& what) {
  auto pair = load_pair(path, kv_fp8);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  const auto script = mixed_script(pair->cpu.model->hparams().n_vocab, 7);
  auto cpu = run_script(*pair->cpu.model, script);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  auto gpu = run_script(*pair->gpu.model, script);
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  expect_close(*gpu, *cpu, tolerance, what);
}

struct SynthCase {
  const char* arch;
  const char* quant;
  bool kv_fp8;
  double tolerance;
};

void PrintTo(const SynthCase& c, std::ostream* os) {
  *os << c.arch << " " << c.quant << (c.kv_fp8 ? " fp8 KV" : "") << " tol " << c.tolerance;
}

class CudaSyntheticLogits : public ::testing::TestWithParam<SynthCase> {};

TEST_P(CudaSyntheticLogits, MatchCpu) {
  SKIP_WITHOUT_CUDA();
  const SynthCase c = GetParam();
  auto path = write_tiny_model(c.arch, c.quant, 11);
  ASSERT_TRUE(path.ok()) << path.error().message;
  compare_logits(*path, c.kv_fp8, c.tolerance,
                 std::string(c.arch) + " " + c.quant + (c.kv_fp8 ? " fp8 KV" : " f16 KV"));
  std::filesystem::remove(*path);
}

INSTANTIATE_TEST_SUITE_P(
    Types, CudaSyntheticLogits,
    ::testing::Values(SynthCase{"llama", "F16", false, 5e-3}, SynthCase{"qwen2", "F16", false, 5e-3},
                      SynthCase{"llama", "Q4_0", false, 5e-2}, SynthCase{"qwen2", "Q4_0", false, 5e-2},
                      SynthCase{"llama", "Q4_K_M", false, 8e-2}, SynthCase{"qwen2", "Q4_K_M", false, 8e-2},
                      SynthCase{"llama", "Q6_K", false, 8e-2}, SynthCase{"qwen2", "Q8_0", false, 5e-2},
                      SynthCase{"llama", "Q8_0", false, 5e-2}, SynthCase{"llama", "F16", true, 1.5e-1}),
    [](const auto& p) { return std::string(p.param.arch) + "_" + p.param.quant + (p.param.kv_fp8 ? "_fp8" : ""); });

// The default model when installed ($HEARTH_MODELS_DIR on the GPU machine).
std::optional<std::filesystem::path> default_model() {
  auto path = resolve_model(builtin_catalog().default_entry().name);
  if (!path) return std::nullopt;
  return *path;
}

TEST(CudaDefaultModel, LogitsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const auto path = default_model();
  if (!path) GTEST_SKIP() << "the default model is not installed in " << models_dir() << " (set HEARTH_MODELS_DIR)";
  // The CPU side is the loose one here: SmolLM2's outlier channels make its
  // 8-bit activation blocks lose up to 12% against an exact reference (see
  // tests/models/logits_oracle_test.py); the GPU keeps activations in f32/f16.
  // Measured on the H200: worst row 0.121.
  compare_logits(*path, false, 0.15, "default model (Q4_1)");
}

// The default model's shape (9 query heads over 3 KV heads, tied embeddings,
// 49152 tokens) with random Q4_1 weights: covers what the tiny models do not,
// and runs where the real file is not at hand.
TEST(CudaSmolLM2Shape, LogitsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  auto path = write_shaped_model("smollm2-135m", "Q4_1", 3);
  ASSERT_TRUE(path.ok()) << path.error().message;
  compare_logits(*path, false, 5e-2, "synthetic smollm2-135m Q4_1");
  std::filesystem::remove(*path);
}

// Qwen2-7B's shape (3584 wide, 28 layers, 28 query heads over 4 KV heads,
// QKV biases, 152064 tokens) with random Q4_0 weights: a 7B model at its real
// size on the GPU (4.4 GB of weights), against the CPU on the same file.
TEST(CudaQwen2_7BShape, LogitsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  auto path = write_shaped_model("qwen2-7b", "Q4_0", 5);
  ASSERT_TRUE(path.ok()) << path.error().message;
  compare_logits(*path, false, 5e-2, "synthetic qwen2-7b Q4_0");
  std::filesystem::remove(*path);
}

// Greedy decoding of every prompt for `n_new` tokens, batched (the prompts'
// prefills in one step on the cuBLAS path, then one token each: 8 sequences
// on the GEMV path), both models fed the CPU's choice (teacher forcing, so one
// near-tie does not derail the rest). A different GPU choice passes only as a
// near-tie: within `tie` of the top logit on both devices. Every difference is
// printed with both devices' gaps.
void greedy_agrees(const std::filesystem::path& path, const std::vector<std::vector<std::int32_t>>& prompts, int n_new,
                   const std::string& what, float tie) {
  const auto n_prompts = static_cast<int>(prompts.size());
  std::vector<std::vector<std::int32_t>> next = prompts, blocks(prompts.size());
  std::int32_t n_blocks = 0;
  for (int i = 0; i < n_prompts; ++i) {
    const auto need = static_cast<std::int32_t>((prompts[i].size() + static_cast<std::size_t>(n_new) + 15) / 16);
    for (std::int32_t b = 0; b < need; ++b) blocks[i].push_back(n_blocks++);
  }
  auto pair = load_pair(path, false, n_blocks);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  const std::uint32_t n_vocab = pair->cpu.model->hparams().n_vocab;
  std::vector<std::int32_t> pos(prompts.size(), 0);
  int ties = 0;
  for (int step = 0; step < n_new; ++step) {
    std::vector<SequenceStep> steps(prompts.size());
    for (int i = 0; i < n_prompts; ++i) steps[i] = SequenceStep{next[i], pos[i], blocks[i], true, false};
    std::vector<float> cpu(prompts.size() * n_vocab), gpu(prompts.size() * n_vocab);
    auto rc = pair->cpu.model->forward(steps, cpu);
    ASSERT_TRUE(rc.ok()) << rc.error().message;
    auto rg = pair->gpu.model->forward(steps, gpu);
    ASSERT_TRUE(rg.ok()) << rg.error().message;
    for (int i = 0; i < n_prompts; ++i) {
      pos[i] += static_cast<std::int32_t>(next[i].size());
      const float* c = cpu.data() + static_cast<std::ptrdiff_t>(i) * n_vocab;
      const float* g = gpu.data() + static_cast<std::ptrdiff_t>(i) * n_vocab;
      const auto tc = static_cast<std::int32_t>(std::max_element(c, c + n_vocab) - c);
      const auto tg = static_cast<std::int32_t>(std::max_element(g, g + n_vocab) - g);
      if (tc != tg) {
        const float cpu_gap = c[tc] - c[tg], gpu_gap = g[tg] - g[tc];
        const bool near_tie = cpu_gap <= tie && gpu_gap <= tie;
        std::cout << what << ": prompt " << i << " token " << step << ": CPU " << tc << " (" << c[tc] << "), GPU " << tg
                  << " (" << g[tg] << "); top-2 gap " << cpu_gap << " on the CPU, " << gpu_gap << " on the GPU"
                  << (near_tie ? ": near-tie\n" : ": MISMATCH\n");
        EXPECT_TRUE(near_tie) << "prompt " << i << " token " << step;
        ++ties;
      }
      next[i] = {tc};
    }
  }
  EXPECT_LE(ties, n_prompts * n_new / 10) << "too many near-ties";
  std::cout << what << ": " << n_prompts << " x " << n_new << " greedy tokens, " << ties << " differing\n";
}

TEST(CudaGreedy, SyntheticMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  auto path = write_tiny_model("llama", "Q4_0", 23);
  ASSERT_TRUE(path.ok()) << path.error().message;
  std::vector<std::vector<std::int32_t>> prompts;
  for (int i = 0; i < 8; ++i) {
    prompts.push_back(random_tokens(static_cast<std::size_t>(5 + 9 * i), 600, static_cast<std::uint32_t>(40 + i)));
  }
  greedy_agrees(*path, prompts, 64, "synthetic llama Q4_0", 0.1f);
  std::filesystem::remove(*path);
}

// Eight chat prompts in the default model's ChatML format.
std::vector<std::vector<std::int32_t>> chat_prompts(const std::filesystem::path& path) {
  const char* const questions[] = {
      "What is the capital of France?",           "Write a haiku about the sea.",
      "Explain photosynthesis in one paragraph.", "List three uses of a paperclip.",
      "How do I reverse a list in Python?",       "What causes the seasons on Earth?",
      "Give me a short recipe for pancakes.",     "Translate 'good morning' into Spanish and German."};
  LoadOptions cpu;
  cpu.device = "cpu";
  auto bundle = load_model(path, cpu);
  EXPECT_TRUE(bundle.ok()) << (bundle.ok() ? "" : bundle.error().message);
  std::vector<std::vector<std::int32_t>> prompts;
  if (!bundle) return prompts;
  for (const char* q : questions) {
    const std::string text = std::string("<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n") +
                             "<|im_start|>user\n" + q + "<|im_end|>\n<|im_start|>assistant\n";
    auto ids = tokenizer::encode(bundle->vocabulary, text, tokenizer::EncodeOptions{true, true});
    EXPECT_TRUE(ids.ok()) << (ids.ok() ? "" : ids.error().message);
    if (ids) prompts.push_back(std::move(ids).value());
  }
  return prompts;
}

TEST(CudaGreedy, DefaultModelMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const auto path = default_model();
  if (!path) GTEST_SKIP() << "the default model is not installed in " << models_dir() << " (set HEARTH_MODELS_DIR)";
  const auto prompts = chat_prompts(*path);
  ASSERT_EQ(prompts.size(), 8u);
  // The CPU's 8-bit activation blocks move this model's logits by up to 12%
  // (relative L2) against an exact reference: about 2 logits at the top of a
  // distribution whose top logits sit near 20. Measured on the H200 (4 random
  // prompts x 32 tokens, teacher forcing): 3 gaps under 0.3 and one of 1.55
  // (CPU 378 at 19.02 vs GPU <|im_end|> at 20.56). A gap above 2 logits is a bug.
  greedy_agrees(*path, prompts, 64, "default model", 2.0f);
}

#if defined(HEARTH_HAVE_CUDA)
TEST(CudaModel, ReportsMemoryAndRejectsBadSteps) {
  SKIP_WITHOUT_CUDA();
  auto path = write_tiny_model("qwen2", "Q8_0", 5);
  ASSERT_TRUE(path.ok()) << path.error().message;
  auto pair = load_pair(*path, false, 8);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  Model& gpu = *pair->gpu.model;
  const ModelMemory mem = gpu.memory();
  // The CPU counts every tensor of the file; the GPU uploads those the forward pass reads.
  const std::size_t file_bytes = pair->cpu.model->memory().weights_bytes;
  EXPECT_LE(mem.weights_bytes, file_bytes);
  EXPECT_GE(mem.weights_bytes, file_bytes * 9 / 10);
  EXPECT_EQ(mem.kv_bytes, 8 * gpu.kv_block_bytes(16));
  auto info = dynamic_cast<LlamaCudaModel&>(gpu).device_memory();
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_GT(info->total_bytes, 0u);
  EXPECT_LE(info->free_bytes, info->total_bytes);
  const std::vector<std::int32_t> bad{static_cast<std::int32_t>(gpu.hparams().n_vocab)}, blocks{0};
  std::vector<SequenceStep> steps{SequenceStep{bad, 0, blocks, true, false}};
  std::vector<float> logits(gpu.hparams().n_vocab);
  auto r = gpu.forward(steps, logits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  // A KV pool far beyond the device's memory is a clean kOutOfMemory; the
  // model stays usable with a smaller pool.
  const auto huge = static_cast<std::int32_t>(
      std::min<std::size_t>(info->total_bytes / gpu.kv_block_bytes(16) * 2, std::size_t{1} << 30));
  auto oom = gpu.allocate_kv(KvLayout{huge, 16});
  ASSERT_FALSE(oom.ok());
  EXPECT_EQ(oom.error().code, ErrorCode::kOutOfMemory) << oom.error().message;
  ASSERT_TRUE(gpu.allocate_kv(KvLayout{8, 16}).ok());
  const std::vector<std::int32_t> good{1, 2, 3};
  steps[0].tokens = good;
  EXPECT_TRUE(gpu.forward(steps, logits).ok());
  std::filesystem::remove(*path);
}
#endif

TEST(DeviceChoice, ParsesAndResolves) {
  EXPECT_FALSE(choose_device("cpu")->cuda);
  EXPECT_EQ(choose_device("gpu").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(choose_device("cuda:x").error().code, ErrorCode::kInvalidArgument);
  const bool usable = cuda_skip_reason().empty();
  EXPECT_EQ(choose_device("auto")->cuda, usable);
#if defined(HEARTH_HAVE_CUDA)
  EXPECT_EQ(choose_device("cuda:3")->cuda_device, 3);
  EXPECT_TRUE(choose_device("cuda")->cuda);
#else
  EXPECT_EQ(choose_device("cuda").error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(choose_device("cuda:0").error().code, ErrorCode::kUnsupported);
#endif
}

}  // namespace
}  // namespace hearth::models::test
