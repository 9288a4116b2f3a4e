// Settings: defaults, validation replacing bad values, JSON round trip,
// unknown keys kept, corrupt files, the config path, atomic save.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "settings/settings.h"

namespace hearth::settings {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "hearth-settings-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Settings, DefaultsAreValid) {
  Settings s;
  EXPECT_TRUE(validate(s).empty());
  EXPECT_EQ(s.device, "auto");
  EXPECT_EQ(s.context_length, 4096);
  EXPECT_EQ(s.kv_precision, KvPrecision::kF16);
  EXPECT_EQ(s.theme, Theme::kSystem);
  EXPECT_FLOAT_EQ(s.sampling.temperature, 0.8f);
  const LoadedSettings empty = from_json_text("{}");
  EXPECT_TRUE(empty.warnings.empty());
  EXPECT_EQ(to_json_text(empty.settings), to_json_text(Settings{}));
}

TEST(Settings, RoundTripKeepsEveryField) {
  Settings s;
  s.models_dir = "/data/models";
  s.last_model = "SmolLM2-135M-Instruct";
  s.device = "cuda:1";
  s.context_length = 16384;
  s.kv_precision = KvPrecision::kQ8_0;
  s.weight_format = "Q4_0";
  s.sampling.temperature = 0.3f;
  s.sampling.top_k = 7;
  s.sampling.top_p = 0.5f;
  s.sampling.min_p = 0.1f;
  s.sampling.repeat_penalty = 1.25f;
  s.sampling.frequency_penalty = -0.5f;
  s.sampling.presence_penalty = 0.75f;
  s.sampling.penalty_last_n = 128;
  s.sampling.seed = std::numeric_limits<std::uint64_t>::max();
  s.max_tokens = 300;
  s.system_prompt = "You are terse.\nAnswer in \"French\".";
  s.theme = Theme::kDark;
  s.panel_layout = "AAECAw==";
  s.window_geometry = "AdnQywADAAA=";
  const std::string text = to_json_text(s);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["kv_precision"], "q8_0");
  EXPECT_EQ(doc["theme"], "dark");
  EXPECT_EQ(doc["sampling"]["temperature"].get<double>(), 0.3);  // the float's short form
  const LoadedSettings back = from_json_text(text);
  EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
  EXPECT_EQ(to_json_text(back.settings), text);
  EXPECT_EQ(back.settings.sampling.temperature, 0.3f);
  EXPECT_EQ(back.settings.sampling.seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(back.settings.device, "cuda:1");
  EXPECT_EQ(back.settings.panel_layout, "AAECAw==");
  EXPECT_EQ(back.settings.max_tokens, 300);
  EXPECT_EQ(back.settings.system_prompt, s.system_prompt);
  EXPECT_EQ(back.settings.weight_format, "Q4_0");
}

TEST(Settings, AnUnknownWeightFormatIsReplacedByTheFilesOwn) {
  const LoadedSettings l = from_json_text(R"({"version": 1, "weight_format": "Q3_XXS"})");
  EXPECT_EQ(l.settings.weight_format, "");
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_TRUE(mentions(l.warnings, "weight_format \"Q3_XXS\"")) << l.warnings.front();
  EXPECT_FALSE(l.first_start);
}

TEST(Settings, DebugAndLatencyTargetKeys) {
  Settings s;
  s.check_overflow = true;
  s.latency_metric = "ttft_p99";
  s.latency_target_ms = 250.5;
  const std::string text = to_json_text(s);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["check_overflow"], true);
  EXPECT_EQ(doc["latency_target"]["metric"], "ttft_p99");
  EXPECT_EQ(doc["latency_target"]["target_ms"].get<double>(), 250.5);
  const LoadedSettings back = from_json_text(text);
  EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
  EXPECT_TRUE(back.settings.check_overflow);
  EXPECT_EQ(back.settings.latency_metric, "ttft_p99");
  EXPECT_EQ(back.settings.latency_target_ms, 250.5);
  EXPECT_TRUE(back.settings.unknown_keys.empty());
  // Off and no target by default; bad values are replaced with a warning naming them.
  EXPECT_FALSE(Settings{}.check_overflow);
  EXPECT_EQ(Settings{}.latency_target_ms, 0.0);
  const LoadedSettings bad = from_json_text(
      R"({"version": 1, "check_overflow": "yes", "latency_target": {"metric": "tpot", "target_ms": -3}})");
  EXPECT_FALSE(bad.settings.check_overflow);
  EXPECT_EQ(bad.settings.latency_metric, "itl_p99");
  EXPECT_EQ(bad.settings.latency_target_ms, 0.0);
  for (const char* key : {"check_overflow", "latency_target.metric", "latency_target.target_ms"}) {
    EXPECT_TRUE(mentions(bad.warnings, key)) << key;
  }
  EXPECT_EQ(from_json_text(R"({"latency_target": 5})").warnings.size(), 1u);
}

// The app's last remote endpoint: URL and model kept (never a key), bad values replaced.
TEST(Settings, RemoteEndpointKeys) {
  Settings s;
  s.remote_url = "http://gpu:8000/v1";
  s.remote_model = "Qwen/Qwen2.5-72B";
  s.remote_in_use = true;
  const std::string text = to_json_text(s);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["remote_endpoint"]["base_url"], "http://gpu:8000/v1");
  EXPECT_EQ(doc["remote_endpoint"]["model"], "Qwen/Qwen2.5-72B");
  EXPECT_EQ(doc["remote_endpoint"]["in_use"], true);
  EXPECT_EQ(doc["remote_endpoint"].size(), 3u);  // nothing else: no API key
  const LoadedSettings back = from_json_text(text);
  EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
  EXPECT_EQ(back.settings.remote_url, s.remote_url);
  EXPECT_EQ(back.settings.remote_model, s.remote_model);
  EXPECT_TRUE(back.settings.remote_in_use);
  EXPECT_TRUE(back.settings.unknown_keys.empty());
  EXPECT_FALSE(Settings{}.remote_in_use);
  EXPECT_TRUE(Settings{}.remote_url.empty());

  const LoadedSettings bad =
      from_json_text(R"({"remote_endpoint": {"base_url": "ftp://x/v1", "model": 3, "in_use": true}})");
  EXPECT_TRUE(mentions(bad.warnings, "remote_endpoint.base_url")) << bad.warnings.size();
  EXPECT_TRUE(mentions(bad.warnings, "remote_endpoint.model"));
  EXPECT_EQ(bad.settings.remote_url, "");
  EXPECT_FALSE(bad.settings.remote_in_use);  // nowhere to reconnect to
  EXPECT_EQ(from_json_text(R"({"remote_endpoint": "http://x"})").warnings.size(), 1u);
}

TEST(Settings, MaxTokensOutOfRangeIsReplaced) {
  const LoadedSettings l = from_json_text(R"({"version": 1, "max_tokens": 0, "system_prompt": 7})");
  EXPECT_EQ(l.settings.max_tokens, Settings{}.max_tokens);
  EXPECT_EQ(l.settings.system_prompt, "");
  EXPECT_TRUE(mentions(l.warnings, "max_tokens"));
  EXPECT_TRUE(mentions(l.warnings, "system_prompt"));
}

TEST(Settings, BadValuesAreReplacedByDefaultsWithAWarningEach) {
  const LoadedSettings l = from_json_text(R"({
    "version": 1, "device": "gpu", "context_length": 12, "kv_precision": "int3",
    "theme": "neon", "models_dir": 42, "last_model": "ok.gguf",
    "sampling": {"temperature": -1, "top_k": 20, "top_p": 1.5, "min_p": "x", "penalty_last_n": -4,
                 "seed": -1, "repeat_penalty": 0},
    "panel_layout": "not base64!", "window_geometry": "AAAA"})");
  const Settings& s = l.settings;
  const Settings d;
  EXPECT_EQ(s.device, "auto");
  EXPECT_EQ(s.context_length, d.context_length);
  EXPECT_EQ(s.kv_precision, d.kv_precision);
  EXPECT_EQ(s.theme, d.theme);
  EXPECT_EQ(s.models_dir, "");
  EXPECT_EQ(s.last_model, "ok.gguf");  // good values stay
  EXPECT_EQ(s.sampling.top_k, 20);
  EXPECT_EQ(s.sampling.temperature, d.sampling.temperature);
  EXPECT_EQ(s.sampling.top_p, d.sampling.top_p);
  EXPECT_EQ(s.sampling.min_p, d.sampling.min_p);
  EXPECT_EQ(s.sampling.penalty_last_n, d.sampling.penalty_last_n);
  EXPECT_EQ(s.sampling.seed, d.sampling.seed);
  EXPECT_EQ(s.sampling.repeat_penalty, d.sampling.repeat_penalty);
  EXPECT_EQ(s.panel_layout, "");
  EXPECT_EQ(s.window_geometry, "AAAA");
  for (const char* key :
       {"device", "context_length", "kv_precision", "theme", "models_dir", "sampling.temperature", "sampling.top_p",
        "sampling.min_p", "sampling.penalty_last_n", "sampling.seed", "sampling.repeat_penalty", "panel_layout"}) {
    EXPECT_TRUE(mentions(l.warnings, key)) << key;
  }
  EXPECT_EQ(l.warnings.size(), 12u);
  EXPECT_FALSE(l.unreadable);
  for (const char* device : {"cpu", "auto", "cuda:0", "cuda:255"}) {
    Settings ok;
    ok.device = device;
    EXPECT_TRUE(validate(ok).empty()) << device;
  }
  for (const char* device : {"cuda:", "cuda:256", "cuda:-1", "cuda:1x", "CPU", ""}) {
    Settings bad;
    bad.device = device;
    EXPECT_EQ(validate(bad).size(), 1u) << device;
    EXPECT_EQ(bad.device, "auto");
  }
}

TEST(Settings, UnknownKeysAreKeptAndNewerVersionsWarned) {
  const LoadedSettings l = from_json_text(R"({"version": 3, "theme": "light", "future": {"a": [1, 2]}, "flag": true})");
  EXPECT_TRUE(mentions(l.warnings, "newer"));
  EXPECT_EQ(l.settings.theme, Theme::kLight);
  const auto doc = nlohmann::json::parse(to_json_text(l.settings));
  EXPECT_EQ(doc["future"]["a"][1], 2);
  EXPECT_EQ(doc["flag"], true);
  EXPECT_EQ(doc["version"], 1);
  // A file from before the version key is read as version 1 without complaint.
  const LoadedSettings old = from_json_text(R"({"device": "cpu"})");
  EXPECT_TRUE(old.warnings.empty());
  EXPECT_EQ(old.settings.device, "cpu");
}

TEST(Settings, MissingFileGivesDefaultsAndCorruptFileIsKept) {
  TempDir dir;
  const fs::path path = dir.path() / "settings.json";
  auto missing = load_settings(path);
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->warnings.empty());
  EXPECT_TRUE(missing->first_start) << "no file: nothing chosen yet";
  for (const char* corrupt : {"{\"device\": \"cpu\",", "[1, 2]", "", "\xff\xfe"}) {
    write(path, corrupt);
    auto l = load_settings(path);
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(l->unreadable) << corrupt;
    ASSERT_EQ(l->warnings.size(), 1u);
    EXPECT_TRUE(mentions(l->warnings, ".corrupt")) << l->warnings.front();
    EXPECT_EQ(to_json_text(l->settings), to_json_text(Settings{}));
    fs::path backup = path;
    backup += ".corrupt";
    EXPECT_EQ(read(backup), corrupt);
  }
}

TEST(Settings, SaveIsAtomicAndLoadsBack) {
  TempDir dir;
  const fs::path path = dir.path() / "nested" / "hearth" / "settings.json";
  Settings s;
  s.theme = Theme::kDark;
  s.context_length = 2048;
  ASSERT_TRUE(save_settings(s, path).ok());
  s.theme = Theme::kLight;
  ASSERT_TRUE(save_settings(s, path).ok());
  auto back = load_settings(path);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->warnings.empty());
  EXPECT_EQ(back->settings.theme, Theme::kLight);
  EXPECT_EQ(back->settings.context_length, 2048);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(path.parent_path())) ++files;
  EXPECT_EQ(files, 1u);  // no temporary left behind
}

TEST(Settings, FailedSaveIsAnErrorAndKeepsTheOldFile) {
  TempDir dir;
  const fs::path path = dir.path() / "settings.json";
  ASSERT_TRUE(save_settings(Settings{}, path).ok());
  const std::string before = read(path);
  // A folder where the temporary file should go: the write fails for root too.
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(getpid());
  fs::create_directory(temp);
  Settings s;
  s.theme = Theme::kDark;
  auto r = save_settings(s, path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_NE(r.error().message.find(temp.string()), std::string::npos) << r.error().message;
  EXPECT_EQ(read(path), before);
}

TEST(Settings, DefaultPathFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_CONFIG_HOME", "/xdg/conf", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*default_settings_path(), fs::path("/xdg/conf/hearth/settings.json"));
  setenv("XDG_CONFIG_HOME", "relative/ignored", 1);
  EXPECT_EQ(*default_settings_path(), fs::path("/home/u/.config/hearth/settings.json"));
  unsetenv("XDG_CONFIG_HOME");
  EXPECT_EQ(*default_settings_path(), fs::path("/home/u/.config/hearth/settings.json"));
  unsetenv("HOME");
  EXPECT_EQ(default_settings_path().error().code, ErrorCode::kNotFound);
  if (old_xdg) setenv("XDG_CONFIG_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

// The same folder as the app's QStandardPaths::AppDataLocation ("hearth/hearth").
TEST(Settings, DefaultDatabasePathFollowsXdgDataThenHome) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_DATA_HOME", "/xdg/data", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*default_database_path(), fs::path("/xdg/data/hearth/hearth/hearth.db"));
  setenv("XDG_DATA_HOME", "relative/ignored", 1);
  EXPECT_EQ(*default_database_path(), fs::path("/home/u/.local/share/hearth/hearth/hearth.db"));
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(*default_database_path(), fs::path("/home/u/.local/share/hearth/hearth/hearth.db"));
  unsetenv("HOME");
  EXPECT_EQ(default_database_path().error().code, ErrorCode::kNotFound);
  if (old_xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace hearth::settings
