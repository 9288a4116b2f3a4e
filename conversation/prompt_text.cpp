#include "conversation/prompt_text.h"

#include <nlohmann/json.hpp>

namespace hearth::conversation {
namespace {

using store::make_store_error;
using store::StoreErrorCode;

bool name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

bool is_variable_name(std::string_view s) {
  if (s.empty() || !name_start(s[0])) return false;
  for (char c : s) {
    if (!name_char(c)) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `on_variable(name, begin, end)` for each {{name}} in `text` (byte
// offsets of the whole placeholder) and returns nothing; the shape both the
// scan and the substitution walk.
template <class F>
void for_each_placeholder(std::string_view text, F on_variable) {
  std::size_t at = 0;
  while ((at = text.find("{{", at)) != std::string_view::npos) {
    const std::size_t close = text.find("}}", at + 2);
    if (close == std::string_view::npos) return;
    const std::string_view inner = trim(text.substr(at + 2, close - at - 2));
    if (is_variable_name(inner)) {
      on_variable(inner, at, close + 2);
      at = close + 2;
    } else {
      at += 2;
    }
  }
}

}  // namespace

store::StoreResult<std::pair<std::string, std::string>> parse_variable_assignment(std::string_view text) {
  const std::size_t eq = text.find('=');
  const std::string_view key = eq == std::string_view::npos ? text : text.substr(0, eq);
  if (eq == std::string_view::npos || !is_variable_name(key)) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "\"" + std::string(text) + "\" is not NAME=VALUE with NAME made of letters, digits and _");
  }
  return std::pair{std::string(key), std::string(text.substr(eq + 1))};
}

std::vector<std::string> variables_in(std::string_view text) {
  std::vector<std::string> names;
  for_each_placeholder(text, [&names](std::string_view name, std::size_t, std::size_t) {
    for (const auto& n : names) {
      if (n == name) return;
    }
    names.emplace_back(name);
  });
  return names;
}

store::StoreResult<RenderedPrompt> render_variables(std::string_view text, const Variables& values,
                                                    std::string_view what) {
  RenderedPrompt out;
  std::string missing;
  std::size_t copied = 0;
  for_each_placeholder(text, [&](std::string_view name, std::size_t begin, std::size_t end) {
    out.text.append(text.substr(copied, begin - copied));
    copied = end;
    const auto it = values.find(std::string(name));
    if (it == values.end()) {
      if (missing.empty()) missing = std::string(name);
      return;
    }
    out.text += it->second;
    out.used[it->first] = it->second;
  });
  if (!missing.empty()) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            std::string(what) + " uses the variable \"" + missing + "\", which has no value");
  }
  out.text.append(text.substr(copied));
  return out;
}

std::string variables_to_json(const Variables& values) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : values) j[k] = v;
  return j.dump();
}

Variables variables_from_json(std::string_view json) {
  Variables out;
  if (json.empty()) return out;
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

std::string title_from_message(std::string_view text) {
  while (!text.empty() &&
         (text.front() == ' ' || text.front() == '\t' || text.front() == '\r' || text.front() == '\n')) {
    text.remove_prefix(1);
  }
  std::string line;
  for (char c : text.substr(0, text.find('\n'))) {
    const bool space = c == ' ' || c == '\t' || c == '\r';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.empty()) return "New chat";
  // Cut at 47 code points (continuation bytes are 10xxxxxx) and add an ellipsis.
  std::size_t points = 0, cut = line.size();
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (points == 47) cut = i;
    ++points;
  }
  if (points > 48) line = line.substr(0, cut) + "\xE2\x80\xA6";
  return line;
}

}  // namespace hearth::conversation
