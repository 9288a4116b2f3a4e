// Settings <-> JSON, with the version migration hook. Reading never throws to
// the caller: wrong types become warnings and defaults.
#include <array>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "settings/settings.h"

namespace hearth::settings {

namespace {

using nlohmann::json;

// Step N takes a version N-1 document to version N (step 1: files written
// before the version key existed, which had the same keys). Append, never edit.
const std::array<std::function<void(json&)>, kSettingsVersion> kMigrations = {
    [](json&) {},
};

const std::set<std::string> kKnownKeys = {"version",        "models_dir",     "last_model",      "device",
                                          "context_length", "kv_precision",   "sampling",        "max_tokens",
                                          "system_prompt",  "theme",          "panel_layout",    "window_geometry",
                                          "check_overflow", "latency_target", "remote_endpoint", "weight_format"};

// Reads doc[key] into out when present with the right type; else a warning.
class Reader {
 public:
  Reader(const json& doc, std::string prefix, std::vector<std::string>& warnings)
      : doc_(doc), prefix_(std::move(prefix)), warnings_(warnings) {}

  void string(const char* key, std::string& out) {
    if (const json* v = find(key, "a string", [](const json& j) { return j.is_string(); })) out = v->get<std::string>();
  }
  template <class Int>
  void integer(const char* key, Int& out) {
    auto fits = [](const json& j) {
      if (j.is_number_unsigned())
        return j.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
      if (!j.is_number_integer()) return false;
      const auto x = j.get<std::int64_t>();
      return x >= static_cast<std::int64_t>(std::numeric_limits<Int>::min()) &&
             (x < 0 || static_cast<std::uint64_t>(x) <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max()));
    };
    if (const json* v = find(key, "an integer in range", fits)) out = v->get<Int>();
  }
  void boolean(const char* key, bool& out) {
    if (const json* v = find(key, "true or false", [](const json& j) { return j.is_boolean(); })) out = v->get<bool>();
  }
  void number(const char* key, double& out) {
    if (const json* v = find(key, "a number", [](const json& j) { return j.is_number(); })) out = v->get<double>();
  }
  void number(const char* key, float& out) {
    if (const json* v = find(key, "a number", [](const json& j) { return j.is_number(); })) {
      out = static_cast<float>(v->get<double>());
    }
  }
  template <class Enum, std::size_t N>
  void choice(const char* key, Enum& out, const std::array<Enum, N>& values) {
    std::string s;
    string(key, s);
    if (s.empty()) return;
    for (const Enum e : values) {
      if (s == to_string(e)) {
        out = e;
        return;
      }
    }
    warnings_.push_back(prefix_ + key + " \"" + s + "\" is not a known value; using the default");
  }

 private:
  template <class Check>
  const json* find(const char* key, const char* kind, Check check) {
    const auto it = doc_.find(key);
    if (it == doc_.end()) return nullptr;
    if (check(*it)) return &*it;
    warnings_.push_back(prefix_ + key + " is not " + kind + "; using the default");
    return nullptr;
  }

  const json& doc_;
  std::string prefix_;
  std::vector<std::string>& warnings_;
};

void read_sampling(const json& doc, SamplingParams& p, std::vector<std::string>& w) {
  const auto it = doc.find("sampling");
  if (it == doc.end()) return;
  if (!it->is_object()) {
    w.push_back("sampling is not an object; using the defaults");
    return;
  }
  Reader r(*it, "sampling.", w);
  r.number("temperature", p.temperature);
  r.integer("top_k", p.top_k);
  r.number("top_p", p.top_p);
  r.number("min_p", p.min_p);
  r.number("repeat_penalty", p.repeat_penalty);
  r.number("frequency_penalty", p.frequency_penalty);
  r.number("presence_penalty", p.presence_penalty);
  r.integer("penalty_last_n", p.penalty_last_n);
  r.integer("seed", p.seed);
}

void read_latency_target(const json& doc, Settings& s, std::vector<std::string>& w) {
  const auto it = doc.find("latency_target");
  if (it == doc.end()) return;
  if (!it->is_object()) {
    w.push_back("latency_target is not an object; using the defaults");
    return;
  }
  Reader r(*it, "latency_target.", w);
  r.string("metric", s.latency_metric);
  r.number("target_ms", s.latency_target_ms);
}

void read_remote_endpoint(const json& doc, Settings& s, std::vector<std::string>& w) {
  const auto it = doc.find("remote_endpoint");
  if (it == doc.end()) return;
  if (!it->is_object()) {
    w.push_back("remote_endpoint is not an object; using the defaults");
    return;
  }
  Reader r(*it, "remote_endpoint.", w);
  r.string("base_url", s.remote_url);
  r.string("model", s.remote_model);
  r.boolean("in_use", s.remote_in_use);
}

// Brings `doc` to kSettingsVersion; a newer document is read as it is.
void migrate(json& doc, std::vector<std::string>& w) {
  std::int64_t version = 0;
  if (const auto it = doc.find("version"); it != doc.end()) {
    if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
      version = it->get<std::int64_t>();
    } else {
      w.push_back("version is not a non-negative integer; reading the file as version " +
                  std::to_string(kSettingsVersion));
      version = kSettingsVersion;
    }
  }
  if (version > kSettingsVersion) {
    w.push_back("settings were written by a newer Hearth (version " + std::to_string(version) +
                "); keys it added are kept as they are");
  }
  for (std::int64_t v = version; v < kSettingsVersion; ++v) kMigrations[static_cast<std::size_t>(v)](doc);
}

// The float's shortest decimal form as a double, so the file says 0.8 rather
// than 0.800000011920929; reading it back gives the same float.
double shortest(float f) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, f).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

}  // namespace

LoadedSettings from_json_text(std::string_view text) {
  LoadedSettings out;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {  // caught here: nothing throws past this function
    out.warnings.push_back(std::string("settings file is not valid JSON (") + e.what() + "); using the defaults");
    out.unreadable = true;
    return out;
  }
  if (!doc.is_object()) {
    out.warnings.push_back("settings file does not hold a JSON object; using the defaults");
    out.unreadable = true;
    return out;
  }
  migrate(doc, out.warnings);
  Settings& s = out.settings;
  Reader r(doc, "", out.warnings);
  r.string("models_dir", s.models_dir);
  r.string("last_model", s.last_model);
  r.string("device", s.device);
  r.integer("context_length", s.context_length);
  r.choice("kv_precision", s.kv_precision, std::array{KvPrecision::kF16, KvPrecision::kQ8_0, KvPrecision::kFp8E4M3});
  r.string("weight_format", s.weight_format);
  read_sampling(doc, s.sampling, out.warnings);
  r.integer("max_tokens", s.max_tokens);
  r.string("system_prompt", s.system_prompt);
  r.choice("theme", s.theme, std::array{Theme::kSystem, Theme::kLight, Theme::kDark});
  r.string("panel_layout", s.panel_layout);
  r.string("window_geometry", s.window_geometry);
  r.boolean("check_overflow", s.check_overflow);
  read_latency_target(doc, s, out.warnings);
  read_remote_endpoint(doc, s, out.warnings);
  for (const auto& [key, value] : doc.items()) {
    if (kKnownKeys.count(key) == 0) s.unknown_keys[key] = value.dump();
  }
  for (std::string& w : validate(s)) out.warnings.push_back(std::move(w));
  return out;
}

std::string to_json_text(const Settings& s) {
  json doc = json::object();
  for (const auto& [key, text] : s.unknown_keys) {
    json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) doc[key] = std::move(value);
  }
  const SamplingParams& p = s.sampling;
  doc["version"] = kSettingsVersion;
  doc["models_dir"] = s.models_dir;
  doc["last_model"] = s.last_model;
  doc["device"] = s.device;
  doc["context_length"] = s.context_length;
  doc["kv_precision"] = to_string(s.kv_precision);
  doc["weight_format"] = s.weight_format;
  doc["sampling"] = {{"temperature", shortest(p.temperature)},
                     {"top_k", p.top_k},
                     {"top_p", shortest(p.top_p)},
                     {"min_p", shortest(p.min_p)},
                     {"repeat_penalty", shortest(p.repeat_penalty)},
                     {"frequency_penalty", shortest(p.frequency_penalty)},
                     {"presence_penalty", shortest(p.presence_penalty)},
                     {"penalty_last_n", p.penalty_last_n},
                     {"seed", p.seed}};
  doc["max_tokens"] = s.max_tokens;
  doc["system_prompt"] = s.system_prompt;
  doc["theme"] = to_string(s.theme);
  doc["panel_layout"] = s.panel_layout;
  doc["window_geometry"] = s.window_geometry;
  doc["check_overflow"] = s.check_overflow;
  doc["latency_target"] = {{"metric", s.latency_metric}, {"target_ms", s.latency_target_ms}};
  doc["remote_endpoint"] = {{"base_url", s.remote_url}, {"model", s.remote_model}, {"in_use", s.remote_in_use}};
  return doc.dump(2) + "\n";
}

}  // namespace hearth::settings
