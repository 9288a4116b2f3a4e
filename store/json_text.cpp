#include "store/json_text.h"

#include <nlohmann/json.hpp>

namespace hearth::store {

std::string strings_to_json(const std::vector<std::string>& strings) {
  return nlohmann::json(strings).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> strings_from_json(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!doc.is_array()) return out;
  for (const auto& item : doc) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string variables_to_json(const std::map<std::string, std::string>& variables) {
  return nlohmann::json(variables).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> variables_from_json(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::map<std::string, std::string> out;
  if (!doc.is_object()) return out;
  for (const auto& [key, value] : doc.items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

}  // namespace hearth::store
