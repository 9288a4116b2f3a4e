// SHA-256 (FIPS 180-4), streaming. Used to verify model files against the
// catalog and to record which exact file produced a generation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hearth {

using Sha256Digest = std::array<std::uint8_t, 32>;

// The algorithm in plain C++: the fallback where the build has no OpenSSL,
// and the tests' reference for the OpenSSL path.
class PortableSha256 {
 public:
  PortableSha256();
  void update(const void* data, std::size_t size);
  Sha256Digest finish();  // the object must not be updated afterwards

 private:
  void compress(const std::uint8_t* block);  // one 64-byte block
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;  // bytes
  std::uint64_t total_ = 0;   // bytes
};

// OpenSSL's SHA-256 (EVP_Digest*, which uses the CPU's SHA instructions:
// ~5x the portable code on a model file) where the build has OpenSSL (every
// Debian build: libssl-dev), else PortableSha256; also PortableSha256 if
// OpenSSL cannot set up a context.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  Sha256Digest finish();  // the object must not be updated afterwards
  static std::string hex(const Sha256Digest& digest);
  // True when the OpenSSL path computes this digest.
  bool uses_openssl() const { return evp_ != nullptr; }

 private:
  struct Evp;
  std::unique_ptr<Evp> evp_;
  PortableSha256 portable_;
};

}  // namespace hearth
