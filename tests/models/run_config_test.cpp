// models::RunConfig, plan() and open_engine() on synthetic models: the plan
// against what the engine really allocates on the CPU, the weight format the
// engine reports for several kinds of file, and the device and KV precision
// choices ("auto" without a GPU; every KV precision on every device).
#include "models/run_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>

#include <unistd.h>

#include "engine/gguf/gguf_writer.h"
#include "hearth/devices.h"
#include "models/synthetic.h"
#include "models/weight_format.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;
using gguf::GgmlType;

fs::path write_model(const std::string& quant, std::uint32_t width = 256) {
  SyntheticSpec spec;
  spec.shape = {"custom", width, 2, 4, 2, 512, 300, 1024, 10000.0f, 1e-5f, false};
  spec.quant = parse_synthetic_quant(quant).value();
  const fs::path path = fs::temp_directory_path() / ("hearth-runconfig-" + quant + "-" + std::to_string(width) + "-" +
                                                     std::to_string(::getpid()) + ".gguf");
  const Result<void> written = write_synthetic_model(spec, path);
  EXPECT_TRUE(written.ok()) << written.error().describe();
  return path;
}

bool have_gpu() {
  return list_devices().size() > 1;
}

class WaitSink final : public Sink {
 public:
  void on_text(const TextEvent&) override {}
  void on_finish(const FinishEvent& e) override {
    std::lock_guard lock(mu_);
    finish_ = e;
    cv_.notify_all();
  }
  FinishEvent wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return finish_.has_value(); });
    return *finish_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<FinishEvent> finish_;
};

void expect_within(std::size_t planned, std::size_t actual, double tolerance, const char* what) {
  ASSERT_GT(actual, 0u) << what;
  const double ratio = static_cast<double>(planned) / static_cast<double>(actual);
  std::printf("%-10s planned %10zu bytes, allocated %10zu bytes (%.4f)\n", what, planned, actual, ratio);
  EXPECT_NEAR(ratio, 1.0, tolerance) << what << ": planned " << planned << ", allocated " << actual;
}

TEST(RunPlan, MatchesTheCpuAllocationsWithinFivePercent) {
  const fs::path path = write_model("Q4_0");
  RunConfig config;
  config.device = "cpu";
  config.threads = 2;
  config.context_length = 512;
  config.max_batch_tokens = 64;
  const Result<RunPlan> planned = plan(path, config);
  ASSERT_TRUE(planned.ok()) << planned.error().describe();
  EXPECT_EQ(planned->context_length, 512);
  EXPECT_EQ(planned->kv_blocks, 2 * 512 / 16);
  EXPECT_EQ(planned->weight_format, "Q4_0");

  Result<OpenedEngine> opened = open_engine(path.string(), config);
  ASSERT_TRUE(opened.ok()) << opened.error().describe();
  // One prompt longer than a step: the first step is a full max_batch_tokens
  // chunk, the step the workspace is planned for.
  Request r;
  for (int i = 0; i < 150; ++i) r.prompt_tokens.push_back(10 + i);
  r.max_tokens = 1;
  auto sink = std::make_shared<WaitSink>();
  opened->engine->submit(r, sink);
  ASSERT_EQ(sink->wait().reason, FinishReason::kLength);
  const MemoryByCategory m = opened->engine->stats().memory;
  const RunPlan& p = *planned;
  expect_within(p.weights_bytes, m.weights, 0.05, "weights");
  expect_within(p.kv_bytes, m.kv_pool, 0.05, "KV pool");
  expect_within(p.workspace_bytes, m.workspace, 0.05, "workspace");
  expect_within(p.total_bytes(), m.weights + m.kv_pool + m.workspace, 0.05, "total");
  EXPECT_EQ(opened->plan.kv_bytes, p.kv_bytes);
}

TEST(RunPlan, KvPoolFollowsPrecisionBudgetAndBlockSize) {
  const fs::path path = write_model("F16");
  const std::unique_ptr<gguf::GgufFile> file = gguf::GgufFile::open(path).value();
  RunConfig config;
  config.context_length = 256;
  const RunPlan f16 = plan(*file, config, "cuda:0").value();
  // 2 (K, V) x 2 layers x 16 tokens x 2 KV heads x 64 head dim x 2 bytes.
  EXPECT_EQ(f16.kv_block_bytes, 2u * 2 * 16 * 2 * 64 * 2);
  config.kv_precision = KvPrecision::kFp8E4M3;
  EXPECT_EQ(plan(*file, config, "cuda:0").value().kv_block_bytes, f16.kv_block_bytes / 2);
  // Every device runs every precision: fp8 is one byte a value on the CPU too.
  EXPECT_EQ(plan(*file, config, "cpu").value().kv_block_bytes, f16.kv_block_bytes / 2);
  config.kv_budget_bytes = 10 * f16.kv_block_bytes + 1;
  config.kv_precision = KvPrecision::kF16;
  EXPECT_EQ(plan(*file, config, "cpu").value().kv_blocks, 10);
  config.kv_budget_bytes = 0;
  config.kv_precision = KvPrecision::kQ8_0;  // 34 bytes per 32 elements on both
  EXPECT_EQ(plan(*file, config, "cpu").value().kv_block_bytes, f16.kv_block_bytes / 64 * 34);
  EXPECT_EQ(plan(*file, config, "cuda:0").value().kv_block_bytes, f16.kv_block_bytes / 64 * 34);
}

// The format the engine reports comes from general.file_type and the tensors.
TEST(WeightFormat, EngineReportsTheFormatOfSyntheticFiles) {
  const struct {
    const char* quant;
    std::uint32_t width;
    const char* expected;
  } cases[] = {
      {"F16", 256, "F16"},
      {"Q4_0", 256, "Q4_0"},
      {"Q8_0", 256, "Q8_0"},
      {"Q4_1", 256, "Q4_1"},
      {"Q4_K_M", 256, "Q4_K_M"},
      {"Q5_K", 256, "Q5_K_S"},
      {"BF16", 256, "BF16"},
      // 576 wide: no row is a multiple of 256, so Q4_K fell back to Q5_0; still Q4_K_M.
      {"Q4_K_M", 576, "Q4_K_M"},
  };
  for (const auto& c : cases) {
    const fs::path path = write_model(c.quant, c.width);
    RunConfig config;
    config.device = "cpu";
    config.threads = 1;
    config.context_length = 64;
    Result<OpenedEngine> opened = open_engine(path.string(), config);
    ASSERT_TRUE(opened.ok()) << c.quant << ": " << opened.error().describe();
    EXPECT_EQ(opened->engine->run_info().weight_format, c.expected) << c.quant << " " << c.width;
    EXPECT_EQ(opened->engine->run_info().kv_precision, KvPrecision::kF16);
    EXPECT_EQ(opened->engine->run_info().device, "cpu");
  }
}

std::unique_ptr<gguf::GgufFile> file_with(std::optional<std::uint32_t> file_type, GgmlType matrices) {
  gguf::GgufWriter w;
  if (file_type) w.add_scalar<std::uint32_t>("general.file_type", *file_type);
  const auto traits = kernels::type_traits(matrices);
  const std::size_t row = 256 / traits->block_elems * traits->block_bytes;  // 256: every block size divides it
  w.add_tensor("a.weight", matrices, {256, 4}, std::vector<std::byte>(row * 4, std::byte{0}));
  w.add_tensor("b.weight", matrices, {256, 2}, std::vector<std::byte>(row * 2, std::byte{0}));
  w.add_tensor("norm.weight", GgmlType::kF32, {256}, std::vector<std::byte>(1024, std::byte{0}));
  static std::vector<std::vector<std::byte>> keep;  // parse() reads the bytes in place
  keep.push_back(w.to_bytes().value());
  return gguf::GgufFile::parse(keep.back()).value();
}

TEST(WeightFormat, TensorsOverruleAMissingOrWrongFileType) {
  EXPECT_EQ(weight_format_of(*file_with(std::nullopt, GgmlType::kQ8_0)), "Q8_0");
  EXPECT_EQ(weight_format_of(*file_with(2u, GgmlType::kQ8_0)), "Q8_0");  // says Q4_0: the tensors are Q8_0
  EXPECT_EQ(weight_format_of(*file_with(2u, GgmlType::kQ4_0)), "Q4_0");
  EXPECT_EQ(weight_format_of(*file_with(15u, GgmlType::kQ4_K)), "Q4_K_M");
  EXPECT_EQ(weight_format_of(*file_with(999u, GgmlType::kQ4_1)), "Q4_1");  // an unknown file type
}

TEST(OpenEngine, AutoWithoutAGpuRunsOnTheCpuAndSaysWhy) {
  if (have_gpu()) GTEST_SKIP() << "a CUDA device is present";
  const fs::path path = write_model("Q4_0");
  RunConfig config;
  config.threads = 1;
  config.context_length = 64;
  ASSERT_EQ(config.device, "auto");
  Result<OpenedEngine> opened = open_engine(path.string(), config);
  ASSERT_TRUE(opened.ok()) << opened.error().describe();
  const ModelRunInfo& run = opened->engine->run_info();
  EXPECT_EQ(run.device, "cpu");
  EXPECT_EQ(run.device_reason.rfind("auto: ", 0), 0u) << run.device_reason;
  EXPECT_NE(run.device_reason.find("CUDA"), std::string::npos) << run.device_reason;

  config.device = "cpu";  // asked for: no reason to give
  opened = open_engine(path.string(), config);
  ASSERT_TRUE(opened.ok()) << opened.error().describe();
  EXPECT_EQ(opened->engine->run_info().device, "cpu");
  EXPECT_EQ(opened->engine->run_info().device_reason, "");
}

// With a GPU (the H200 runs; skipped elsewhere): "auto" picks it for a model
// that fits, runs the asked-for fp8 KV cache there, and the plan's weights and
// KV pool match what the device holds; a budget below the plan sends "auto"
// to the CPU and says so.
TEST(OpenEngine, AutoWithAGpuRunsOnItAndPlansItsMemory) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const fs::path path = write_model("Q4_0");
  RunConfig config;
  config.context_length = 256;
  config.kv_precision = KvPrecision::kFp8E4M3;
  Result<OpenedEngine> opened = open_engine(path.string(), config);
  ASSERT_TRUE(opened.ok()) << opened.error().describe();
  const ModelRunInfo& run = opened->engine->run_info();
  EXPECT_EQ(run.device, "cuda:0");
  EXPECT_EQ(run.kv_precision, KvPrecision::kFp8E4M3);
  EXPECT_NE(run.device_reason.find("free"), std::string::npos) << run.device_reason;
  const MemoryByCategory m = opened->engine->stats().memory;
  expect_within(opened->plan.weights_bytes, m.weights, 0.05, "GPU weights");
  expect_within(opened->plan.kv_bytes, m.kv_pool, 0.05, "GPU KV pool");

  config.memory_budget_bytes = opened->plan.total_bytes() / 2;
  opened = open_engine(path.string(), config);
  ASSERT_TRUE(opened.ok()) << opened.error().describe();
  EXPECT_EQ(opened->engine->run_info().device, "cpu");
  EXPECT_NE(opened->engine->run_info().device_reason.find("budget"), std::string::npos)
      << opened->engine->run_info().device_reason;
}

// Every device runs every KV precision, and its pool is the planned size
// (CUDA rounds each layer's K and V up to 256 bytes: 2 pools x 2 layers).
TEST(OpenEngine, EveryKvPrecisionRunsOnEveryDeviceAtThePlannedSize) {
  const fs::path path = write_model("Q4_0");
  RunConfig config;
  config.threads = 1;
  config.context_length = 64;
  std::vector<std::string> devices = {"cpu"};
  if (have_gpu()) devices.push_back("cuda");
  for (const std::string& device : devices) {
    for (KvPrecision kv : {KvPrecision::kF16, KvPrecision::kQ8_0, KvPrecision::kFp8E4M3}) {
      SCOPED_TRACE(device + " " + to_string(kv));
      config.device = device;
      config.kv_precision = kv;
      Result<OpenedEngine> e = open_engine(path.string(), config);
      ASSERT_TRUE(e.ok()) << e.error().describe();
      EXPECT_EQ(e->engine->run_info().kv_precision, kv);
      const auto pool = static_cast<double>(e->engine->stats().memory.kv_pool);
      EXPECT_NEAR(pool, static_cast<double>(e->plan.kv_bytes), device == "cpu" ? 0.0 : 2.0 * 2 * 256);
    }
  }
}

TEST(RunConfig, ValidateNamesTheBadField) {
  RunConfig c;
  c.device = "gpu";
  EXPECT_EQ(validate(c).error().code, ErrorCode::kInvalidArgument);
  // A GPU's plan is valid whatever this build runs (a CPU-only build sizes
  // one for the recommendation); loading it is where the build matters.
  for (const char* d : {"cuda", "cuda:0", "cuda:3", "auto", "cpu"}) {
    c.device = d;
    EXPECT_TRUE(validate(c).ok()) << d;
  }
  c.device = "cuda:x";
  EXPECT_EQ(validate(c).error().code, ErrorCode::kInvalidArgument);
  c = {};
  c.max_sequences = 0;
  EXPECT_NE(validate(c).error().message.find("max_sequences"), std::string::npos);
  c = {};
  EXPECT_TRUE(validate(c).ok());
  // Tokens per step: the device's default unless set.
  EXPECT_EQ(engine_options(c, "cpu").max_batch_tokens, 256);
  EXPECT_EQ(engine_options(c, "cuda:0").max_batch_tokens, 512);
  c.max_batch_tokens = 100;
  EXPECT_EQ(engine_options(c, "cuda:0").max_batch_tokens, 100);
  c.max_batch_tokens = -1;
  EXPECT_NE(validate(c).error().message.find("max_batch_tokens"), std::string::npos);
  c = {};
  const LoadOptions l = load_options(c, "cpu");
  EXPECT_EQ(l.device, "cpu");
  EXPECT_EQ(l.kv_precision, KvPrecision::kF16);
}

TEST(EngineFlags, FoldIntoTheConfiguration) {
  RunConfig base;
  base.threads = 3;
  EngineFlags f;
  f.kv = "fp8";
  f.vram_budget_mib = 1500;
  f.q8_activations = true;
  Result<RunConfig> c = apply_flags(base, f);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->kv_precision, KvPrecision::kFp8E4M3);
  EXPECT_EQ(c->memory_budget_bytes, std::size_t{1500} << 20);
  EXPECT_FALSE(c->refine_activations);
  EXPECT_EQ(c->threads, 3);  // the rest of the base is kept

  EngineFlags alias;  // --kv-fp8 wins over the default --kv f16
  alias.kv_fp8 = true;
  c = apply_flags(base, alias);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kv_precision, KvPrecision::kFp8E4M3);
  EXPECT_TRUE(c->refine_activations);
  EXPECT_EQ(c->memory_budget_bytes, 0u);

  EngineFlags bad;
  bad.kv = "int4";
  c = apply_flags(base, bad);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(c.error().message.find("--kv 'int4'"), std::string::npos) << c.error().message;
}

TEST(KvPrecisionNames, RoundTripAndRefuseUnknown) {
  for (const KvPrecision p : {KvPrecision::kF16, KvPrecision::kQ8_0, KvPrecision::kFp8E4M3}) {
    EXPECT_EQ(parse_kv_precision(to_string(p)), p);
  }
  EXPECT_EQ(std::string(to_string(KvPrecision::kFp8E4M3)), "fp8");
  EXPECT_FALSE(parse_kv_precision("int8").has_value());
  EXPECT_FALSE(parse_kv_precision("F16").has_value());
}

}  // namespace
}  // namespace hearth::models
