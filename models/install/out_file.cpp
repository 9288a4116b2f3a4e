#include "models/install/out_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth::models::install {

Error OutFile::failure(const char* what, int err) const {
  if (err == ENOSPC || err == EDQUOT) {
    return make_error(ErrorCode::kIo, "disk full: cannot " + std::string(what) + " " + path_.string() + " (" +
                                          std::strerror(err) + ")");
  }
  return make_error(ErrorCode::kIo, "cannot " + std::string(what) + " " + path_.string() + ": " + std::strerror(err));
}

Result<OutFile> OutFile::open(const std::filesystem::path& path, Mode mode) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::kTruncate ? O_TRUNC : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return OutFile(-1, path, 0).failure("open", errno);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) {
    const int err = errno;
    ::close(fd);
    return OutFile(-1, path, 0).failure("seek in", err);
  }
  return OutFile(fd, path, static_cast<std::uint64_t>(end));
}

OutFile::OutFile(OutFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_) {}

OutFile& OutFile::operator=(OutFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
  }
  return *this;
}

OutFile::~OutFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> OutFile::write(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failure("write", n < 0 ? errno : ENOSPC);  // 0 bytes written: no room
    data += n;
    size -= static_cast<std::size_t>(n);
    size_ += static_cast<std::uint64_t>(n);
  }
  return {};
}

Result<void> OutFile::truncate(std::uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 || ::lseek(fd_, static_cast<off_t>(size), SEEK_SET) < 0) {
    return failure("truncate", errno);
  }
  size_ = size;
  return {};
}

Result<void> OutFile::sync() {
  if (::fsync(fd_) != 0) return failure("flush", errno);
  return {};
}

Result<void> OutFile::close() {
  const int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0) return failure("close", errno);
  return {};
}

}  // namespace hearth::models::install
