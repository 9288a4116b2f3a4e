// Switching model and weight format on the GPU without restarting: two
// synthetic models (the SmolLM2-135M shape, llama; a small qwen2 with QKV
// bias), each as stored (Q8_0) and converted to Q4_0 at load, opened on
// cuda:0 in turn 20 times through models::open_engine. After each switch the
// device memory this process's backend holds (DeviceBuffer::live_bytes: every
// weight, KV pool and workspace allocation) is back at what it was after the
// first round, exactly, and each configuration's greedy tokens are the first
// round's. The device-wide use (cudaMemGetInfo: other processes and tests
// count too) is printed.
// Label `gpu`; skips where no CUDA device exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cuda_test_support.h"
#if defined(HEARTH_HAVE_CUDA)
#include "engine/backend/cuda/device_buffer.h"
#endif
#include "models/synthetic.h"
#include "switching.h"

namespace hearth::models::test {
namespace {

SwitchTarget on_gpu(const std::filesystem::path& path, const std::string& quant, const std::string& label) {
  SwitchTarget t;
  t.model = path.string();
  t.label = label;
  t.config.device = "cuda:0";
  t.config.quant = quant;
  t.config.context_length = 512;  // the tiny qwen2's trained context
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
#if defined(HEARTH_HAVE_CUDA)
  const auto held = [] { return cuda::DeviceBuffer::live_bytes(); };
#else
  const auto held = [] { return std::size_t{0}; };
#endif
  const auto device_used = [&]() -> std::size_t {
    auto p = plan_device(targets[0].model, targets[0].config);
    return p ? p->total_bytes - p->free_bytes : 0;
  };
  const std::size_t used_before = device_used();
  auto report = switch_rounds(targets, 6, 8, held);
  std::filesystem::remove(*smol);
  std::filesystem::remove(*qwen);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->mismatches.empty()) << report->mismatches.front();
  ASSERT_EQ(report->after_each.size(), 20u);
  ASSERT_EQ(report->while_loaded.size(), 24u);
  for (const std::size_t loaded : report->while_loaded) {
    EXPECT_GT(loaded, report->baseline + (std::size_t{1} << 20))
        << "a loaded model holds its weights and KV pool (the tiny qwen2: 3.6 MB)";
  }
  for (std::size_t i = 0; i < report->after_each.size(); ++i) {
    EXPECT_EQ(report->after_each[i], report->baseline)
        << "switch " << i + 1 << " (" << targets[i % targets.size()].label << "): the backend holds "
        << report->after_each[i] << " bytes of device memory, " << report->baseline << " after the first round";
  }
  std::cout << "backend device memory after each drop " << report->baseline << " bytes, while loaded up to "
            << (*std::max_element(report->while_loaded.begin(), report->while_loaded.end()) >> 20)
            << " MiB; device-wide in use " << (used_before >> 20) << " MiB before, " << (device_used() >> 20)
            << " MiB after the 24 loads; resident " << (resident_bytes() >> 20) << " MiB\n";
}

}  // namespace
}  // namespace hearth::models::test
