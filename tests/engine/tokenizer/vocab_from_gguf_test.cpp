// vocabulary_from_gguf on small GGUF images made with the writer: good files
// load, bad vocabulary metadata gives errors naming the key.
#include "engine/tokenizer/vocab_from_gguf.h"

#include <gtest/gtest.h>

#include <functional>

#include "engine/gguf/gguf_writer.h"
#include "engine/tokenizer/encoder.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

using gguf::GgufWriter;
using gguf::ValueType;
using gguf::WriterValue;

// A byte-level vocabulary: 256 byte tokens, "ab" (256), "<eos>" (257, control).
struct Spec {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  std::vector<float> scores;
  std::vector<std::string> merges = {"a b"};
};

Spec base_spec() {
  Spec s;
  VocabularyData d = testing::byte_level({"ab"}, {});
  s.tokens = d.tokens;
  s.tokens.push_back("<eos>");
  s.types.assign(s.tokens.size(), 1);
  s.types.back() = 3;
  s.scores.assign(s.tokens.size(), 0.0f);
  return s;
}

using Mutation = std::function<void(GgufWriter&)>;

// Writes the spec without the key `skip`, then `extra`'s keys, parses the
// image and loads its vocabulary.
Result<std::shared_ptr<const Vocabulary>> load(const Spec& s, const Mutation& extra = {}, std::string skip = "") {
  GgufWriter w;
  auto add = [&](const std::string& k, auto fn) {
    if (k != skip) fn(k);
  };
  add("tokenizer.ggml.model", [&](const std::string& k) { w.add_string(k, "gpt2"); });
  add("tokenizer.ggml.pre", [&](const std::string& k) { w.add_string(k, "gpt2"); });
  add("tokenizer.ggml.tokens", [&](const std::string& k) { w.add_string_array(k, std::span(s.tokens)); });
  add("tokenizer.ggml.token_type", [&](const std::string& k) { w.add_array<std::int32_t>(k, s.types); });
  add("tokenizer.ggml.scores", [&](const std::string& k) { w.add_array<float>(k, s.scores); });
  add("tokenizer.ggml.merges", [&](const std::string& k) { w.add_string_array(k, std::span(s.merges)); });
  add("tokenizer.ggml.eos_token_id", [&](const std::string& k) { w.add_scalar<std::uint32_t>(k, 257); });
  if (extra) extra(w);
  HEARTH_ASSIGN_OR_RETURN(auto bytes, w.to_bytes());
  auto image = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  HEARTH_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::parse(*image));
  return vocabulary_from_gguf(*file);  // the vocabulary copies what it keeps
}

TEST(VocabFromGguf, LoadsAGoodFile) {
  auto v = load(base_spec(), [](GgufWriter& w) {
    w.add_scalar<bool>("tokenizer.ggml.add_eos_token", true);
    w.add_scalar<std::uint32_t>("tokenizer.ggml.eot_token_id", 257);
  });
  ASSERT_TRUE(v.ok()) << v.error().describe();
  const Vocabulary& voc = **v;
  EXPECT_EQ(voc.size(), 258u);
  EXPECT_EQ(voc.eos(), 257);
  EXPECT_EQ(voc.eot(), 257);
  EXPECT_EQ(voc.bos(), std::nullopt);
  EXPECT_TRUE(voc.add_eos());
  EXPECT_FALSE(voc.add_bos());
  EXPECT_EQ(voc.token_type(257), TokenType::kControl);
  EXPECT_EQ(encode(*v, "abc").value(), (std::vector<TokenId>{256, 'c', 257}));
}

TEST(VocabFromGguf, BadMetadataNamesTheKey) {
  struct Case {
    const char* name;
    std::function<void(Spec&)> spec;
    Mutation extra;
    std::string skip;
    const char* message_part;
  };
  const Case cases[] = {
      {"no model", {}, {}, "tokenizer.ggml.model", "tokenizer.ggml.model"},
      {"no tokens", {}, {}, "tokenizer.ggml.tokens", "tokenizer.ggml.tokens"},
      {"short scores", [](Spec& s) { s.scores.pop_back(); }, {}, "", "tokenizer.ggml.scores"},
      {"long types", [](Spec& s) { s.types.push_back(1); }, {}, "", "tokenizer.ggml.token_type"},
      {"types as f32",
       {},
       [](GgufWriter& w) {
         const std::vector<float> f(258, 1.0f);
         w.add_array<float>("tokenizer.ggml.token_type", f);
       },
       "tokenizer.ggml.token_type",
       "tokenizer.ggml.token_type"},
      {"scores as i32",
       {},
       [](GgufWriter& w) {
         const std::vector<std::int32_t> i(258, 0);
         w.add_array<std::int32_t>("tokenizer.ggml.scores", i);
       },
       "tokenizer.ggml.scores",
       "tokenizer.ggml.scores"},
      {"tokens as i32",
       {},
       [](GgufWriter& w) {
         const std::vector<std::int32_t> i(258, 0);
         w.add_array<std::int32_t>("tokenizer.ggml.tokens", i);
       },
       "tokenizer.ggml.tokens",
       "tokenizer.ggml.tokens"},
      {"bos out of range",
       {},
       [](GgufWriter& w) { w.add_scalar<std::uint32_t>("tokenizer.ggml.bos_token_id", 258); },
       "",
       "tokenizer.ggml.bos_token_id"},
      {"eos as string",
       {},
       [](GgufWriter& w) { w.add_string("tokenizer.ggml.eos_token_id", "2"); },
       "tokenizer.ggml.eos_token_id",
       "tokenizer.ggml.eos_token_id"},
      {"add_bos as u8",
       {},
       [](GgufWriter& w) { w.add_scalar<std::uint8_t>("tokenizer.ggml.add_bos_token", 1); },
       "",
       "tokenizer.ggml.add_bos_token"},
      {"bad merge", [](Spec& s) { s.merges.push_back("a q"); }, {}, "", "tokenizer.ggml.merges[1]"},
      {"bad type value", [](Spec& s) { s.types[5] = 42; }, {}, "", "token_type[5]"},
  };
  for (const auto& c : cases) {
    Spec s = base_spec();
    if (c.spec) c.spec(s);
    auto v = load(s, c.extra, c.skip);
    ASSERT_FALSE(v.ok()) << c.name;
    EXPECT_NE(v.error().message.find(c.message_part), std::string::npos) << c.name << ": " << v.error().describe();
  }
}

}  // namespace
}  // namespace hearth::tokenizer
