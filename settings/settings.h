// The user's settings: a typed struct with defaults, validated on load (a bad
// value is replaced by its default and reported), stored as JSON in
// $XDG_CONFIG_HOME/hearth/settings.json (else ~/.config/hearth/settings.json).
//
// File format, version 1 (the "version" key; do not rename keys or enum
// strings, add a migration step in settings_json.cpp instead):
//   {"version": 1, "models_dir": "", "last_model": "", "device": "auto",
//    "context_length": 4096, "kv_precision": "f16", "weight_format": "",
//    "sampling": {"temperature": 0.8, "top_k": 40, ...SamplingParams fields...},
//    "max_tokens": 1024, "system_prompt": "",
//    "theme": "system", "panel_layout": "<base64>", "window_geometry": "<base64>",
//    "check_overflow": false,
//    "latency_target": {"metric": "itl_p99", "target_ms": 0},
//    "remote_endpoint": {"base_url": "", "model": "", "in_use": false}}
// Unknown top-level keys (a newer Hearth's) are kept and written back, so
// opening the file with an older version and saving loses nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/result.h"
#include "hearth/run_info.h"
#include "hearth/sampling.h"

namespace hearth::settings {

// Serialized as "system", "light", "dark".
enum class Theme { kSystem, kLight, kDark };
// The engine's one KV precision enum, serialized by hearth::to_string ("f16",
// "q8_0", "fp8"): every backend runs all three.
using hearth::KvPrecision;

const char* to_string(Theme theme);

inline constexpr int kSettingsVersion = 1;
inline constexpr std::int32_t kMinContextLength = 256;      // tokens
inline constexpr std::int32_t kMaxContextLength = 1 << 20;  // tokens

struct Settings {
  std::string models_dir{};            // empty: the platform default folder
  std::string last_model{};            // a file path or catalog name; empty: the default model
  std::string device = "auto";         // "auto", "cpu" or "cuda:N" (N in 0..255)
  std::int32_t context_length = 4096;  // tokens, [kMinContextLength, kMaxContextLength]
  KvPrecision kv_precision = KvPrecision::kF16;
  // The weights' format the app loads models in: "" the file's own, else a
  // coarser type converted at load ("Q8_0", "Q4_0", ...: models/weight_convert.h).
  std::string weight_format{};
  SamplingParams sampling{};       // defaults for new conversations
  std::int32_t max_tokens = 1024;  // per answer, defaults for new conversations: [1, kMaxContextLength]
  std::string system_prompt{};     // defaults for new conversations; empty: none
  Theme theme = Theme::kSystem;
  std::string panel_layout{};     // opaque to us: base64 of the app's dock state
  std::string window_geometry{};  // opaque to us: base64
  // Debug: the engine scans every op's output for NaN, Inf and values beyond
  // 95% of the FP16 range (hearth/profile.h; slower while on).
  bool check_overflow = false;
  // The latency the user wants (latency advice, engine/advice): the p99 of
  // "itl_p99" (inter-token latency) or "ttft_p99" (time to first token), in
  // ms; 0: no target, no advice.
  std::string latency_metric = "itl_p99";
  double latency_target_ms = 0;
  // The remote OpenAI-compatible endpoint the app last used (README, "Remote
  // endpoints"): its base URL ("http://host:port/v1"; "" : none yet) and model
  // id ("" : its only one), never its API key. remote_in_use: the app was on
  // it when last saved, so it reconnects there at start.
  std::string remote_url{};
  std::string remote_model{};
  bool remote_in_use = false;
  // Top-level keys this version does not know, as JSON text, written back on save.
  std::map<std::string, std::string> unknown_keys{};
};

struct LoadedSettings {
  Settings settings;
  std::vector<std::string> warnings;  // one per replaced value or unreadable file, naming the key
  bool unreadable = false;            // the document as a whole was not usable: all defaults
  bool first_start = false;           // there was no file: nothing has been chosen yet
};

// Replaces each out-of-range value by its default; one warning per replacement.
std::vector<std::string> validate(Settings& settings);

// Parses a settings document. Never fails: a corrupt document gives the
// defaults and a warning; each bad value its default and a warning.
LoadedSettings from_json_text(std::string_view text);
// Pretty-printed JSON with "version": kSettingsVersion.
std::string to_json_text(const Settings& settings);

// $XDG_CONFIG_HOME/hearth/settings.json when XDG_CONFIG_HOME is an absolute
// path, else $HOME/.config/hearth/settings.json; kNotFound when neither is set.
Result<std::filesystem::path> default_settings_path();

// The app's conversation database, where Qt's AppDataLocation puts it for
// organisation "hearth" and application "hearth" (app/storage_service.cpp):
// $XDG_DATA_HOME/hearth/hearth/hearth.db when XDG_DATA_HOME is an absolute
// path, else $HOME/.local/share/hearth/hearth/hearth.db; kNotFound when
// neither is set. Front ends without Qt (hearth-cli) use it as their default.
Result<std::filesystem::path> default_database_path();

// A missing file gives the defaults without warnings (first start). A corrupt
// one gives the defaults and a warning, and is copied to "<path>.corrupt" first
// so the next save does not destroy what the user had. kIo when the file
// exists but cannot be read.
Result<LoadedSettings> load_settings(const std::filesystem::path& path);

// Atomic: writes "<path>.tmp-<pid>", flushes it to disk, renames it over the
// file and flushes the folder; the old file stays whole if anything fails.
// Creates the folder when missing. kIo naming the path on failure.
Result<void> save_settings(const Settings& settings, const std::filesystem::path& path);

}  // namespace hearth::settings
