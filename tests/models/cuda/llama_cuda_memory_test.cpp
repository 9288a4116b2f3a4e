// The CUDA model's memory: the device's free/total in memory(), the VRAM
// budget at load, for the KV pool and for a step's workspace, allocation
// failures as kOutOfMemory (never a crash), and the per-layer timings. Label
// `gpu`; every test skips with a message where no CUDA device exists.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>

#include "cuda_test_support.h"
#include "models/catalog.h"
#include "models/loader.h"
#if defined(HEARTH_HAVE_CUDA)
#include "engine/backend/cuda/cuda_context.h"
#include "engine/backend/cuda/device_buffer.h"
#include "engine/gguf/gguf_file.h"
#include "models/llama/llama_cuda_model.h"
#endif

namespace hearth::models::test {
namespace {

#if defined(HEARTH_HAVE_CUDA)

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

Result<std::unique_ptr<LlamaCudaModel>> load_cuda(const std::filesystem::path& path, const LlamaCudaOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path));
  return LlamaCudaModel::load(std::move(file), options);
}

// A tiny model file for one test, removed with it.
class TinyFile {
 public:
  TinyFile() {
    auto p = write_tiny_model("llama", "Q4_0", 17);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    if (p) path_ = *p;
  }
  ~TinyFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Bytes of the tiny model's weights on the GPU (no budget).
std::size_t gpu_weight_bytes(const std::filesystem::path& path) {
  auto model = load_cuda(path, {});
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return model ? (*model)->memory().weights_bytes : 0;
}

TEST(CudaMemory, ModelReportsTheDevicesFreeAndTotal) {
  SKIP_WITHOUT_CUDA();
  TinyFile file;
  auto model = load_cuda(file.path(), {});
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_TRUE((*model)->allocate_kv(KvLayout{64, 16}).ok());
  const ModelMemory m = (*model)->memory();
  ASSERT_GT(m.device_total, 0u);
  EXPECT_LE(m.device_free, m.device_total);
  // Refreshed after the KV allocation: what the model holds is in use.
  EXPECT_GE(m.device_total - m.device_free, m.weights_bytes + m.kv_bytes);
  // Cost (printed, not asserted): the driver call, and memory() with its cache.
  const cuda::CudaContext& ctx = (*model)->context();
  constexpr int kCalls = 1000;
  auto t0 = Clock::now();
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(ctx.memory_info().ok());
  const double driver_us = us_since(t0) / kCalls;
  t0 = Clock::now();
  for (int i = 0; i < kCalls; ++i) EXPECT_GT((*model)->memory().device_total, 0u);
  const double cached_us = us_since(t0) / kCalls;
  std::cout << "cudaMemGetInfo (with cudaSetDevice): " << driver_us << " us a call; memory(), cached: " << cached_us
            << " us a call\n";
}

TEST(CudaBudget, WeightsOverTheBudgetFailTheLoadNamingTheBytes) {
  SKIP_WITHOUT_CUDA();
  TinyFile file;
  const std::size_t weights = gpu_weight_bytes(file.path());
  ASSERT_GT(weights, 0u);
  LlamaCudaOptions options;
  options.vram_budget_bytes = weights - 1;
  auto over = load_cuda(file.path(), options);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kOutOfMemory);
  const std::string& msg = over.error().message;
  EXPECT_NE(msg.find("the weights need " + std::to_string(weights) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("budget is " + std::to_string(weights - 1) + " bytes"), std::string::npos) << msg;
  // Exactly the weights: the load fits, and then no KV block does.
  options.vram_budget_bytes = weights;
  auto exact = load_cuda(file.path(), options);
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ((*exact)->memory().weights_bytes, weights);
  auto kv = (*exact)->allocate_kv(KvLayout{1, 16});
  ASSERT_FALSE(kv.ok());
  EXPECT_EQ(kv.error().code, ErrorCode::kOutOfMemory);
  EXPECT_NE(kv.error().message.find(std::to_string((*exact)->kv_block_bytes(16)) + " bytes"), std::string::npos)
      << kv.error().message;
}

TEST(CudaBudget, AutoRunsTheModelOnTheCpuWhenTheWeightsExceedTheBudget) {
  SKIP_WITHOUT_CUDA();
  TinyFile file;
  const std::size_t weights = gpu_weight_bytes(file.path());
  LoadOptions load;
  load.device = "auto";
  load.vram_budget_bytes = weights - 1;
  auto cpu = load_model(file.path(), load);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  EXPECT_EQ(dynamic_cast<LlamaCudaModel*>(cpu->model.get()), nullptr);
  EXPECT_EQ(cpu->model->memory().device_total, 0u);
  // An explicit "cuda" does not fall back: the error reaches the caller.
  load.device = "cuda:0";
  auto gpu_only = load_model(file.path(), load);
  ASSERT_FALSE(gpu_only.ok());
  EXPECT_EQ(gpu_only.error().code, ErrorCode::kOutOfMemory);
  // A budget with room: "auto" takes the GPU.
  load.device = "auto";
  load.vram_budget_bytes = weights + (std::size_t{64} << 20);
  auto gpu = load_model(file.path(), load);
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  EXPECT_NE(dynamic_cast<LlamaCudaModel*>(gpu->model.get()), nullptr);
}

Result<void> one_step(Model& model, std::span<const std::int32_t> tokens, std::span<const std::int32_t> blocks,
                      std::vector<float>& logits) {
  logits.assign(model.hparams().n_vocab, 0.0f);
  const std::vector<SequenceStep> steps{SequenceStep{tokens, 0, blocks, true, false}};
  return model.forward(steps, logits);
}

// The workspace grows with a step's token count (f32 activations per token);
// a budget with 1 MiB for it holds a small step's (~150 KB for this model)
// but not a 500-token prefill's (~4.6 MB).
TEST(CudaBudget, AStepWhoseWorkspaceExceedsTheBudgetFailsAndTheNextSmallStepRuns) {
  SKIP_WITHOUT_CUDA();
  TinyFile file;
  const std::size_t weights = gpu_weight_bytes(file.path());
  LlamaCudaOptions options;
  auto probe = load_cuda(file.path(), options);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  const std::size_t block_bytes = (*probe)->kv_block_bytes(16);
  probe->reset();
  constexpr std::int32_t kBlocks = 40;
  options.vram_budget_bytes = weights + kBlocks * block_bytes + (std::size_t{1} << 20);
  auto loaded = load_cuda(file.path(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  Model& model = **loaded;
  // A pool past the budget fails; one within it then fits.
  const auto too_many = static_cast<std::int32_t>(kBlocks + (std::size_t{1} << 20) / block_bytes + 1);
  auto big_pool = model.allocate_kv(KvLayout{too_many, 16});
  ASSERT_FALSE(big_pool.ok());
  EXPECT_EQ(big_pool.error().code, ErrorCode::kOutOfMemory) << big_pool.error().message;
  ASSERT_TRUE(model.allocate_kv(KvLayout{kBlocks, 16}).ok());

  const std::vector<std::int32_t> small = random_tokens(3, model.hparams().n_vocab, 5);
  const std::vector<std::int32_t> blocks_a{0}, blocks_b{1};
  std::vector<float> first, again;
  ASSERT_TRUE(one_step(model, small, blocks_a, first).ok());
  const std::vector<std::int32_t> big = random_tokens(500, model.hparams().n_vocab, 6);
  std::vector<std::int32_t> big_blocks;
  for (std::int32_t b = 2; b < 2 + 32; ++b) big_blocks.push_back(b);
  std::vector<float> unused;
  auto r = one_step(model, big, big_blocks, unused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfMemory);
  EXPECT_NE(r.error().message.find("500-token step"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(std::to_string(options.vram_budget_bytes)), std::string::npos) << r.error().message;
  EXPECT_TRUE(model.last_layer_ms().empty());
  // The model is intact: the same small step elsewhere gives the same logits
  // (same kernels, same sizes: bit for bit).
  ASSERT_TRUE(one_step(model, small, blocks_b, again).ok());
  EXPECT_EQ(first, again);
  const ModelMemory m = model.memory();
  EXPECT_LE(m.weights_bytes + m.kv_bytes + m.workspace_bytes, options.vram_budget_bytes);
}

TEST(CudaMemory, AnImpossibleAllocationIsOutOfMemoryNotACrash) {
  SKIP_WITHOUT_CUDA();
  auto ctx = cuda::CudaContext::create(0);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  constexpr std::size_t kPiB = std::size_t{1} << 50;
  auto huge = cuda::DeviceBuffer::allocate(kPiB, "a petabyte");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::kOutOfMemory) << huge.error().message;
  EXPECT_NE(huge.error().message.find(std::to_string(kPiB)), std::string::npos) << huge.error().message;
  EXPECT_NE(huge.error().message.find("a petabyte"), std::string::npos) << huge.error().message;
  // The failure is not sticky: the device still allocates and synchronizes.
  auto small = cuda::DeviceBuffer::allocate(std::size_t{1} << 20, "a mebibyte");
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_TRUE((*ctx)->synchronize().ok());
}

TEST(CudaModel, TimesLayersOnOneStepInN) {
  SKIP_WITHOUT_CUDA();
  TinyFile file;
  LlamaCudaOptions options;
  options.layer_timing_interval = 3;
  auto loaded = load_cuda(file.path(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  Model& model = **loaded;
  ASSERT_TRUE(model.allocate_kv(KvLayout{8, 16}).ok());
  const std::vector<std::int32_t> blocks{0, 1, 2, 3};
  std::vector<float> logits(model.hparams().n_vocab);
  std::int32_t pos = 0;
  for (int step = 0; step < 6; ++step) {
    const std::vector<std::int32_t> tokens = random_tokens(step == 0 ? 20 : 1, model.hparams().n_vocab, 30 + step);
    const std::vector<SequenceStep> steps{SequenceStep{tokens, pos, blocks, true, false}};
    pos += static_cast<std::int32_t>(tokens.size());
    const auto t0 = Clock::now();
    ASSERT_TRUE(model.forward(steps, logits).ok());
    const double wall_ms = us_since(t0) / 1000.0;
    const std::span<const double> layers = model.last_layer_ms();
    if (step % 3 != 0) {
      EXPECT_TRUE(layers.empty()) << "step " << step;
      continue;
    }
    ASSERT_EQ(layers.size(), model.hparams().n_layer) << "step " << step;
    double sum = 0;
    for (const double ms : layers) {
      EXPECT_TRUE(std::isfinite(ms));
      EXPECT_GE(ms, 0.0);
      sum += ms;
    }
    // The events lie inside forward(), which returns after synchronizing.
    EXPECT_LE(sum, wall_ms) << "step " << step;
  }
  const std::vector<std::int32_t> bad{static_cast<std::int32_t>(model.hparams().n_vocab)};
  const std::vector<SequenceStep> steps{SequenceStep{bad, pos, blocks, true, false}};
  EXPECT_FALSE(model.forward(steps, logits).ok());
  EXPECT_TRUE(model.last_layer_ms().empty());
}

// What the events cost (printed, not asserted): decode steps of the default
// model with every step timed against none.
TEST(CudaModel, LayerTimingCost) {
  SKIP_WITHOUT_CUDA();
  const auto path = resolve_model(builtin_catalog().default_entry().name);
  if (!path) GTEST_SKIP() << "the default model is not installed in " << models_dir() << " (set HEARTH_MODELS_DIR)";
  double per_step_us[2] = {0, 0};
  for (const int interval : {0, 1}) {
    LlamaCudaOptions options;
    options.layer_timing_interval = interval;
    auto loaded = load_cuda(*path, options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    Model& model = **loaded;
    ASSERT_TRUE(model.allocate_kv(KvLayout{16, 16}).ok());
    std::vector<std::int32_t> blocks;
    for (std::int32_t b = 0; b < 16; ++b) blocks.push_back(b);
    std::vector<float> logits(model.hparams().n_vocab);
    constexpr int kWarm = 8, kSteps = 200;
    Clock::time_point t0;
    for (int step = 0; step < kWarm + kSteps; ++step) {
      if (step == kWarm) t0 = Clock::now();
      const std::vector<std::int32_t> token{1 + step % 100};
      const std::vector<SequenceStep> steps{SequenceStep{token, step, blocks, true, false}};
      ASSERT_TRUE(model.forward(steps, logits).ok());
    }
    per_step_us[interval] = us_since(t0) / kSteps;
  }
  std::cout << "default model decode step: " << per_step_us[0] << " us untimed, " << per_step_us[1]
            << " us with per-layer events (" << 100.0 * (per_step_us[1] / per_step_us[0] - 1.0) << "%)\n";
}

#else

TEST(CudaMemory, NeedsCuda) {
  GTEST_SKIP() << cuda_skip_reason();
}

#endif

}  // namespace
}  // namespace hearth::models::test
