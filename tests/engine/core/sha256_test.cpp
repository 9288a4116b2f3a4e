#include "engine/core/sha256.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace hearth {
namespace {

template <class Hash>
Sha256Digest digest_bytes(const std::string& text, std::size_t chunk) {
  Hash h;
  for (std::size_t i = 0; i < text.size(); i += chunk) h.update(text.data() + i, std::min(chunk, text.size() - i));
  return h.finish();
}

template <class Hash>
std::string digest_of(const std::string& text, std::size_t chunk) {
  return Sha256::hex(digest_bytes<Hash>(text, chunk));
}

// FIPS 180-4 example vectors, on the product's hash and on the portable reference.
template <class Hash>
void expect_known_vectors() {
  EXPECT_EQ(digest_of<Hash>("", 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_of<Hash>("abc", 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (std::size_t chunk : {1, 3, 63, 64, 1000}) {
    EXPECT_EQ(digest_of<Hash>(two_blocks, chunk), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        << "chunk " << chunk;
  }
  EXPECT_EQ(digest_of<Hash>(std::string(1000000, 'a'), 4096),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, KnownVectors) {
  expect_known_vectors<Sha256>();
}

TEST(Sha256, PortableReferenceKnownVectors) {
  expect_known_vectors<PortableSha256>();
}

// Random lengths around the 64-byte block and the 56-byte padding edge, fed
// in random pieces: the product's hash (OpenSSL in Debian builds) equals the
// portable reference byte for byte.
TEST(Sha256, MatchesThePortableReferenceOnRandomInput) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = trial < 130 ? static_cast<std::size_t>(trial) : rng() % 20000;
    std::string data(n, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    const std::size_t chunk = 1 + rng() % 97;
    EXPECT_EQ(digest_bytes<Sha256>(data, chunk), digest_bytes<PortableSha256>(data, n + 1)) << "length " << n;
  }
}

// The app's builds link OpenSSL (tests/engine/core/CMakeLists.txt defines
// HEARTH_EXPECT_OPENSSL there): the fast path must be the one in use.
TEST(Sha256, UsesOpenSslWhereTheBuildHasIt) {
#if defined(HEARTH_EXPECT_OPENSSL)
  EXPECT_TRUE(Sha256().uses_openssl());
#else
  GTEST_SKIP() << "built without OpenSSL (engine-only build on a machine without libssl-dev)";
#endif
}

}  // namespace
}  // namespace hearth
