#include "engine/core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace hearth {
namespace {

std::string digest_of(const std::string& text, std::size_t chunk) {
  Sha256 h;
  for (std::size_t i = 0; i < text.size(); i += chunk) h.update(text.data() + i, std::min(chunk, text.size() - i));
  return Sha256::hex(h.finish());
}

// FIPS 180-4 example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(digest_of("", 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_of("abc", 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (std::size_t chunk : {1, 3, 63, 64, 1000}) {
    EXPECT_EQ(digest_of(two_blocks, chunk), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        << "chunk " << chunk;
  }
  EXPECT_EQ(digest_of(std::string(1000000, 'a'), 4096),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace hearth
