// A file the installer writes (a partial download, the assembled model), whose
// failures say what happened: a full disk is named as such.
#pragma once

#include <cstdint>
#include <filesystem>

#include "hearth/result.h"

namespace hearth::models::install {

class OutFile {
 public:
  enum class Mode { kAppend, kTruncate };
  static Result<OutFile> open(const std::filesystem::path& path, Mode mode);

  OutFile(OutFile&& other) noexcept;
  OutFile& operator=(OutFile&& other) noexcept;
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  ~OutFile();

  Result<void> write(const char* data, std::size_t size);
  Result<void> truncate(std::uint64_t size);    // and continue writing there
  Result<void> sync();                          // the bytes are on the disk (before a rename makes them the model)
  Result<void> close();                         // a close can report a late write error
  std::uint64_t size() const { return size_; }  // bytes in the file

 private:
  OutFile(int fd, std::filesystem::path path, std::uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  Error failure(const char* what, int err) const;

  int fd_ = -1;
  std::filesystem::path path_;
  std::uint64_t size_ = 0;
};

}  // namespace hearth::models::install
