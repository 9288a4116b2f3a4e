// Bounds-checked little-endian reads over a GGUF image (internal to engine/gguf).
// Every read checks the bytes that remain before touching them; errors name the
// item being read and the byte offset where it starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::gguf {

// " (at byte N)": appended to every parse error.
std::string at_byte(std::uint64_t pos);
Error corrupt_at(std::uint64_t pos, const std::string& message);

class Cursor {
 public:
  explicit Cursor(std::span<const std::byte> bytes) : bytes_(bytes) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return bytes_.size() - pos_; }
  const std::byte* here() const { return bytes_.data() + pos_; }

  // `n` bytes, or an error "<what>: needs n bytes, only m left (at byte p)".
  Result<const std::byte*> take(std::uint64_t n, std::string_view what);

  template <class T>
  Result<T> read(std::string_view what) {
    HEARTH_ASSIGN_OR_RETURN(const std::byte* p, take(sizeof(T), what));
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }

  // A GGUF string (u64 length + bytes), checked to be UTF-8. `what` names it.
  Result<std::string_view> string(std::string_view what);

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t pos_ = 0;
};

}  // namespace hearth::gguf
