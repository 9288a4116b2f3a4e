// Byte-level GGUF builder for hostile-input tests: writes exactly what it is
// told (lying counts, bad types, misaligned offsets), unlike GgufWriter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace hearth::gguf::testing {

class RawGguf {
 public:
  std::vector<std::byte> bytes;

  RawGguf& raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes.insert(bytes.end(), b, b + n);
    return *this;
  }
  RawGguf& u8(std::uint8_t v) { return raw(&v, 1); }
  RawGguf& u32(std::uint32_t v) { return raw(&v, 4); }
  RawGguf& u64(std::uint64_t v) { return raw(&v, 8); }
  RawGguf& i64(std::int64_t v) { return raw(&v, 8); }
  RawGguf& f32(float v) { return raw(&v, 4); }
  RawGguf& str(std::string_view s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  // "GGUF", version, tensor count, kv count.
  RawGguf& header(std::uint32_t version, std::uint64_t n_tensors, std::uint64_t n_kv) {
    raw("GGUF", 4);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  RawGguf& kv_u32(std::string_view key, std::uint32_t v) {
    str(key);
    u32(4);
    return u32(v);
  }
  RawGguf& kv_str(std::string_view key, std::string_view v) {
    str(key);
    u32(8);
    return str(v);
  }
  RawGguf& tensor_info(std::string_view name, std::vector<std::int64_t> ne, std::uint32_t type, std::uint64_t offset) {
    str(name);
    u32(static_cast<std::uint32_t>(ne.size()));
    for (std::int64_t d : ne) i64(d);
    u32(type);
    return u64(offset);
  }
  RawGguf& pad_to(std::size_t alignment) {
    while (bytes.size() % alignment != 0) u8(0);
    return *this;
  }
  RawGguf& zeros(std::size_t n) {
    bytes.resize(bytes.size() + n, std::byte{0});
    return *this;
  }
};

}  // namespace hearth::gguf::testing
