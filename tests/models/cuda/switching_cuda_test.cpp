// Switching model and weight format on the GPU without restarting: two
// synthetic models (the SmolLM2-135M shape, llama; a small qwen2 with QKV
// bias), each as stored (Q8_0) and converted to Q4_0 at load, opened on
// cuda:0 in turn 20 times through models::open_engine. After each switch the
// device's free memory is back at what it was after the first round (within
// kTolerance) and each configuration's greedy tokens are the first round's.
// Label `gpu`; skips where no CUDA device exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "cuda_test_support.h"
#include "models/synthetic.h"
#include "switching.h"

namespace hearth::models::test {
namespace {

// The CUDA context and cuBLAS keep pools of their own; a leaked KV pool or
// weight set of these models would be 30-150 MB.
constexpr std::size_t kTolerance = std::size_t{16} << 20;

SwitchTarget on_gpu(const std::filesystem::path& path, const std::string& quant, const std::string& label) {
  SwitchTarget t;
  t.model = path.string();
  t.label = label;
  t.config.device = "cuda:0";
  t.config.quant = quant;
  t.config.context_length = 1024;
  t.config.max_sequences = 4;
  return t;
}

TEST(ModelSwitchingCuda, TwentySwitchesFreeTheDeviceMemoryAndGiveTheSameTokens) {
  SKIP_WITHOUT_CUDA();
  auto smol = write_shaped_model("smollm2-135m", "Q8_0", 31);
  ASSERT_TRUE(smol.ok()) << smol.error().message;
  auto qwen = write_tiny_model("qwen2", "Q8_0", 32);
  ASSERT_TRUE(qwen.ok()) << qwen.error().message;
  const std::vector<SwitchTarget> targets = {on_gpu(*smol, "", "SmolLM2 shape Q8_0"), on_gpu(*qwen, "", "qwen2 Q8_0"),
                                             on_gpu(*smol, "Q4_0", "SmolLM2 shape -> Q4_0"),
                                             on_gpu(*qwen, "Q4_0", "qwen2 -> Q4_0")};
  const auto device_used = [&]() -> std::size_t {
    auto p = plan_device(targets[0].model, targets[0].config);
    return p ? p->total_bytes - p->free_bytes : 0;
  };
  auto report = switch_rounds(targets, 6, 8, device_used);
  std::filesystem::remove(*smol);
  std::filesystem::remove(*qwen);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->mismatches.empty()) << report->mismatches.front();
  ASSERT_EQ(report->after_each.size(), 20u);
  ASSERT_GT(report->baseline, 0u) << "the device's memory could not be read";
  std::size_t worst = 0;
  for (std::size_t i = 0; i < report->after_each.size(); ++i) {
    const std::size_t now = report->after_each[i];
    worst = std::max(worst, now);
    EXPECT_LE(now, report->baseline + kTolerance)
        << "switch " << i + 1 << " (" << targets[i % targets.size()].label << "): device memory in use " << (now >> 20)
        << " MiB, " << (report->baseline >> 20) << " MiB after the first round";
  }
  std::cout << "device memory in use after the first round " << (report->baseline >> 20) << " MiB, at most "
            << (worst >> 20) << " MiB over the 20 switches; resident " << (resident_bytes() >> 20) << " MiB\n";
}

}  // namespace
}  // namespace hearth::models::test
