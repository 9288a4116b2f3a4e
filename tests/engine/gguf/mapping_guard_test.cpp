// A memory-mapped file truncated under a guarded mapping (issue 14): reads
// past the new end see zeros instead of raising SIGBUS, and the watch says so.
#include "engine/gguf/mapping_guard.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace hearth::gguf {
namespace {

TEST(MappingGuard, TruncatedFileReadsZerosAndReportsLost) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("hearth-guard-" + std::to_string(::getpid()) + ".bin");
  const std::size_t size = 1u << 20;
  {
    const std::vector<char> data(size, 'x');
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(size));
    ::close(fd);
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(m, MAP_FAILED);
  const MappingWatch watch = guard_mapping(m, size);
  ASSERT_GE(watch.slot, 0);
  const volatile char* bytes = static_cast<const char*>(m);
  EXPECT_EQ(bytes[100], 'x');
  EXPECT_FALSE(watch.lost());

  std::filesystem::resize_file(path, 4096);  // another program truncates the file
  EXPECT_EQ(bytes[100], 'x');                // the first page still exists
  EXPECT_EQ(bytes[size / 2], 0);             // past the end: SIGBUS without the guard
  EXPECT_EQ(bytes[size - 1], 0);
  EXPECT_TRUE(watch.lost());

  unguard_mapping(watch);
  ::munmap(m, size);
  std::filesystem::remove(path);
  // A fresh registration in the same slot starts clean; the stale watch reads false.
  std::vector<char> other(4096);
  const MappingWatch again = guard_mapping(other.data(), other.size());
  EXPECT_FALSE(again.lost());
  if (again.slot == watch.slot) {
    EXPECT_FALSE(watch.lost());
  }
  unguard_mapping(again);
  EXPECT_FALSE(MappingWatch{}.lost());
}

}  // namespace
}  // namespace hearth::gguf
