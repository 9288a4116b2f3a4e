// libFuzzer harness for the tokenizer. The first input byte picks a
// vocabulary and an operation; the rest is the operation's input:
//   encode  arbitrary bytes: invalid UTF-8 must be a kInvalidArgument error,
//           valid text must encode, and byte-level BPE must decode back to it;
//   decode  arbitrary int32 ids (some unknown): decode_bytes fails exactly when
//           an id is unknown, decode() and the streaming detokenizer hand out
//           valid UTF-8 only and agree with each other.
// Vocabularies: a tiny byte-level BPE and a tiny SentencePiece one built here,
// and the real default model's (SmolLM2) when its file exists: the path in
// $HEARTH_FUZZ_MODEL, else the catalog's installed default model.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/byte_unicode.h"
#include "engine/tokenizer/decoder.h"
#include "engine/tokenizer/encoder.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/catalog.h"

namespace {

using namespace hearth;
using namespace hearth::tokenizer;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

std::shared_ptr<const Vocabulary> tiny_bpe() {
  VocabularyData d;
  d.model = "gpt2";
  d.pre = "smollm";
  for (unsigned b = 0; b < 256; ++b) d.tokens.push_back(byte_to_unicode_utf8()[b]);
  for (const char* t : {"Ġt", "he", "Ġthe", "in", "Ġin", "<|im_start|>", "<|im_end|>", "<think>"})
    d.tokens.push_back(t);
  d.token_types.assign(d.tokens.size(), static_cast<std::int32_t>(TokenType::kNormal));
  d.token_types[261] = d.token_types[262] = static_cast<std::int32_t>(TokenType::kControl);
  d.token_types[263] = static_cast<std::int32_t>(TokenType::kUserDefined);
  d.merges = {"Ġ t", "h e", "Ġt he", "i n", "Ġ in"};
  d.bos = 261;
  d.eos = 262;
  auto v = Vocabulary::create(std::move(d));
  require(v.ok());
  return *v;
}

std::shared_ptr<const Vocabulary> tiny_spm() {
  VocabularyData d;
  d.model = "llama";
  auto add = [&d](std::string text, TokenType type, float score) {
    d.tokens.push_back(std::move(text));
    d.token_types.push_back(static_cast<std::int32_t>(type));
    d.scores.push_back(score);
  };
  add("<unk>", TokenType::kUnknown, 0.0f);
  add("<s>", TokenType::kControl, 0.0f);
  add("</s>", TokenType::kControl, 0.0f);
  for (unsigned b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    add(hex, TokenType::kByte, 0.0f);
  }
  const char* normal[] = {"\xE2\x96\x81",
                          "a",
                          "b",
                          "c",
                          "\xE2\x96\x81"
                          "a",
                          "ab",
                          "bc",
                          "abc",
                          "\xE2\x96\x81"
                          "ab",
                          "\xC3\xA9",
                          "\xE4\xB8\xAD"};
  float score = -1.0f;
  for (const char* t : normal) add(t, TokenType::kNormal, score -= 1.0f);
  add("  ", TokenType::kUserDefined, 0.0f);
  add("<start_of_turn>", TokenType::kControl, 0.0f);
  d.unk = 0;
  d.bos = 1;
  d.eos = 2;
  d.add_bos = true;
  d.add_space_prefix = true;
  auto v = Vocabulary::create(std::move(d));
  require(v.ok());
  return *v;
}

std::shared_ptr<const Vocabulary> real_model() {
  std::filesystem::path path;
  if (const char* env = std::getenv("HEARTH_FUZZ_MODEL")) {
    path = env;
  } else {
    auto resolved = models::resolve_model(models::builtin_catalog().default_entry().name);
    if (!resolved) return nullptr;
    path = *resolved;
  }
  auto file = gguf::GgufFile::open(path);
  if (!file) return nullptr;
  auto v = vocabulary_from_gguf(**file);
  return v ? *v : nullptr;
}

struct Vocabs {
  std::vector<std::shared_ptr<const Vocabulary>> all;  // [0] BPE, [1] SPM, [2] the real model if found
  std::vector<Encoder> encoders;                       // one per vocabulary (cache reuse across inputs)
};

Vocabs& vocabs() {
  static Vocabs v = [] {
    Vocabs out;
    out.all = {tiny_bpe(), tiny_spm()};
    if (auto real = real_model()) out.all.push_back(std::move(real));
    for (const auto& voc : out.all) out.encoders.emplace_back(voc);
    return out;
  }();
  return v;
}

void fuzz_encode(Encoder& enc, std::string_view text, std::uint8_t flags) {
  const EncodeOptions options{.add_special = (flags & 1) != 0, .parse_special = (flags & 2) != 0};
  auto ids = enc.encode(text, options);
  const bool valid = !find_invalid_utf8(text).has_value();
  require(ids.ok() == valid);
  if (!ids) {
    require(ids.error().code == ErrorCode::kInvalidArgument);
    return;
  }
  const Vocabulary& v = enc.vocabulary();
  for (TokenId id : *ids) require(v.contains(id));
  // Byte-level BPE is lossless, except for bytes the vocabulary lacks (dropped).
  bool all_bytes = true;
  for (char c : text) all_bytes &= v.byte_token(static_cast<unsigned char>(c)).has_value();
  if (v.kind() == ModelKind::kBpe && !options.add_special && all_bytes) {
    auto back = decode_bytes(v, *ids);
    require(back.ok() && *back == text);
  }
}

void fuzz_decode(const std::shared_ptr<const Vocabulary>& v, std::span<const std::uint8_t> bytes, std::uint8_t flags) {
  std::vector<TokenId> ids(bytes.size() / 4);
  if (!ids.empty()) std::memcpy(ids.data(), bytes.data(), ids.size() * 4);
  // Most ids land in the vocabulary; a few stay arbitrary (mostly unknown).
  const auto n = static_cast<std::uint32_t>(v->size());
  for (TokenId& id : ids) {
    if ((static_cast<std::uint32_t>(id) >> 28) != 0xF) id = static_cast<TokenId>(static_cast<std::uint32_t>(id) % n);
  }
  const DecodeOptions options{.render_special = (flags & 1) != 0, .strip_space_prefix = (flags & 2) != 0};
  bool any_unknown = false;
  for (TokenId id : ids) any_unknown |= !v->contains(id);
  auto bytes_out = decode_bytes(*v, ids, options);
  require(bytes_out.ok() != any_unknown);
  auto text = decode(*v, ids, options);
  require(text.ok() != any_unknown);
  if (text) require(!find_invalid_utf8(*text).has_value());

  StreamingDetokenizer stream(v, options);
  std::string streamed;
  for (TokenId id : ids) {
    auto piece = stream.push(id);
    require(piece.ok() == v->contains(id));
    if (!piece) continue;
    require(!find_invalid_utf8(*piece).has_value());
    streamed += *piece;
  }
  streamed += stream.flush();
  require(!find_invalid_utf8(streamed).has_value());
  if (text) require(streamed == *text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Vocabs& v = vocabs();
  const std::uint8_t selector = data[0];
  const std::size_t which = (selector >> 4) % v.all.size();
  const auto rest = std::span<const std::uint8_t>(data + 1, size - 1);
  if ((selector & 8) == 0) {
    fuzz_encode(v.encoders[which], std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()), selector);
  } else {
    fuzz_decode(v.all[which], rest, selector);
  }
  return 0;
}
