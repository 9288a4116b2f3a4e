// Files made by GgufWriter, read back by GgufFile: every value type, nested
// arrays, versions 2 and 3, several alignments, tensor placement.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace hearth::gguf {
namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::mt19937& rng) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = static_cast<std::byte>(rng() & 0xFF);
  return b;
}

std::unique_ptr<GgufFile> parse_ok(const std::vector<std::byte>& bytes) {
  auto f = GgufFile::parse(bytes);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().describe());
  return f.ok() ? std::move(f).value() : nullptr;
}

GgufWriter all_scalars_writer(WriterOptions opt) {
  GgufWriter w(opt);
  w.add_scalar<std::uint8_t>("t.u8", 250);
  w.add_scalar<std::int8_t>("t.i8", -100);
  w.add_scalar<std::uint16_t>("t.u16", 65000);
  w.add_scalar<std::int16_t>("t.i16", -32000);
  w.add_scalar<std::uint32_t>("t.u32", 4000000000u);
  w.add_scalar<std::int32_t>("t.i32", -2000000000);
  w.add_scalar<float>("t.f32", 1.5e-7f);
  w.add_scalar<bool>("t.bool", true);
  w.add_string("t.string", "h\xC3\xA9llo \xE2\x9C\x93");
  w.add_scalar<std::uint64_t>("t.u64", std::numeric_limits<std::uint64_t>::max());
  w.add_scalar<std::int64_t>("t.i64", std::numeric_limits<std::int64_t>::min());
  w.add_scalar<double>("t.f64", -3.141592653589793);
  return w;
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<std::uint32_t, std::uint32_t>> {};

TEST_P(RoundTrip, ScalarsArraysAndTensors) {
  const auto [version, alignment] = GetParam();
  std::mt19937 rng(version * 1000 + alignment);
  GgufWriter w = all_scalars_writer({version, alignment});
  const std::vector<std::int32_t> ids = {-1, 0, 7, std::numeric_limits<std::int32_t>::max()};
  const std::vector<float> scores = {0.25f, -1e30f, std::numeric_limits<float>::infinity()};
  const std::vector<std::string> tokens = {"<s>", "", "\xC4\xA0the", "\xF0\x9F\x98\x80"};
  const bool flags[] = {true, false, true};
  w.add_array<std::int32_t>("a.i32", ids);
  w.add_array<float>("a.f32", scores);
  w.add_string_array("a.str", tokens);
  w.add_array<bool>("a.bool", flags);
  w.add_array<double>("a.empty_f64", std::span<const double>());
  // [[1, 2], [], [3]] of u16, and [["x"], [["deep"]]] would mix types, so two arrays.
  w.add("a.nested", WriterValue::array(ValueType::kArray,
                                       {WriterValue::array(ValueType::kU16, {WriterValue::of<std::uint16_t>(1),
                                                                             WriterValue::of<std::uint16_t>(2)}),
                                        WriterValue::array(ValueType::kU16, {}),
                                        WriterValue::array(ValueType::kU16, {WriterValue::of<std::uint16_t>(3)})}));

  const auto f32_data = random_bytes(4 * 3 * 5, rng);
  const auto q8_data = random_bytes(34 * 2 * 3, rng);
  const auto q4k_data = random_bytes(144 * 2, rng);
  w.add_tensor("f32.weight", GgmlType::kF32, {3, 5}, f32_data);
  w.add_tensor("q8.weight", GgmlType::kQ8_0, {64, 3}, q8_data);
  w.add_tensor("empty", GgmlType::kF16, {0, 4}, std::vector<std::byte>{});
  w.add_tensor("q4k.weight", GgmlType::kQ4_K, {256, 1, 2}, [&](std::span<std::byte> out) {
    ASSERT_EQ(out.size(), q4k_data.size());
    std::copy(q4k_data.begin(), q4k_data.end(), out.begin());
  });
  auto bytes = w.to_bytes();
  ASSERT_TRUE(bytes.ok()) << bytes.error().describe();
  auto f = parse_ok(*bytes);
  ASSERT_NE(f, nullptr);

  EXPECT_EQ(f->version(), version);
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  EXPECT_EQ(f->get<std::uint8_t>("t.u8").value(), 250);
  EXPECT_EQ(f->get<std::int8_t>("t.i8").value(), -100);
  EXPECT_EQ(f->get<std::uint16_t>("t.u16").value(), 65000);
  EXPECT_EQ(f->get<std::int16_t>("t.i16").value(), -32000);
  EXPECT_EQ(f->get<std::uint32_t>("t.u32").value(), 4000000000u);
  EXPECT_EQ(f->get<std::int32_t>("t.i32").value(), -2000000000);
  EXPECT_EQ(f->get<float>("t.f32").value(), 1.5e-7f);
  EXPECT_EQ(f->get<bool>("t.bool").value(), true);
  EXPECT_EQ(f->get_string("t.string").value(), "h\xC3\xA9llo \xE2\x9C\x93");
  EXPECT_EQ(f->get<std::uint64_t>("t.u64").value(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(f->get<std::int64_t>("t.i64").value(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(f->get<double>("t.f64").value(), -3.141592653589793);

  EXPECT_EQ(f->get_numeric_array<std::int32_t>("a.i32")->to_vector(), ids);
  auto sc = f->get_numeric_array<float>("a.f32").value();
  ASSERT_EQ(sc.size(), 3u);
  EXPECT_EQ(sc[1], -1e30f);
  EXPECT_TRUE(std::isinf(sc[2]));
  auto strs = f->get_string_array("a.str").value();
  ASSERT_EQ(strs.size(), tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(strs[i], tokens[i]);
  EXPECT_EQ(f->get_numeric_array<bool>("a.bool")->to_vector(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(f->get_array("a.empty_f64").value()->size(), 0u);
  const ArrayValue* nested = f->get_array("a.nested").value();
  ASSERT_EQ(nested->element_type(), ValueType::kArray);
  ASSERT_EQ(nested->arrays().size(), 3u);
  EXPECT_EQ(nested->arrays()[0].as_numeric<std::uint16_t>()->to_vector(), (std::vector<std::uint16_t>{1, 2}));
  EXPECT_EQ(nested->arrays()[1].size(), 0u);
  EXPECT_EQ(nested->element(2).as_array()->element(0).as<std::uint16_t>(), 3);

  // Keys in file order (general.alignment first when not the default).
  std::vector<std::string_view> keys;
  for (const KeyValue& kv : f->metadata()) keys.push_back(kv.key);
  const std::size_t first = alignment != kDefaultAlignment ? 1 : 0;
  ASSERT_EQ(keys.size(), 18 + first);
  EXPECT_EQ(keys[first], "t.u8");
  EXPECT_EQ(keys.back(), "a.nested");

  ASSERT_EQ(f->tensors().size(), 4u);
  const TensorInfo* t = f->tensor("q8.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, GgmlType::kQ8_0);
  EXPECT_EQ(t->n_dims, 2u);
  EXPECT_EQ(t->ne[0], 64);
  EXPECT_EQ(t->ne[1], 3);
  EXPECT_EQ(t->ne[2], 1);
  EXPECT_EQ(t->n_bytes, q8_data.size());
  EXPECT_EQ(t->row_bytes(), 68u);
  EXPECT_EQ(t->file_offset % alignment, 0u);
  EXPECT_TRUE(std::equal(q8_data.begin(), q8_data.end(), t->bytes().begin()));
  EXPECT_TRUE(std::equal(f32_data.begin(), f32_data.end(), f->tensor("f32.weight")->bytes().begin()));
  EXPECT_TRUE(std::equal(q4k_data.begin(), q4k_data.end(), f->tensor("q4k.weight")->bytes().begin()));
  EXPECT_EQ(f->tensor("empty")->n_bytes, 0u);
  EXPECT_EQ(f->tensor("missing"), nullptr);
  EXPECT_EQ(f->tensors()[3].name, "q4k.weight");
}

INSTANTIATE_TEST_SUITE_P(VersionsAndAlignments, RoundTrip,
                         ::testing::Combine(::testing::Values(2u, 3u), ::testing::Values(32u, 64u, 1u, 8u, 4096u)));

TEST(GgufAccessors, TypeErrorsNameKeyAndTypes) {
  GgufWriter w;
  w.add_scalar<std::uint64_t>("llama.block_count", 30);
  w.add_scalar<std::int32_t>("neg", -5);
  w.add_scalar<std::uint64_t>("huge", std::numeric_limits<std::uint64_t>::max());
  w.add_scalar<float>("eps", 1e-5f);
  const std::vector<std::int32_t> v = {1, 2};
  w.add_array<std::int32_t>("ids", v);
  auto bytes = w.to_bytes();
  ASSERT_TRUE(bytes.ok());
  auto f = parse_ok(*bytes);
  ASSERT_NE(f, nullptr);

  auto wrong = f->get<std::uint32_t>("llama.block_count");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "key 'llama.block_count' has type u64, expected u32");
  auto missing = f->get<std::uint32_t>("llama.nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("llama.nope"), std::string::npos);

  EXPECT_EQ(f->get_uint("llama.block_count").value(), 30u);
  EXPECT_EQ(f->get_int("llama.block_count").value(), 30);
  EXPECT_FALSE(f->get_uint("neg").ok());
  EXPECT_EQ(f->get_int("neg").value(), -5);
  EXPECT_EQ(f->get_uint("huge").value(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_FALSE(f->get_int("huge").ok());
  EXPECT_FALSE(f->get_uint("eps").ok());
  EXPECT_EQ(f->get_float("eps").value(), static_cast<double>(1e-5f));

  auto arr = f->get_numeric_array<float>("ids");
  ASSERT_FALSE(arr.ok());
  EXPECT_EQ(arr.error().message, "key 'ids' has type array of i32, expected array of f32");
  EXPECT_FALSE(f->get_string_array("ids").ok());
  EXPECT_FALSE(f->get_array("eps").ok());
  EXPECT_EQ(f->find("eps")->type(), ValueType::kF32);
  EXPECT_EQ(f->find("nope"), nullptr);
}

TEST(GgufWriterValidation, RejectsWhatTheReaderWould) {
  auto fails = [](auto build) {
    GgufWriter w;
    build(w);
    return !w.to_bytes().ok();
  };
  EXPECT_TRUE(fails([](GgufWriter& w) { w.add_scalar<std::uint8_t>("", 1); }));
  EXPECT_TRUE(fails([](GgufWriter& w) {
    w.add_scalar<std::uint8_t>("k", 1);
    w.add_scalar<std::uint8_t>("k", 2);
  }));
  EXPECT_TRUE(fails([](GgufWriter& w) { w.add_string("k", "\xFF"); }));
  EXPECT_TRUE(fails([](GgufWriter& w) { w.add_scalar<std::uint32_t>("general.alignment", 64); }));
  EXPECT_TRUE(
      fails([](GgufWriter& w) { w.add("k", WriterValue::array(ValueType::kU8, {WriterValue::of<std::int8_t>(1)})); }));
  EXPECT_TRUE(fails([](GgufWriter& w) { w.add_tensor("t", GgmlType::kQ4_0, {31}, std::vector<std::byte>(18)); }));
  EXPECT_TRUE(fails([](GgufWriter& w) { w.add_tensor("t", GgmlType::kF32, {4}, std::vector<std::byte>(15)); }));
  EXPECT_TRUE(fails([](GgufWriter& w) {
    w.add_tensor("t", GgmlType::kF32, {1}, std::vector<std::byte>(4));
    w.add_tensor("t", GgmlType::kF32, {1}, std::vector<std::byte>(4));
  }));
  EXPECT_TRUE(fails([](GgufWriter& w) {
    w.add_tensor("t", GgmlType::kF32, {1, 1, 1, 1, 1}, std::vector<std::byte>(4));
  }));
  EXPECT_FALSE(GgufWriter(WriterOptions{3, 48}).to_bytes().ok());
  EXPECT_FALSE(GgufWriter(WriterOptions{1, 32}).to_bytes().ok());
  EXPECT_TRUE(GgufWriter(WriterOptions{3, 64}).to_bytes().ok());
}

}  // namespace
}  // namespace hearth::gguf
