#include "store/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

namespace hearth::store {

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

WriterLock::WriterLock(WriterLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), held_(other.held_), holder_(other.holder_) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    held_ = other.held_;
    holder_ = other.holder_;
  }
  return *this;
}

WriterLock WriterLock::acquire(const std::string& db_path) {
  WriterLock lock;
  const std::string path = db_path + ".lock";
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) {
    lock.held_ = true;  // no lock file possible: the folder is not writable, so neither is the database
    return lock;
  }
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) {
    lock.held_ = true;
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lock.fd_, 0) == 0) {
      [[maybe_unused]] const ssize_t n = ::pwrite(lock.fd_, pid.data(), pid.size(), 0);  // informative only
    }
    return lock;
  }
  char buf[32] = {};
  const ssize_t n = ::pread(lock.fd_, buf, sizeof(buf) - 1, 0);
  if (n > 0) {
    char* end = nullptr;
    const long long pid = std::strtoll(buf, &end, 10);
    if (end != buf && pid > 0) lock.holder_ = pid;
  }
  ::close(lock.fd_);
  lock.fd_ = -1;
  return lock;
}

}  // namespace hearth::store
