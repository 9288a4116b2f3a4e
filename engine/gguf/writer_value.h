// Internal to engine/gguf: serialization helpers shared by the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_writer.h"

namespace hearth::gguf {

// Appends little-endian encodings to a byte vector.
struct ByteSink {
  std::vector<std::byte>& out;
  void bytes(const void* p, std::size_t n);
  void u32(std::uint32_t v) { bytes(&v, sizeof v); }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void i64(std::int64_t v) { bytes(&v, sizeof v); }
  void string(std::string_view s);  // u64 length + bytes
};

// Element types match the array's, strings are UTF-8, nesting within the cap.
Result<void> validate_value(const WriterValue& v, const std::string& ctx);

// Value type (u32) followed by the value.
void write_value(ByteSink& out, const WriterValue& v);

}  // namespace hearth::gguf
