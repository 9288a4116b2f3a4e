// hearth-cli tokenize MODEL [--json] [--no-special] [--no-bos]: UTF-8 text on
// stdin -> token ids on stdout. hearth-cli detokenize MODEL: a JSON array of
// ids on stdin -> the text, exactly (no trailing newline added).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/decoder.h"
#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/catalog.h"

namespace hearth::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  bool json = false;
  bool no_special = false;  // treat "<|im_start|>" etc. as plain text
  bool no_bos = false;      // do not add BOS / EOS even when the model asks for them
};

std::shared_ptr<const tokenizer::Vocabulary> load_vocabulary(const std::string& model) {
  const auto path = unwrap(models::resolve_model(model));
  const auto file = unwrap(gguf::GgufFile::open(path));
  return unwrap(tokenizer::vocabulary_from_gguf(*file));
}

std::string read_stdin() {
  std::ostringstream ss;
  ss << std::cin.rdbuf();
  return ss.str();
}

void run_tokenize(const TokenizeOptions& opt) {
  auto vocab = load_vocabulary(opt.model);
  tokenizer::EncodeOptions eo;
  eo.parse_special = !opt.no_special;
  eo.add_special = !opt.no_bos;
  const auto ids = unwrap(tokenizer::encode(vocab, read_stdin(), eo));
  if (opt.json) {
    std::cout << nlohmann::json(ids).dump() << "\n";
    return;
  }
  for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

void run_detokenize(const std::string& model) {
  auto vocab = load_vocabulary(model);
  const auto doc = parse_json_input(read_stdin(), "detokenize: stdin");
  if (!doc.is_array()) fail("detokenize: stdin must hold a JSON array of token ids");
  std::vector<tokenizer::TokenId> ids;
  for (const auto& v : doc) {
    if (!v.is_number_integer()) {
      std::string shown = v.dump();  // depth-capped on input, so this recursion is bounded
      if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
      fail("detokenize: every element must be an integer token id, got " + shown);
    }
    const auto id = v.get<std::int64_t>();
    if (id < 0 || id >= static_cast<std::int64_t>(vocab->size())) {
      fail("detokenize: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
           std::to_string(vocab->size() - 1) + ")");
    }
    ids.push_back(static_cast<tokenizer::TokenId>(id));
  }
  const std::string text = unwrap(tokenizer::decode(*vocab, ids));
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void add_tokenize_commands(CLI::App& app) {
  auto opt = std::make_shared<TokenizeOptions>();
  CLI::App* tok = app.add_subcommand("tokenize", "Tokenize UTF-8 text read from stdin");
  tok->add_option("model", opt->model, "Path to a .gguf file or a catalog name")->required();
  tok->add_flag("--json", opt->json, "Print a JSON array");
  tok->add_flag("--no-special", opt->no_special, "Treat special-token text as plain text");
  tok->add_flag("--no-bos", opt->no_bos, "Do not add BOS/EOS tokens");
  tok->callback([opt] { run_tokenize(*opt); });

  auto model = std::make_shared<std::string>();
  CLI::App* detok = app.add_subcommand("detokenize", "Turn a JSON array of token ids (stdin) into text");
  detok->add_option("model", *model, "Path to a .gguf file or a catalog name")->required();
  detok->callback([model] { run_detokenize(*model); });
}

}  // namespace hearth::cli
