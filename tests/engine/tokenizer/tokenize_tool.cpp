// Test and benchmark driver for the tokenizer (the oracle script runs it).
//   tokenize_tool MODEL encode [--parse-special] [--no-add-special]   stdin text -> JSON ids
//   tokenize_tool MODEL batch IN.json OUT.json [--parse-special]      JSON array of strings ->
//       {"ids": [[...], ...], "roundtrip_failures": [index, ...]} (no BOS/EOS; decode(encode(x)) checked)
//       [--decoded]: also "decoded": [decode(encode(x)), ...] (invalid UTF-8 as U+FFFD)
//   tokenize_tool MODEL bench FILE [--repeat N]                       MB/s of encoding FILE's text
//   tokenize_tool MODEL path                                          the resolved model file
// MODEL is a path, a catalog name, or "default".
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/decoder.h"
#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/catalog.h"

namespace {

using namespace hearth;
using namespace hearth::tokenizer;

bool has_flag(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == flag) return true;
  }
  return false;
}

Result<std::filesystem::path> model_path(std::string_view model) {
  const std::string name = model == "default" ? models::builtin_catalog().default_entry().name : std::string(model);
  return models::resolve_model(name);
}

Result<std::shared_ptr<const Vocabulary>> load(std::string_view model) {
  HEARTH_ASSIGN_OR_RETURN(auto path, model_path(model));
  HEARTH_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path));
  return vocabulary_from_gguf(*file);
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int fail(const Error& e) {
  std::cerr << "error: " << e.describe() << "\n";
  return 1;
}

int run_encode(const std::shared_ptr<const Vocabulary>& v, int argc, char** argv) {
  std::stringstream ss;
  ss << std::cin.rdbuf();
  EncodeOptions o{.add_special = !has_flag(argc, argv, "--no-add-special"),
                  .parse_special = has_flag(argc, argv, "--parse-special")};
  auto ids = encode(v, ss.str(), o);
  if (!ids) return fail(ids.error());
  std::cout << nlohmann::json(*ids).dump() << "\n";
  return 0;
}

int run_batch(const std::shared_ptr<const Vocabulary>& v, int argc, char** argv) {
  if (argc < 5) return fail(make_error(ErrorCode::kInvalidArgument, "batch needs IN.json OUT.json"));
  auto text = read_file(argv[3]);
  if (!text) return fail(text.error());
  const auto docs = nlohmann::json::parse(*text);
  const EncodeOptions o{.add_special = false, .parse_special = has_flag(argc, argv, "--parse-special")};
  Encoder enc(v);
  const bool with_decoded = has_flag(argc, argv, "--decoded");
  nlohmann::json out = {{"ids", nlohmann::json::array()}, {"roundtrip_failures", nlohmann::json::array()}};
  if (with_decoded) out["decoded"] = nlohmann::json::array();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string doc = docs[i].get<std::string>();
    auto ids = enc.encode(doc, o);
    if (!ids) return fail(ids.error());
    auto back = decode_bytes(*v, *ids);
    if (!back) return fail(back.error());
    if (*back != doc) out["roundtrip_failures"].push_back(i);
    if (with_decoded) out["decoded"].push_back(*back);
    out["ids"].push_back(*ids);
  }
  std::ofstream(argv[4]) << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}

int run_bench(const std::shared_ptr<const Vocabulary>& v, int argc, char** argv) {
  if (argc < 4) return fail(make_error(ErrorCode::kInvalidArgument, "bench needs FILE"));
  auto text = read_file(argv[3]);
  if (!text) return fail(text.error());
  int repeat = 3;
  for (int i = 4; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--repeat") repeat = std::stoi(argv[i + 1]);
  }
  Encoder enc(v);
  nlohmann::json runs = nlohmann::json::array();
  std::size_t tokens = 0;
  for (int r = 0; r < repeat; ++r) {  // run 0 starts with an empty word cache
    const auto t0 = std::chrono::steady_clock::now();
    auto ids = enc.encode(*text, {.add_special = false, .parse_special = false});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ids) return fail(ids.error());
    tokens = ids->size();
    runs.push_back(static_cast<double>(text->size()) / 1e6 / s);
  }
  std::cout << nlohmann::json{{"bytes", text->size()}, {"tokens", tokens}, {"mb_per_s", runs}}.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenize_tool MODEL encode|batch|bench ...\n";
    return 2;
  }
  if (std::string_view(argv[2]) == "path") {
    auto path = model_path(argv[1]);
    if (!path) return fail(path.error());
    std::cout << path->string() << "\n";
    return 0;
  }
  auto v = load(argv[1]);
  if (!v) return fail(v.error());
  const std::string_view cmd = argv[2];
  if (cmd == "encode") return run_encode(*v, argc, argv);
  if (cmd == "batch") return run_batch(*v, argc, argv);
  if (cmd == "bench") return run_bench(*v, argc, argv);
  std::cerr << "unknown command " << cmd << "\n";
  return 2;
}
