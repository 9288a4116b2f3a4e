// Hostile and corrupt GGUF input: every case is a clean Error naming the field
// and the byte offset, never a crash or an unbounded allocation.

// g++ 13 at -O3 (the H200 machine's compiler) reports a false -Warray-bounds
// inside libstdc++'s copy loop for the mutated buffers built here (its range
// analysis loses the bound on the cut); the buffers are checked by ASan runs.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 13
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif

#include <gtest/gtest.h>

#include <limits>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "tests/engine/gguf/raw_gguf.h"

namespace hearth::gguf {
namespace {

using testing::RawGguf;

constexpr std::uint64_t kHuge = std::uint64_t{1} << 60;
constexpr std::uint32_t kF32 = 0;

// Every error says where: "(at byte N)", or, for tensor data cut short, the
// bytes present and the size the file must have ("incomplete file: N of M bytes present ...").
bool locates(const std::string& message) {
  return message.find("(at byte ") != std::string::npos || message.starts_with("incomplete file: ");
}

// Parses and expects an error of `code` whose message contains every fragment.
void expect_error(const std::vector<std::byte>& bytes, ErrorCode code, std::vector<std::string> fragments) {
  auto f = GgufFile::parse(bytes);
  ASSERT_FALSE(f.ok()) << "parsed a bad file";
  EXPECT_EQ(f.error().code, code) << f.error().describe();
  EXPECT_TRUE(locates(f.error().message)) << f.error().message;
  for (const auto& frag : fragments) EXPECT_NE(f.error().message.find(frag), std::string::npos) << f.error().message;
}

// One kv, one F32 tensor of 8 elements whose data ends the file exactly (no
// trailing padding), so every strict prefix is invalid.
std::vector<std::byte> small_valid_file() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  const std::vector<std::string> toks = {"a", "b"};
  w.add_string_array("tokenizer.ggml.tokens", toks);
  w.add("nested", WriterValue::array(ValueType::kArray,
                                     {WriterValue::array(ValueType::kI8, {WriterValue::of<std::int8_t>(-1)})}));
  std::vector<std::byte> data(32);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i + 1);
  w.add_tensor("a", GgmlType::kF32, {8}, data);
  return w.to_bytes().value();
}

TEST(GgufHostile, TruncationAtEveryOffsetIsAnError) {
  const auto full = small_valid_file();
  ASSERT_TRUE(GgufFile::parse(full).ok());
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto f = GgufFile::parse(cut);
    ASSERT_FALSE(f.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_TRUE(locates(f.error().message)) << f.error().message;
  }
}

TEST(GgufHostile, EveryByteFlipParsesOrFailsCleanly) {
  const auto full = small_valid_file();
  for (std::size_t i = 0; i < full.size(); ++i) {
    for (unsigned v : {0x00u, 0x7Fu, 0x80u, 0xFFu}) {
      auto bad = full;
      bad[i] = static_cast<std::byte>(v);
      auto f = GgufFile::parse(bad);
      if (f.ok()) {  // touch everything a valid result offers
        for (const KeyValue& kv : f.value()->metadata()) (void)kv.value.type();
        for (const TensorInfo& t : f.value()->tensors()) ASSERT_LE(t.file_offset + t.n_bytes, bad.size());
      }
    }
  }
}

TEST(GgufHostile, BadMagicAndVersions) {
  expect_error(RawGguf().raw("GGUG", 4).u32(3).u64(0).u64(0).bytes, ErrorCode::kCorruptFile, {"magic"});
  expect_error(RawGguf().header(1, 0, 0).bytes, ErrorCode::kUnsupported, {"version 1"});
  expect_error(RawGguf().header(4, 0, 0).bytes, ErrorCode::kUnsupported, {"version 4"});
  expect_error(RawGguf().header(0x03000000, 0, 0).bytes, ErrorCode::kUnsupported, {"big-endian"});
  EXPECT_TRUE(GgufFile::parse(RawGguf().header(2, 0, 0).bytes).ok());
  EXPECT_TRUE(GgufFile::parse(RawGguf().header(3, 0, 0).bytes).ok());
}

TEST(GgufHostile, LyingCounts) {
  expect_error(RawGguf().header(3, kHuge, 0).bytes, ErrorCode::kCorruptFile, {"tensor count", "at byte 8"});
  expect_error(RawGguf().header(3, 0, kHuge).bytes, ErrorCode::kCorruptFile, {"metadata count", "at byte 16"});
  expect_error(RawGguf().header(3, 0, 1).u64(kHuge).raw("k", 1).u32(4).u32(0).bytes, ErrorCode::kCorruptFile,
               {"metadata entry 0 key", "length", "at byte 24"});
  expect_error(RawGguf().header(3, 0, 1).str("k").u32(8).u64(std::numeric_limits<std::uint64_t>::max()).bytes,
               ErrorCode::kCorruptFile, {"key 'k'", "length"});
  for (std::uint32_t elem : {0u, 6u, 8u, 9u, 12u}) {  // u8, f32, string, array, f64
    expect_error(RawGguf().header(3, 0, 1).str("arr").u32(9).u32(elem).u64(kHuge).zeros(64).bytes,
                 ErrorCode::kCorruptFile, {"key 'arr'", "array length 1152921504606846976", "at byte 39"});
  }
  // A string element whose length lies, inside an honest-looking array.
  expect_error(RawGguf().header(3, 0, 1).str("arr").u32(9).u32(8).u64(2).str("ok").u64(kHuge).bytes,
               ErrorCode::kCorruptFile, {"key 'arr' element 1", "length"});
  expect_error(RawGguf().header(3, 1, 0).str("t").u32(0x7FFFFFFF).zeros(64).bytes, ErrorCode::kCorruptFile,
               {"tensor 't'", "n_dims 2147483647"});
  expect_error(
      RawGguf().header(3, 1, 0).tensor_info("t", {std::int64_t{1} << 62, std::int64_t{1} << 62}, kF32, 0).bytes,
      ErrorCode::kCorruptFile, {"tensor 't'", "overflow"});
  expect_error(RawGguf().header(3, 1, 0).tensor_info("t", {-1}, kF32, 0).bytes, ErrorCode::kCorruptFile,
               {"tensor 't'", "ne[0] is negative"});
}

TEST(GgufHostile, ByteSizeOverflowAndBlockSize) {
  // Q4_0: 2^62 elements (a multiple of 32) times 18/32 bytes overflows 63 bits only through a second dim.
  expect_error(RawGguf().header(3, 1, 0).tensor_info("q", {std::int64_t{1} << 61, 16}, 2, 0).bytes,
               ErrorCode::kCorruptFile, {"tensor 'q'"});
  expect_error(RawGguf().header(3, 1, 0).tensor_info("q", {33, 2}, 2, 0).bytes, ErrorCode::kCorruptFile,
               {"tensor 'q'", "not a multiple of Q4_0 block size 32"});
}

TEST(GgufHostile, BadAlignment) {
  for (std::uint32_t a : {0u, 48u, 3u}) {
    expect_error(RawGguf().header(3, 0, 1).kv_u32("general.alignment", a).bytes, ErrorCode::kCorruptFile,
                 {"general.alignment", "power of two", "at byte 24"});
  }
  expect_error(RawGguf().header(3, 0, 1).str("general.alignment").u32(10).u64(32).bytes, ErrorCode::kCorruptFile,
               {"general.alignment", "type u64, expected u32"});
}

TEST(GgufHostile, UnknownTypes) {
  expect_error(RawGguf().header(3, 0, 1).str("k").u32(13).u32(0).bytes, ErrorCode::kCorruptFile,
               {"key 'k'", "unknown value type 13", "at byte 33"});
  expect_error(RawGguf().header(3, 0, 1).str("k").u32(0xFFFFFFFF).u32(0).bytes, ErrorCode::kCorruptFile,
               {"unknown value type 4294967295"});
  expect_error(RawGguf().header(3, 0, 1).str("k").u32(9).u32(77).u64(0).bytes, ErrorCode::kCorruptFile,
               {"key 'k'", "unknown array element type 77"});
  for (std::uint32_t t : {4u, 5u, 31u, 99u}) {
    expect_error(RawGguf().header(3, 1, 0).tensor_info("t", {32}, t, 0).pad_to(32).zeros(512).bytes,
                 ErrorCode::kUnsupported, {"tensor 't'", "unknown ggml type " + std::to_string(t)});
  }
  expect_error(RawGguf().header(3, 0, 1).str("b").u32(7).u8(2).bytes, ErrorCode::kCorruptFile, {"key 'b'", "bool"});
}

TEST(GgufHostile, DuplicatesAndEmptyNames) {
  expect_error(RawGguf().header(3, 0, 2).kv_u32("k", 1).kv_u32("k", 2).bytes, ErrorCode::kCorruptFile,
               {"duplicate key 'k'", "at byte 41"});
  expect_error(RawGguf().header(3, 0, 1).kv_u32("", 1).bytes, ErrorCode::kCorruptFile, {"empty key", "at byte 24"});
  auto dup =
      RawGguf().header(3, 2, 0).tensor_info("t", {8}, kF32, 0).tensor_info("t", {8}, kF32, 32).pad_to(32).zeros(64);
  expect_error(dup.bytes, ErrorCode::kCorruptFile, {"duplicate tensor 't'"});
  expect_error(RawGguf().header(3, 1, 0).tensor_info("", {8}, kF32, 0).pad_to(32).zeros(32).bytes,
               ErrorCode::kCorruptFile, {"empty name"});
}

TEST(GgufHostile, TensorPlacement) {
  // Misaligned: offset 123 with alignment 32; the message names tensor, offset and alignment.
  auto mis = RawGguf().header(3, 1, 0).tensor_info("blk.0.attn_q.weight", {8}, kF32, 123).pad_to(32).zeros(256);
  const std::size_t offset_field = 24 + 8 + 19 + 4 + 8 + 4;
  expect_error(mis.bytes, ErrorCode::kCorruptFile,
               {"tensor 'blk.0.attn_q.weight': offset 123 is not a multiple of alignment 32 (at byte " +
                std::to_string(offset_field) + ")"});
  // Overlap: 'b' starts inside 'a' (a is 64 bytes, b at 32).
  auto overlap =
      RawGguf().header(3, 2, 0).tensor_info("a", {16}, kF32, 0).tensor_info("b", {8}, kF32, 32).pad_to(32).zeros(96);
  expect_error(overlap.bytes, ErrorCode::kCorruptFile, {"tensor 'b'", "overlaps tensor 'a'"});
  // Past the end: 64 bytes of data needed, 32 present: an incomplete file (the
  // data starts at byte 64, so the file must be 128 bytes and is 96).
  auto past = RawGguf().header(3, 1, 0).tensor_info("a", {16}, kF32, 0).pad_to(32).zeros(32);
  expect_error(past.bytes, ErrorCode::kCorruptFile,
               {"incomplete file: 96 of 128 bytes present (the tensor data ends at byte 128)"});
  auto partial = GgufFile::parse(past.bytes, OpenOptions{true});  // inspect's view: metadata, no data
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_TRUE((*partial)->incomplete());
  EXPECT_EQ((*partial)->data_end(), 128u);
  EXPECT_EQ((*partial)->tensor("a")->data, nullptr);
  // An offset near 2^64 must not wrap around.
  auto wrap = RawGguf().header(3, 1, 0).tensor_info("a", {8}, kF32, ~std::uint64_t{31}).pad_to(32).zeros(64);
  expect_error(wrap.bytes, ErrorCode::kCorruptFile, {"tensor 'a'", "past the end"});
  // Adjacent and out of order is fine.
  auto ok =
      RawGguf().header(3, 2, 0).tensor_info("b", {8}, kF32, 32).tensor_info("a", {8}, kF32, 0).pad_to(32).zeros(64);
  EXPECT_TRUE(GgufFile::parse(ok.bytes).ok());
}

TEST(GgufHostile, NonUtf8) {
  for (std::string_view bad : {"\xFF", "\xC0\xAF", "\xED\xA0\x80", "a\xE2\x82", "\xF4\x90\x80\x80", "\x80"}) {
    expect_error(RawGguf().header(3, 0, 1).kv_u32(bad, 1).bytes, ErrorCode::kCorruptFile, {"not valid UTF-8"});
    expect_error(RawGguf().header(3, 0, 1).kv_str("k", bad).bytes, ErrorCode::kCorruptFile,
                 {"key 'k'", "not valid UTF-8"});
    expect_error(RawGguf().header(3, 0, 1).str("k").u32(9).u32(8).u64(2).str("fine").str(bad).bytes,
                 ErrorCode::kCorruptFile, {"key 'k' element 1", "not valid UTF-8", "at byte 61"});
    expect_error(RawGguf().header(3, 1, 0).tensor_info(bad, {8}, kF32, 0).pad_to(32).zeros(32).bytes,
                 ErrorCode::kCorruptFile, {"tensor 0 name", "not valid UTF-8"});
  }
}

TEST(GgufHostile, NestingDepthIsCapped) {
  RawGguf r;
  r.header(3, 0, 1).str("deep").u32(9);
  for (int i = 0; i < 9; ++i) r.u32(9).u64(1);
  r.u32(0).u64(0);
  expect_error(r.bytes, ErrorCode::kCorruptFile, {"key 'deep'", "nested deeper than 8"});
  RawGguf ok;
  ok.header(3, 0, 1).str("deep").u32(9);
  for (int i = 0; i < 7; ++i) ok.u32(9).u64(1);
  ok.u32(0).u64(0);
  EXPECT_TRUE(GgufFile::parse(ok.bytes).ok());
}

}  // namespace
}  // namespace hearth::gguf
