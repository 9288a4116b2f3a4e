// SHA-256 (FIPS 180-4), streaming. Used to verify model files against the
// catalog and to record which exact file produced a generation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hearth {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  std::array<std::uint8_t, 32> finish();  // the object must not be updated afterwards
  static std::string hex(const std::array<std::uint8_t, 32>& digest);

 private:
  void compress(const std::uint8_t* block);  // one 64-byte block
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;  // bytes
  std::uint64_t total_ = 0;   // bytes
};

}  // namespace hearth
