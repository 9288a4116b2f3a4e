// Shared by export_json.cpp and import_json.cpp (internal to store/): the
// document's name and version, and a generation record as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/records.h"

namespace hearth::store {

inline constexpr const char* kExportFormat = "hearth-export";
inline constexpr int kExportVersion = 1;  // of the document format; bump on an incompatible change

// Every GenerationRecord field but message_id (the message it sits in).
nlohmann::json generation_to_json(const GenerationRecord& g);

// A conversation's own settings: {"sampling": {...}, "max_tokens", "system_prompt", "updated_ms"}.
nlohmann::json conversation_settings_to_json(const ConversationSettings& c, TimeMs updated_ms);

// Thrown by the import's field readers, caught in import_json: a field
// missing or of the wrong type, named by its path ("conversations[2].title").
struct BadDocument {
  std::string message;
};

// Typed fields of an object; each throws BadDocument naming `path`.key when
// the field is missing or of another type. Optional ones accept null or absence.
std::string get_string(const nlohmann::json& obj, const char* key, const std::string& path);
std::int64_t get_int(const nlohmann::json& obj, const char* key, const std::string& path);
double get_real(const nlohmann::json& obj, const char* key, const std::string& path);
bool get_bool(const nlohmann::json& obj, const char* key, const std::string& path);
std::optional<std::int64_t> get_optional_int(const nlohmann::json& obj, const char* key, const std::string& path);
std::optional<double> get_optional_real(const nlohmann::json& obj, const char* key, const std::string& path);
std::optional<std::string> get_optional_string(const nlohmann::json& obj, const char* key, const std::string& path);
// An array field (absent: empty is not allowed, it throws).
const nlohmann::json& get_array(const nlohmann::json& obj, const char* key, const std::string& path);
const nlohmann::json& get_object(const nlohmann::json& obj, const char* key, const std::string& path);

// Reads a generation object; throws BadDocument naming `path`.
GenerationRecord generation_from_json(const nlohmann::json& j, const std::string& path);

// Reads what conversation_settings_to_json wrote; throws BadDocument naming `path`.
ConversationSettings conversation_settings_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace hearth::store
