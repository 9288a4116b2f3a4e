// One writer per database file, across processes: an advisory lock
// (flock) on "<database>.lock", which holds the writer's pid for messages.
// The kernel drops the lock when its holder exits or crashes, so "the lock is
// free" means "no live process is writing", the condition under which it is
// safe to mark 'streaming' answers interrupted. Internal to store/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hearth::store {

class WriterLock {
 public:
  WriterLock() = default;
  ~WriterLock();
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Takes the lock for `db_path`. held() is false when another open Store
  // (this process or another) holds it; holder_pid() then names it when known.
  // A lock file that cannot be created (read-only folder) gives a lock that is
  // held() for this process: nobody can write there anyway.
  static WriterLock acquire(const std::string& db_path);

  bool held() const { return held_; }
  std::optional<std::int64_t> holder_pid() const { return holder_; }

 private:
  int fd_ = -1;
  bool held_ = false;
  std::optional<std::int64_t> holder_;
};

}  // namespace hearth::store
