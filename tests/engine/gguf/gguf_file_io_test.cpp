// GgufFile::open on real files and GgufWriter::write_file: missing files,
// atomic replacement, and a full disk (simulated with RLIMIT_FSIZE) leaving
// neither a partial file nor a temporary behind.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace hearth::gguf {
namespace {

namespace fs = std::filesystem;

class GgufFileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hearth_gguf_io_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  fs::path dir_;
};

GgufWriter sample_writer(std::size_t tensor_bytes) {
  GgufWriter w;
  w.add_string("general.name", "io");
  w.add_tensor("t", GgmlType::kI8, {static_cast<std::int64_t>(tensor_bytes)}, [](std::span<std::byte> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>((i * 7 + 1) & 0xFF);
  });
  return w;
}

TEST_F(GgufFileIo, WriteThenOpenMapped) {
  const fs::path p = dir_ / "m.gguf";
  ASSERT_TRUE(sample_writer(1000).write_file(p).ok());
  auto f = GgufFile::open(p);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  EXPECT_EQ((*f)->path(), p);
  EXPECT_EQ((*f)->file_size(), fs::file_size(p));
  EXPECT_EQ((*f)->get_string("general.name").value(), "io");
  const TensorInfo* t = (*f)->tensor("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->bytes()[999], static_cast<std::byte>((999 * 7 + 1) & 0xFF));
  EXPECT_EQ(entries(), 1u);  // no temporary left
}

TEST_F(GgufFileIo, OpenErrors) {
  auto missing = GgufFile::open(dir_ / "nope.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto directory = GgufFile::open(dir_);
  EXPECT_FALSE(directory.ok());
  std::ofstream(dir_ / "empty.gguf").close();
  auto empty = GgufFile::open(dir_ / "empty.gguf");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kCorruptFile);
  EXPECT_NE(empty.error().message.find("empty.gguf"), std::string::npos);
}

TEST_F(GgufFileIo, FullDiskLeavesOldFileAndNoTemporary) {
  const fs::path p = dir_ / "m.gguf";
  ASSERT_TRUE(sample_writer(100).write_file(p).ok());
  const auto old_size = fs::file_size(p);

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto r = sample_writer(100000).write_file(p);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_EQ(fs::file_size(p), old_size);  // the old file is untouched
  EXPECT_EQ(entries(), 1u);
  EXPECT_TRUE(GgufFile::open(p).ok());
}

TEST_F(GgufFileIo, UnwritableFolderIsAnIoError) {
  auto r = sample_writer(10).write_file(dir_ / "no_such_dir" / "m.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace hearth::gguf
