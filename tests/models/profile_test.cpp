// Per-op profiling and the overflow check (issue 19) through the whole engine
// on synthetic models: the layers x kinds matrix against the forward time,
// each entry's bytes and FLOPs against its shapes, and a model with one
// layer's weights scaled far up reported at that layer. Built twice: on the
// CPU backend (label unit) and with HEARTH_PROFILE_TEST_CUDA on CUDA (label
// gpu, skipping where no device exists).
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>

#include <unistd.h>

#include "hearth/devices.h"
#include "hearth/engine.h"
#include "models/run_config.h"
#include "models/synthetic.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;

#ifdef HEARTH_PROFILE_TEST_CUDA
constexpr const char* kDevice = "cuda";
#else
constexpr const char* kDevice = "cpu";
#endif

// 512 wide, 4 layers, 8 heads of 64 (4 KV heads), FFN 1536, vocab 2000, Q8_0:
// big enough that each op takes microseconds, small enough for a unit test.
constexpr std::uint32_t kEmbd = 512, kLayers = 4, kHeads = 8, kKvHeads = 4, kFfn = 1536, kVocab = 2000;
constexpr std::uint32_t kHeadDim = kEmbd / kHeads;

SyntheticSpec spec_of(const std::string& quant) {
  SyntheticSpec spec;
  spec.shape = {"custom", kEmbd, kLayers, kHeads, kKvHeads, kFfn, kVocab, 2048, 10000.0f, 1e-5f, false};
  spec.quant = parse_synthetic_quant(quant).value();
  return spec;
}

fs::path write(const SyntheticSpec& spec, const std::string& tag) {
  const fs::path path =
      fs::temp_directory_path() / ("hearth-profile-" + tag + "-" + std::to_string(::getpid()) + ".gguf");
  const Result<void> written = write_synthetic_model(spec, path);
  EXPECT_TRUE(written.ok()) << written.error().describe();
  return path;
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

std::unique_ptr<Engine> open(const fs::path& path) {
  RunConfig config;
  config.device = kDevice;
  config.threads = 2;
  config.context_length = 512;
  auto opened = open_engine(path.string(), config);
  EXPECT_TRUE(opened.ok()) << opened.error().describe();
  return opened ? std::move(opened->engine) : nullptr;
}

// A greedy generation of `n` tokens after `prompt` tokens.
FinishEvent generate(Engine& engine, int prompt, int n) {
  Request r;
  for (int i = 0; i < prompt; ++i) r.prompt_tokens.push_back(10 + i);
  r.max_tokens = n;
  r.ignore_eos = true;
  r.sampling.temperature = 0;
  auto sink = std::make_shared<WaitSink>();
  engine.submit(std::move(r), sink);
  return sink->wait();
}

bool skip_without_device() {
#ifdef HEARTH_PROFILE_TEST_CUDA
  return list_devices().size() <= 1;
#else
  return false;
#endif
}

const OpProfileEntry* find(const StepProfile& s, const std::string& name, std::int32_t layer) {
  for (const OpProfileEntry& e : s.ops) {
    if (e.name == name && e.layer == layer) return &e;
  }
  return nullptr;
}

std::uint64_t q8_matrix_bytes(std::uint64_t rows, std::uint64_t cols) {
  return rows * (cols / 32) * 34;  // Q8_0: 34 bytes per 32 elements
}

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (skip_without_device()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(ProfileTest, MatrixHasARowPerLayerAndSumsToTheForwardTime) {
  const fs::path path = write(spec_of("Q8_0"), "matrix");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  EXPECT_TRUE(engine->profile().recent.empty());  // off by default
  engine->set_profiling(ProfileOptions{true, 1024});
  const FinishEvent f = generate(*engine, 24, 12);
  ASSERT_NE(f.reason, FinishReason::kError);
  const ProfileReport r = engine->profile();
  ASSERT_EQ(r.n_layer, static_cast<std::int32_t>(kLayers));
  ASSERT_EQ(r.matrix_us.size(), kLayers * kKernelKinds);
  EXPECT_EQ(r.steps, 12);  // one prefill step, then one per generated token after the first
  ASSERT_EQ(r.recent.size(), 12u);
  // Every layer spent time in each of the kinds a llama layer runs.
  for (std::int32_t l = 0; l < r.n_layer; ++l) {
    for (KernelKind k : {KernelKind::kNorm, KernelKind::kMatmul, KernelKind::kRope, KernelKind::kKvStore,
                         KernelKind::kAttention, KernelKind::kActivation}) {
      EXPECT_GT(r.cell(l, k), 0.0) << "layer " << l << " " << kernel_kind_name(k);
    }
    EXPECT_EQ(r.cell(l, KernelKind::kEmbedding), 0.0);
  }
  const double in_layers = std::accumulate(r.matrix_us.begin(), r.matrix_us.end(), 0.0);
  double outside = 0;
  for (std::size_t k = 0; k < kKernelKinds; ++k) {
    if (static_cast<KernelKind>(k) != KernelKind::kSampling) outside += r.outside_layers_us[k];
  }
  EXPECT_GT(r.outside_layers_us[static_cast<std::size_t>(KernelKind::kEmbedding)], 0.0);
#ifndef HEARTH_PROFILE_TEST_CUDA
  // On the CPU the ops are the forward pass: their sum is within 10% of it
  // (the whole run's, and the median step's: on a shared machine one step in
  // which the thread was descheduled between ops must not fail the test).
  std::vector<double> ratios;
  for (const StepProfile& s : r.recent) {
    double ops = 0;
    for (const OpProfileEntry& e : s.ops) ops += e.kind == KernelKind::kSampling ? 0.0 : e.duration_us;
    ratios.push_back(ops / std::max(s.forward_us, 1e-9));
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR(ratios[ratios.size() / 2], 1.0, 0.10);
  EXPECT_LE(in_layers + outside, 1.02 * r.forward_us);
  EXPECT_EQ(r.host_wait_us, 0.0);
  EXPECT_EQ(r.gpu_idle_us, 0.0);
#else
  EXPECT_LE(in_layers + outside, 1.02 * r.forward_us);  // the device's busy time fits in the forward
  EXPECT_GT(r.host_wait_us, 0.0);
#endif
  EXPECT_GT(r.sampling_us, 0.0);
  // Entries are in op order per step, steps in order, start times increasing.
  for (const StepProfile& s : r.recent) {
    for (std::size_t i = 1; i < s.ops.size(); ++i) EXPECT_GE(s.ops[i].start_us, s.ops[i - 1].start_us);
  }
  fs::remove(path);
}

TEST_F(ProfileTest, BytesAndFlopsFollowTheShapes) {
  const fs::path path = write(spec_of("Q8_0"), "costs");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  engine->set_profiling(ProfileOptions{true, 16});
  constexpr std::uint64_t P = 20;  // prompt tokens: step 0 is their prefill, step 1 the first decode
  ASSERT_NE(generate(*engine, static_cast<int>(P), 2).reason, FinishReason::kError);
  const ProfileReport r = engine->profile();
  ASSERT_EQ(r.recent.size(), 2u);
  const StepProfile& prefill = r.recent[0];
  const StepProfile& decode = r.recent[1];
  EXPECT_EQ(prefill.tokens, static_cast<std::int64_t>(P));
  EXPECT_EQ(decode.tokens, 1);
  const std::uint64_t q = kHeads * kHeadDim, kv = kKvHeads * kHeadDim;

  const OpProfileEntry* qkv = find(prefill, "qkv", 2);
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->flops, 2 * P * (q + 2 * kv) * kEmbd);
  EXPECT_EQ(qkv->input_bytes, q8_matrix_bytes(q + 2 * kv, kEmbd) + P * kEmbd * 4);
  EXPECT_EQ(qkv->output_bytes, P * (q + 2 * kv) * 4);
  EXPECT_EQ(qkv->kind, KernelKind::kMatmul);

  const OpProfileEntry* down = find(decode, "ffn_down", 0);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->flops, 2 * kEmbd * kFfn + kEmbd);  // the product and the residual add
  EXPECT_EQ(down->input_bytes, q8_matrix_bytes(kEmbd, kFfn) + kFfn * 4 + kEmbd * 4);
  EXPECT_EQ(down->output_bytes, kEmbd * 4);

  const OpProfileEntry* norm = find(prefill, "attn_norm", 1);
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->flops, 4 * P * kEmbd);
  EXPECT_EQ(norm->input_bytes, (P * kEmbd + kEmbd) * 4);
  EXPECT_EQ(norm->kind, KernelKind::kNorm);

  // Attention: the prefill's token i sees i + 1 positions; the decode token
  // at position P reads P + 1 positions of f16 K and V.
  const std::uint64_t kv_token_bytes = 2 * kv * 2;
  const OpProfileEntry* att = find(prefill, "attention", 0);
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->flops, P * (P + 1) / 2 * kHeads * (4 * kHeadDim + 5));
  EXPECT_EQ(att->input_bytes, P * kv_token_bytes + P * q * 4);
  const OpProfileEntry* att1 = find(decode, "attention", 3);
  ASSERT_NE(att1, nullptr);
  EXPECT_EQ(att1->flops, (P + 1) * kHeads * (4 * kHeadDim + 5));
  EXPECT_EQ(att1->input_bytes, (P + 1) * kv_token_bytes + q * 4);
  EXPECT_EQ(att1->kind, KernelKind::kAttention);

  const OpProfileEntry* store = find(decode, "store_kv", 1);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->output_bytes, kv_token_bytes);

  // The logits: one row, the untied output matrix [vocab][embd].
  const OpProfileEntry* out = find(decode, "output", -1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->flops, 4 * kEmbd + 2 * kVocab * kEmbd);
  EXPECT_EQ(out->output_bytes, kVocab * 4);

  const OpProfileEntry* embd = find(prefill, "token_embd", -1);
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->output_bytes, P * kEmbd * 4);
  EXPECT_EQ(embd->kind, KernelKind::kEmbedding);
  // q/k/v run as one fused product on both backends for one token.
  EXPECT_TRUE(find(decode, "qkv", 0)->is_fused);
  EXPECT_FALSE(find(decode, "attn_norm", 0)->is_fused);
  fs::remove(path);
}

// The roofline's inputs: each cell's bytes and FLOPs are its entries' sums,
// the device's ceilings are measured (and the same for a second engine on the
// device: measured once per process), each step has its scheduling time, and
// profile_since() copies only the newer steps.
TEST_F(ProfileTest, CellsCarryBytesAndFlopsAgainstMeasuredCeilings) {
  const fs::path path = write(spec_of("Q8_0"), "roofline");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  engine->set_profiling(ProfileOptions{true, 64});
  ASSERT_NE(generate(*engine, 12, 5).reason, FinishReason::kError);
  const ProfileReport r = engine->profile();
  ASSERT_EQ(r.recent.size(), 5u);
  ASSERT_EQ(r.matrix_bytes.size(), r.matrix_us.size());
  ASSERT_EQ(r.matrix_flops.size(), r.matrix_us.size());
  std::vector<double> bytes(r.matrix_us.size(), 0.0), flops(r.matrix_us.size(), 0.0);
  double scheduling = 0;
  for (const StepProfile& s : r.recent) {
    EXPECT_GE(s.scheduling_us, 0.0);
    scheduling += s.scheduling_us;
    for (const OpProfileEntry& e : s.ops) {
      if (e.layer < 0) continue;
      bytes[ProfileReport::at(e.layer, e.kind)] += static_cast<double>(e.input_bytes + e.output_bytes);
      flops[ProfileReport::at(e.layer, e.kind)] += static_cast<double>(e.flops);
    }
  }
  EXPECT_EQ(r.matrix_bytes, bytes);
  EXPECT_EQ(r.matrix_flops, flops);
  EXPECT_DOUBLE_EQ(r.scheduling_us, scheduling);
  EXPECT_GT(r.cell_bytes(1, KernelKind::kMatmul), 0.0);
  EXPECT_GT(r.cell_flops(1, KernelKind::kMatmul), r.cell_flops(1, KernelKind::kNorm));
  EXPECT_GT(r.ceilings.bytes_per_s, 1e8);  // any machine reads more than 100 MB/s
  EXPECT_GT(r.ceilings.flops_per_s, 1e8);
  EXPECT_FALSE(r.ceilings.source.empty());

  const ProfileReport newer = engine->profile_since(3);
  ASSERT_EQ(newer.recent.size(), 2u);
  EXPECT_EQ(newer.recent[0].step, 3);
  EXPECT_EQ(newer.steps, r.steps);  // the sums are the whole window's
  EXPECT_TRUE(engine->profile_since(5).recent.empty());

  auto second = open(path);
  ASSERT_TRUE(second);
  second->set_profiling(ProfileOptions{true, 4});
  ASSERT_NE(generate(*second, 4, 1).reason, FinishReason::kError);
  EXPECT_EQ(second->profile().ceilings.bytes_per_s, r.ceilings.bytes_per_s);  // the cached probe
  EXPECT_EQ(second->profile().ceilings.flops_per_s, r.ceilings.flops_per_s);
  fs::remove(path);
}

// Each window carries the number set_profiling returned for it: until the
// next step the reports are still the old window's (a poller tells them apart
// by that number, not by step counts).
TEST_F(ProfileTest, TurnedOffItRecordsNothingMore) {
  const fs::path path = write(spec_of("Q8_0"), "off");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->profile().window, 0u);
  const std::uint64_t first = engine->set_profiling(ProfileOptions{true, 64});
  EXPECT_GT(first, 0u);
  ASSERT_NE(generate(*engine, 8, 3).reason, FinishReason::kError);
  const std::int64_t steps = engine->profile().steps;
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(engine->profile().window, first);
  EXPECT_EQ(engine->set_profiling(ProfileOptions{false, 64}), 0u);
  ASSERT_NE(generate(*engine, 8, 3).reason, FinishReason::kError);
  EXPECT_EQ(engine->profile().steps, steps);
  EXPECT_EQ(engine->profile().window, first);

  const std::uint64_t second = engine->set_profiling(ProfileOptions{true, 64});
  EXPECT_GT(second, first);
  EXPECT_EQ(engine->profile().window, first);  // not started before a step
  EXPECT_EQ(engine->profile().steps, steps);
  ASSERT_NE(generate(*engine, 8, 2).reason, FinishReason::kError);
  EXPECT_EQ(engine->profile().window, second);
  EXPECT_EQ(engine->profile().steps, 2);
  fs::remove(path);
}

// Layer 1's matrices at 1000x their spread: its attention output adds ~1e6
// to the residual stream, past 95% of the FP16 range.
TEST_F(ProfileTest, OverflowCheckReportsTheBoostedLayer) {
  SyntheticSpec spec = spec_of("F32");
  spec.boosted_layer = 1;
  spec.boost = 1000.0f;
  const fs::path path = write(spec, "boosted");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  engine->set_overflow_check(true);
  ASSERT_NE(generate(*engine, 6, 2).reason, FinishReason::kError);
  const std::optional<OverflowFinding> f = engine->first_overflow();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->layer, 1);
  EXPECT_EQ(f->step, 0);
  EXPECT_GT(f->max_abs, kFp16OverflowThreshold);
  EXPECT_GE(f->position, 0);
  EXPECT_LT(f->position, 6);
  EXPECT_FALSE(f->op.empty());
  fs::remove(path);
}

TEST_F(ProfileTest, OverflowCheckIsCleanOnAnOrdinaryModel) {
  const fs::path path = write(spec_of("F32"), "clean");
  auto engine = open(path);
  ASSERT_TRUE(engine);
  engine->set_overflow_check(true);
  ASSERT_NE(generate(*engine, 6, 4).reason, FinishReason::kError);
  EXPECT_FALSE(engine->first_overflow().has_value());
  fs::remove(path);
}

}  // namespace
}  // namespace hearth::models
