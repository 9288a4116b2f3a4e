// JSON text of the small values the store keeps in TEXT columns (stop
// strings, filled variables). Internal to store/; nlohmann-json stays out of
// the public headers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::store {

std::string strings_to_json(const std::vector<std::string>& strings);
// A JSON array of strings; anything else (corrupt text) reads as empty.
std::vector<std::string> strings_from_json(std::string_view text);
std::string variables_to_json(const std::map<std::string, std::string>& variables);
std::map<std::string, std::string> variables_from_json(std::string_view text);

}  // namespace hearth::store
