// The real default model's vocabulary (SmolLM2-135M-Instruct): loads from the
// GGUF, and behaves as its tokenizer is documented to. Id-for-id parity with
// HF tokenizers on a large corpus is tokenizer_oracle.py's job.
#include <gtest/gtest.h>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/decoder.h"
#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/catalog.h"

namespace hearth::tokenizer {
namespace {

using Ids = std::vector<TokenId>;

std::shared_ptr<const Vocabulary> load_default() {
  auto path = models::resolve_model(models::builtin_catalog().default_entry().name);
  EXPECT_TRUE(path.ok()) << (path.ok() ? "" : path.error().describe());
  if (!path) return nullptr;
  auto file = gguf::GgufFile::open(*path);
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().describe());
  if (!file) return nullptr;
  auto v = vocabulary_from_gguf(**file);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().describe());
  return v.ok() ? std::move(v).value() : nullptr;
}

TEST(SmolLM2Tokenizer, Metadata) {
  auto v = load_default();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->size(), 49152u);
  EXPECT_EQ(v->kind(), ModelKind::kBpe);
  EXPECT_EQ(v->pre_name(), "smollm");
  EXPECT_EQ(v->token_text(1), "<|im_start|>");
  EXPECT_EQ(v->eos(), 2);
  EXPECT_FALSE(v->add_bos());
  EXPECT_TRUE(v->is_control(0));
  EXPECT_EQ(v->special_tokens().size(), 17u);
}

TEST(SmolLM2Tokenizer, DocumentedBehaviour) {
  auto v = load_default();
  ASSERT_NE(v, nullptr);
  Encoder enc(v);
  const EncodeOptions parse{.add_special = true, .parse_special = true};
  EXPECT_EQ(enc.encode("<|im_start|>user", parse).value().front(), 1);
  EXPECT_GT(enc.encode("<|im_start|>").value().size(), 1u);  // plain text without parse_special
  // Every digit is its own token.
  const Ids digits = {*v->find("2"), *v->find("0"), *v->find("2"), *v->find("4")};
  EXPECT_EQ(enc.encode("2024").value(), digits);
  // A space before a word belongs to the word (byte-level "Ġ").
  EXPECT_EQ(enc.encode(" hello").value(), (Ids{*v->find("\xC4\xA0hello")}));
}

TEST(SmolLM2Tokenizer, RoundTrips) {
  auto v = load_default();
  ASSERT_NE(v, nullptr);
  Encoder enc(v);
  for (const std::string& text : std::vector<std::string>{
           "Hello, world!", "  x = 3.14159;\n\tprint(x)\n", "\xE4\xBD\xA0\xE5\xA5\xBD\xF0\x9F\x98\x80",
           "<|im_start|>user\nhi<|im_end|>\n", std::string(3000, ' ') + "end"}) {
    for (bool special : {false, true}) {
      auto ids = enc.encode(text, {.add_special = true, .parse_special = special});
      ASSERT_TRUE(ids.ok());
      EXPECT_EQ(decode(*v, *ids).value(), text);
    }
  }
}

}  // namespace
}  // namespace hearth::tokenizer
