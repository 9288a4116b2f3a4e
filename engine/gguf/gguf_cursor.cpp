#include "engine/gguf/gguf_cursor.h"

#include "engine/core/utf8.h"
#include "engine/gguf/utf8.h"

namespace hearth::gguf {

std::string at_byte(std::uint64_t pos) {
  return " (at byte " + std::to_string(pos) + ")";
}

Error corrupt_at(std::uint64_t pos, const std::string& message) {
  return make_error(ErrorCode::kCorruptFile, message + at_byte(pos));
}

Result<const std::byte*> Cursor::take(std::uint64_t n, std::string_view what) {
  if (n > left()) {
    return corrupt_at(pos_, std::string(what) + ": needs " + std::to_string(n) + " bytes, only " +
                                std::to_string(left()) + " left in the file");
  }
  const std::byte* p = here();
  pos_ += n;
  return p;
}

Result<std::string_view> Cursor::string(std::string_view what) {
  const std::uint64_t start = pos_;
  if (left() < sizeof(std::uint64_t)) return take(sizeof(std::uint64_t), std::string(what) + " length").error();
  std::uint64_t len = 0;
  std::memcpy(&len, here(), sizeof len);
  pos_ += sizeof len;
  if (len > left()) {
    return corrupt_at(start, std::string(what) + ": length " + std::to_string(len) + " exceeds the " +
                                 std::to_string(left()) + " bytes left in the file");
  }
  HEARTH_ASSIGN_OR_RETURN(const std::byte* p, take(len, what));
  std::string_view s(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
  if (find_invalid_utf8(s))
    return corrupt_at(start, std::string(what) + " " + quote_for_message(s) + " is not valid UTF-8");
  return s;
}

}  // namespace hearth::gguf
