// A structure-aware libFuzzer mutator for fuzz_chat_template (linked into that
// target only). libFuzzer's byte mutations rarely keep a template parseable:
// most of their children die in the lexer. These mutations work on whole tags
// and expression tokens instead:
//   - insert a generated tag ({{ expr }}, {% set %}, {% if %}, ...) between two
//     pieces of the input, or wrap a run of pieces in a for / if / macro block;
//   - delete, duplicate or swap whole pieces (a tag or the text between tags);
//   - replace, delete or insert one token inside a tag (a generated operand, an
//     operator, a filter);
//   - splice tags, or whole runs of them, from the .jinja files of the seed
//     directories given on the command line (the real templates);
// and hand the rest (a quarter) to LLVMFuzzerMutate, which also applies -dict.
// Measured against the plain byte mutator in docs/fuzzing.md.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using Rng = std::minstd_rand;

// A piece of a template: a tag ({{ }}, {% %} or {# #}) or the text up to the next one.
struct Piece {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool tag = false;
};

std::vector<Piece> split_pieces(std::string_view s) {
  std::vector<Piece> pieces;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t open = s.find('{', i);
    std::size_t next = std::string_view::npos;
    for (std::size_t at = open; at != std::string_view::npos && at + 1 < s.size(); at = s.find('{', at + 1)) {
      const char c = s[at + 1];
      if (c == '{' || c == '%' || c == '#') {
        next = at;
        break;
      }
    }
    if (next == std::string_view::npos) {
      pieces.push_back({i, s.size(), false});
      break;
    }
    if (next > i) pieces.push_back({i, next, false});
    const char kind = s[next + 1];
    const char closer[3] = {kind == '{' ? '}' : kind, '}', '\0'};
    const std::size_t close = s.find(closer, next + 2);
    const std::size_t end = close == std::string_view::npos ? s.size() : close + 2;
    pieces.push_back({next, end, true});
    i = end;
  }
  return pieces;
}

// Offsets where a piece may go: the start, the end, and every piece boundary.
std::size_t pick_boundary(const std::vector<Piece>& pieces, std::size_t size, Rng& rng) {
  if (pieces.empty()) return 0;
  const std::size_t k = rng() % (pieces.size() + 1);
  return k == pieces.size() ? size : pieces[k].begin;
}

template <std::size_t N>
const char* pick(const char* const (&options)[N], Rng& rng) {
  return options[rng() % N];
}

const char* const kNames[] = {"messages",
                              "message",
                              "m",
                              "x",
                              "ns",
                              "ns.x",
                              "loop",
                              "loop.index",
                              "loop.last",
                              "tools",
                              "bos_token",
                              "eos_token",
                              "add_generation_prompt",
                              "message['content']",
                              "message.role",
                              "messages[0]",
                              "messages[-1]",
                              "content",
                              "none",
                              "true",
                              "false",
                              "range",
                              "namespace"};
const char* const kNumbers[] = {"0",
                                "1",
                                "-1",
                                "2",
                                "3",
                                "10",
                                "255",
                                "1000",
                                "65536",
                                "1e308",
                                "0.5",
                                "-0.0",
                                "9223372036854775807",
                                "-9223372036854775808",
                                "10**18",
                                "2**62",
                                "1.5e-300"};
const char* const kStrings[] = {"''",    "'a'",       "\"x\"",          "'\\n'",  "'{{'",      "'%}'",    "' '",
                                "'abc'", "'\\u00e9'", "'<|im_start|>'", "'role'", "'content'", "'system'"};
const char* const kBinary[] = {" + ",  " - ", " * ", " / ",  " // ", " % ",   " ** ", " ~ ",  " == ",
                               " != ", " < ", " > ", " <= ", " >= ", " and ", " or ", " in ", " not in "};
const char* const kFilters[] = {"trim",
                                "upper",
                                "lower",
                                "title",
                                "capitalize",
                                "string",
                                "length",
                                "count",
                                "default('d')",
                                "replace('a', 'bb')",
                                "int",
                                "float",
                                "abs",
                                "round(2)",
                                "indent(4)",
                                "indent(2, true)",
                                "tojson",
                                "tojson(indent=2)",
                                "wordcount",
                                "first",
                                "last",
                                "list",
                                "join(', ')",
                                "items",
                                "reverse",
                                "sort",
                                "dictsort",
                                "unique",
                                "max",
                                "min",
                                "sum",
                                "select('odd')",
                                "reject('none')",
                                "selectattr('role')",
                                "rejectattr('role', 'equalto', 'system')",
                                "map(attribute='content')",
                                "map('upper')",
                                "batch(2)",
                                "safe",
                                "e",
                                "center(9)",
                                "truncate(3)",
                                "format(1)",
                                "attr('x')",
                                "slice(2)"};
const char* const kTests[] = {"defined",  "undefined", "none",           "string", "number", "mapping", "iterable",
                              "sequence", "equalto 1", "divisibleby(3)", "odd",    "even",   "boolean", "integer"};
const char* const kMethods[] = {"strip()",    "split(',')",  "startswith('a')", "endswith('>')", "replace('a', 'b')",
                                "items()",    "keys()",      "values()",        "get('role')",   "join(messages)",
                                "upper()",    "lstrip('x')", "title()",         "append(1)",     "pop()",
                                "count('a')", "find('a')"};

// A name, a number or a string literal (`kind` 0, 1, 2).
std::string atom(Rng& rng, unsigned kind) {
  return kind == 0 ? pick(kNames, rng) : kind == 1 ? pick(kNumbers, rng) : pick(kStrings, rng);
}

// A random Jinja expression; `depth` bounds its nesting.
std::string expr(Rng& rng, int depth) {
  const int choice = depth <= 0 ? static_cast<int>(rng() % 4) : static_cast<int>(rng() % 17);
  switch (choice) {
    case 0:
    case 1:
    case 2:
      return atom(rng, static_cast<unsigned>(choice));
    case 3:
      return rng() % 2 ? "[]" : "{}";
    case 4:
    case 5:
      return expr(rng, depth - 1) + pick(kBinary, rng) + expr(rng, depth - 1);
    case 6:
      return expr(rng, depth - 1) + " | " + pick(kFilters, rng);
    case 7:
      return expr(rng, depth - 1) + (rng() % 2 ? " is " : " is not ") + pick(kTests, rng);
    case 8:
      return expr(rng, depth - 1) + "." + pick(kMethods, rng);
    case 9:
      return expr(rng, depth - 1) + "[" + expr(rng, depth - 1) + "]";
    case 10:
      return expr(rng, depth - 1) + "[" + pick(kNumbers, rng) + ":" + (rng() % 2 ? "" : pick(kNumbers, rng)) +
             (rng() % 3 ? "" : "::-1") + "]";
    case 11:
      return "[" + expr(rng, depth - 1) + ", " + expr(rng, depth - 1) + "]";
    case 12:
      return "{" + std::string(pick(kStrings, rng)) + ": " + expr(rng, depth - 1) + "}";
    case 13:
      return expr(rng, depth - 1) + " if " + expr(rng, depth - 1) + " else " + expr(rng, depth - 1);
    case 14:
      return (rng() % 2 ? "not " : "-") + expr(rng, depth - 1);
    case 15:
      return "(" + expr(rng, depth - 1) + ")";
    default: {
      const char* const calls[] = {"range(",           "namespace(x=", "dict(a=",      "m(",
                                   "raise_exception(", "loop.cycle(",  "strftime_now("};
      return std::string(pick(calls, rng)) + expr(rng, depth - 1) + ")";
    }
  }
}

std::string open_tag(Rng& rng) {
  return rng() % 4 ? "{%" : "{%-";
}
std::string close_tag(Rng& rng) {
  return rng() % 4 ? " %}" : " -%}";
}

// One generated tag (balanced blocks come from wrap()).
std::string tag(Rng& rng) {
  const std::string e = expr(rng, 1 + static_cast<int>(rng() % 3));
  switch (rng() % 12) {
    case 0:
    case 1:
    case 2:
      return (rng() % 4 ? "{{ " : "{{- ") + e + (rng() % 4 ? " }}" : " -}}");
    case 3:
      return open_tag(rng) + " set " + (rng() % 2 ? "x" : "ns.x") + " = " + e + close_tag(rng);
    case 4:
      return open_tag(rng) + " if " + e + close_tag(rng);
    case 5:
      return open_tag(rng) + " elif " + e + close_tag(rng);
    case 6:
      return open_tag(rng) + " else" + close_tag(rng);
    case 7: {
      const char* const ends[] = {"endif", "endfor",   "endmacro",      "endset", "endraw",
                                  "break", "continue", "endgeneration", "raw",    "generation"};
      return open_tag(rng) + " " + pick(ends, rng) + close_tag(rng);
    }
    case 8:
      return open_tag(rng) + " for x in " + e + close_tag(rng);
    case 9:
      return "{# " + e + " #}";
    case 10:
      return open_tag(rng) + " set ns = namespace(x=" + e + ")" + close_tag(rng);
    default:
      return "{{ m(" + e + ") }}";
  }
}

// The opening and closing tags of a block around some pieces.
std::pair<std::string, std::string> block(Rng& rng) {
  const std::string e = expr(rng, 1 + static_cast<int>(rng() % 2));
  switch (rng() % 6) {
    case 0:
      return {open_tag(rng) + " for x in " + e + close_tag(rng), open_tag(rng) + " endfor" + close_tag(rng)};
    case 1:
      return {open_tag(rng) + " for message in messages" + (rng() % 2 ? " if " + e : std::string()) + close_tag(rng),
              open_tag(rng) + " endfor" + close_tag(rng)};
    case 2:
      return {open_tag(rng) + " if " + e + close_tag(rng), open_tag(rng) + " endif" + close_tag(rng)};
    case 3:
      return {open_tag(rng) + " if " + e + close_tag(rng), open_tag(rng) + " else" + close_tag(rng) + "{{ " +
                                                               expr(rng, 1) + " }}" + open_tag(rng) + " endif" +
                                                               close_tag(rng)};
    case 4:
      return {open_tag(rng) + " macro m(a, b=" + std::string(pick(kNumbers, rng)) + ")" + close_tag(rng),
              open_tag(rng) + " endmacro" + close_tag(rng) + "{{ m(" + e + ") }}"};
    default:
      return {open_tag(rng) + " set x" + close_tag(rng), open_tag(rng) + " endset" + close_tag(rng) + "{{ x }}"};
  }
}

// Pieces of the seed templates, to splice.
struct Pool {
  std::vector<std::string> texts;
};

Pool& pool() {
  static Pool p;
  return p;
}

void load_pool(int argc, char** argv) {
  constexpr std::size_t kMaxBytes = 4u << 20;
  std::size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[i], ec)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(argv[i], ec)) {
      if (entry.path().extension() != ".jinja" || !entry.is_regular_file(ec)) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.empty() || total + text.size() > kMaxBytes) continue;
      total += text.size();
      pool().texts.push_back(std::move(text));
    }
  }
}

// A run of 1 to 8 pieces (usually tags) of a pool template, or "" without a pool.
std::string pool_run(Rng& rng, bool tags_only) {
  if (pool().texts.empty()) return {};
  const std::string& t = pool().texts[rng() % pool().texts.size()];
  const std::vector<Piece> pieces = split_pieces(t);
  if (pieces.empty()) return {};
  std::size_t first = rng() % pieces.size();
  if (tags_only) {
    for (std::size_t tries = 0; tries < pieces.size() && !pieces[first].tag; ++tries)
      first = (first + 1) % pieces.size();
  }
  const std::size_t count = tags_only ? 1 : 1 + rng() % 8;
  const std::size_t last = std::min(pieces.size(), first + count) - 1;
  return t.substr(pieces[first].begin, pieces[last].end - pieces[first].begin);
}

// Tokens inside a tag: identifiers, numbers, strings and single punctuation.
std::vector<Piece> tokens(std::string_view s, std::size_t from, std::size_t to) {
  std::vector<Piece> out;
  std::size_t i = from;
  const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  while (i < to) {
    const char c = s[i];
    if (c == ' ' || c == '\n' || c == '\t') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    if (ident(c)) {
      while (j < to && ident(s[j])) ++j;
    } else if (c == '\'' || c == '"') {
      while (j < to && s[j] != c) j += s[j] == '\\' ? 2 : 1;
      j = std::min(to, j + 1);
    }
    out.push_back({i, j, false});
    i = j;
  }
  return out;
}

std::string operand(Rng& rng) {
  const unsigned kind = rng() % 6;
  switch (kind) {
    case 0:
    case 1:
    case 2:
      return atom(rng, kind);
    case 3:
      return std::string("| ") + pick(kFilters, rng);
    case 4:
      return pick(kBinary, rng);
    default:
      return expr(rng, 2);
  }
}

// Edits `s` in place with one structural mutation; false when none applied.
bool mutate_structure(std::string& s, Rng& rng) {
  const std::vector<Piece> pieces = split_pieces(s);
  const auto random_piece = [&]() -> const Piece& { return pieces[rng() % pieces.size()]; };
  switch (rng() % 9) {
    case 0:
      s.insert(pick_boundary(pieces, s.size(), rng), tag(rng));
      return true;
    case 1: {  // wrap pieces [a, b) in a block
      std::size_t a = pick_boundary(pieces, s.size(), rng);
      std::size_t b = pick_boundary(pieces, s.size(), rng);
      if (a > b) std::swap(a, b);
      auto [open, close] = block(rng);
      s.insert(b, close);
      s.insert(a, open);
      return true;
    }
    case 2: {  // delete 1 to 3 pieces
      if (pieces.empty()) return false;
      const std::size_t k = rng() % pieces.size();
      const std::size_t last = std::min(pieces.size(), k + 1 + rng() % 3) - 1;
      s.erase(pieces[k].begin, pieces[last].end - pieces[k].begin);
      return true;
    }
    case 3: {  // duplicate a piece at a boundary
      if (pieces.empty()) return false;
      const Piece& p = random_piece();
      const std::string copy = s.substr(p.begin, p.end - p.begin);
      s.insert(pick_boundary(pieces, s.size(), rng), copy);
      return true;
    }
    case 4: {  // swap two pieces
      if (pieces.size() < 2) return false;
      Piece p = random_piece(), q = random_piece();
      if (p.begin == q.begin) return false;
      if (p.begin > q.begin) std::swap(p, q);
      const std::string a = s.substr(p.begin, p.end - p.begin), b = s.substr(q.begin, q.end - q.begin);
      s.replace(q.begin, b.size(), a);
      s.replace(p.begin, a.size(), b);
      return true;
    }
    case 5:
    case 6: {  // a token inside a tag: replace, delete, or insert before it
      std::vector<const Piece*> tags;
      for (const Piece& p : pieces) {
        if (p.tag && p.end - p.begin >= 4) tags.push_back(&p);
      }
      if (tags.empty()) return false;
      const Piece& t = *tags[rng() % tags.size()];
      const std::vector<Piece> toks = tokens(s, t.begin + 2, t.end - 2);
      if (toks.empty()) return false;
      const Piece& k = toks[rng() % toks.size()];
      switch (rng() % 3) {
        case 0:
          s.replace(k.begin, k.end - k.begin, operand(rng));
          break;
        case 1:
          s.erase(k.begin, k.end - k.begin);
          break;
        default:
          s.insert(k.begin, operand(rng) + " ");
      }
      return true;
    }
    case 7: {  // splice a run of a seed template
      std::string run = pool_run(rng, false);
      if (run.empty()) return false;
      s.insert(pick_boundary(pieces, s.size(), rng), run);
      return true;
    }
    default: {  // replace a piece by a seed template's tag
      std::string t = pool_run(rng, true);
      if (t.empty() || pieces.empty()) return false;
      const Piece& p = random_piece();
      s.replace(p.begin, p.end - p.begin, t);
      return true;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  load_pool(*argc, *argv);
  return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  Rng rng(seed);
  if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string s(reinterpret_cast<const char*>(data), size);
  // One to three structural edits (up to four tries each: some need a tag or a pool).
  const unsigned edits = 1 + rng() % 3;
  for (unsigned e = 0; e < edits; ++e) {
    for (int tries = 0; tries < 4 && !mutate_structure(s, rng); ++tries) {
    }
  }
  const bool same = s.size() == size && std::memcmp(s.data(), data, size) == 0;
  if (same || s.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, s.data(), s.size());
  return s.size();
}
