// Hardware-aware defaults (models/recommend.h) on machines described by hand:
// the device, context, KV precision and batch limits follow from the free
// memory as the header says, every choice has its reason, and the chosen
// plan really fits. Each case's memory is set from plan() itself, between the
// plan that must not fit and the one that must.
#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "models/recommend.h"
#include "models/synthetic.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;

class RecommendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("hearth-recommend-" + std::to_string(::getpid()) + ".gguf");
    SyntheticSpec spec;
    // Small weights, a long trained context: the KV cache is what memory decides.
    spec.shape = {"custom", 256, 4, 4, 2, 512, 600, 131072, 10000.0f, 1e-5f, false};
    spec.quant = parse_synthetic_quant("Q8_0").value();
    ASSERT_TRUE(write_synthetic_model(spec, path_).ok());
    auto f = gguf::GgufFile::open(path_);
    ASSERT_TRUE(f.ok()) << f.error().message;
    file_ = std::move(f).value();
  }
  void TearDown() override {
    file_.reset();
    std::error_code ec;
    fs::remove(path_, ec);
  }

  static DeviceInfo cpu(std::size_t free_bytes) {
    DeviceInfo d;
    d.id = "cpu";
    d.name = "CPU (test)";
    d.free_bytes = d.total_bytes = free_bytes;
    return d;
  }
  static DeviceInfo gpu(std::size_t free_bytes) {
    DeviceInfo d;
    d.id = "cuda:0";
    d.name = "GPU (test)";
    d.cuda = true;
    d.cuda_index = 0;
    d.free_bytes = d.total_bytes = free_bytes;
    return d;
  }
  // What `device` needs for `ctx` tokens of `kv` with the batch limits recommend() uses there.
  std::size_t need(const std::string& device, std::int32_t ctx, KvPrecision kv) const {
    RunConfig c;
    c.device = device;
    c.context_length = ctx;
    c.kv_precision = kv;
    c.max_sequences = device == "cpu" ? 4 : 16;
    c.max_batch_tokens = device == "cpu" ? 256 : 512;
    auto p = plan(*file_, c, device);
    EXPECT_TRUE(p.ok()) << p.error().message;
    return p ? p->total_bytes() : 0;
  }
  // CPU RAM whose usable 3/4 is just `bytes`.
  static std::size_t ram_for(std::size_t bytes) { return bytes / 3 * 4 + 8; }

  Recommendation run(const MachineView& m) const {
    auto r = recommend(*file_, m);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (!r) return {};
    for (const auto& line : r->reasons) std::cout << "  " << line << "\n";
    if (r->fits) {
      EXPECT_LE(r->plan.total_bytes(), r->free_bytes);
      EXPECT_NE(r->config.device, "auto");
    }
    return std::move(r).value();
  }

  fs::path path_;
  std::unique_ptr<gguf::GgufFile> file_;
};

constexpr std::size_t kGiB = std::size_t{1} << 30;

TEST_F(RecommendTest, ACpuWithRoomGetsItsCappedContextInF16) {
  const Recommendation r = run({{cpu(24 * kGiB)}, {20e9}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.config.device, "cpu");
  EXPECT_EQ(r.plan.context_length, 8192);  // trained 131072, capped on the CPU
  EXPECT_EQ(r.config.kv_precision, KvPrecision::kF16);
  EXPECT_EQ(r.config.max_sequences, 4);
  EXPECT_EQ(r.config.max_batch_tokens, 256);
  ASSERT_EQ(r.reasons.size(), 4u);
  EXPECT_NE(r.reasons[0].find("no CUDA device"), std::string::npos) << r.reasons[0];
  EXPECT_NE(r.reasons[1].find("capped at 8192 on the CPU"), std::string::npos) << r.reasons[1];
  EXPECT_NEAR(r.decode_tokens_per_s, 20e9 / static_cast<double>(r.plan.weights_bytes), 1e-6);
}

TEST_F(RecommendTest, AGpuWithRoomIsChosenWithALongerContextAndMoreSequences) {
  const Recommendation r = run({{cpu(24 * kGiB), gpu(80 * kGiB)}, {20e9, 4e12}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.config.device, "cuda:0");
  EXPECT_EQ(r.plan.context_length, 32768);
  EXPECT_EQ(r.config.kv_precision, KvPrecision::kF16);
  EXPECT_EQ(r.config.max_sequences, 16);
  EXPECT_NE(r.reasons[0].find("on the CPU"), std::string::npos) << "both speeds compared: " << r.reasons[0];
}

TEST_F(RecommendTest, AGpuTooSmallForTheShortestContextIsPassedOverForTheCpu) {
  const std::size_t small = need("cuda:0", 2048, KvPrecision::kFp8E4M3) + (std::size_t{512} << 20) - 1;
  const Recommendation r = run({{cpu(24 * kGiB), gpu(small)}, {}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.config.device, "cpu");
  ASSERT_GE(r.reasons.size(), 2u);
  EXPECT_NE(r.reasons[1].find("passed over cuda:0"), std::string::npos) << r.reasons[1];
  EXPECT_EQ(r.decode_tokens_per_s, 0.0) << "no bandwidth known: no speed claimed";
}

TEST_F(RecommendTest, WhereOnlyTheCompactCacheFitsTheContextTheCpuTakesQ8_0) {
  const std::size_t f16 = need("cpu", 8192, KvPrecision::kF16), q8 = need("cpu", 8192, KvPrecision::kQ8_0);
  ASSERT_LT(q8, f16);
  const Recommendation r = run({{cpu(ram_for((q8 + f16) / 2))}, {}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.plan.context_length, 8192);
  EXPECT_EQ(r.config.kv_precision, KvPrecision::kQ8_0);
  EXPECT_NE(r.reasons[2].find("f16 would not fit"), std::string::npos) << r.reasons[2];
}

TEST_F(RecommendTest, WhereNeitherFitsTheContextIsHalvedAndF16ComesFirstAgain) {
  const std::size_t f16_half = need("cpu", 4096, KvPrecision::kF16), q8 = need("cpu", 8192, KvPrecision::kQ8_0);
  ASSERT_LT(f16_half, q8);  // q8_0 is 34 bytes per 32 values: a little over half of f16
  const Recommendation r = run({{cpu(ram_for((f16_half + q8) / 2))}, {}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.plan.context_length, 4096);
  EXPECT_EQ(r.config.kv_precision, KvPrecision::kF16);
  EXPECT_NE(r.reasons[1].find("longest power of two"), std::string::npos) << r.reasons[1];
}

TEST_F(RecommendTest, AGpuWhereOnlyFp8FitsTakesFp8) {
  const std::size_t headroom = std::size_t{512} << 20;
  const std::size_t f16 = need("cuda:0", 32768, KvPrecision::kF16), fp8 = need("cuda:0", 32768, KvPrecision::kFp8E4M3);
  ASSERT_LT(fp8, f16);
  const Recommendation r = run({{cpu(24 * kGiB), gpu((f16 + fp8) / 2 + headroom)}, {}});
  ASSERT_TRUE(r.fits);
  EXPECT_EQ(r.config.device, "cuda:0");
  EXPECT_EQ(r.plan.context_length, 32768);
  EXPECT_EQ(r.config.kv_precision, KvPrecision::kFp8E4M3);
}

TEST_F(RecommendTest, NothingFitsSaysSoAndWhatItWouldNeed) {
  const Recommendation r = run({{cpu(std::size_t{1} << 20)}, {}});
  EXPECT_FALSE(r.fits);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("does not fit this machine"), std::string::npos) << r.reasons[0];
}

TEST_F(RecommendTest, TheDeviceListMustStartWithTheCpu) {
  auto r = recommend(*file_, MachineView{{gpu(80 * kGiB)}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("must start with the CPU"), std::string::npos);
}

}  // namespace
}  // namespace hearth::models
