#include "cli/store_session.h"

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "settings/settings.h"

namespace hearth::cli {

namespace fs = std::filesystem;

namespace {

const char* store_error_kind(store::StoreErrorCode code) {
  // StoreErrorCode has hearth::ErrorCode's numbers (store/store_error.h).
  return error_kind(static_cast<ErrorCode>(code));
}

}  // namespace

void fail(const store::StoreError& error) {
  throw Failure{error.describe(), 1, store_error_kind(error.code)};
}

void add_database_options(CLI::App* cmd, DatabaseOptions& options) {
  cmd->add_option("--database", options.path, "Conversation database file (default: the app's)");
  cmd->add_flag("--json", options.json, "Print JSON");
}

std::string database_path(const DatabaseOptions& options) {
  if (!options.path.empty()) return options.path;
  return unwrap(settings::default_database_path()).string();
}

std::unique_ptr<store::Store> open_database(const DatabaseOptions& options, Access access) {
  const std::string path = database_path(options);
  const fs::path folder = fs::absolute(fs::path(path)).parent_path();
  std::error_code ec;
  if (options.path.empty() && access == Access::kWrite) fs::create_directories(folder, ec);  // as the app does
  if (!fs::is_directory(folder, ec)) {
    throw Failure{"the database folder " + folder.string() + " does not exist (for " + path + ")", 1, "not_found"};
  }
  if (fs::is_directory(path, ec)) throw Failure{path + " is a directory, not a database", 1, "invalid_argument"};
  if (access == Access::kRead && !fs::exists(path, ec)) {
    throw Failure{"no database at " + path + " (nothing has been saved there yet)", 1, "not_found"};
  }
  store::StoreOptions so;
  so.path = path;
  auto opened = unwrap(store::Store::open(so));
  if (access == Access::kWrite && opened->writer_elsewhere()) {
    const std::string pid = opened->writer_pid() ? " (process " + std::to_string(*opened->writer_pid()) + ")" : "";
    throw Failure{"another Hearth" + pid + " is writing " + path + "; close it and try again", 1, "io"};
  }
  if (access == Access::kWrite && opened->read_only()) {
    throw Failure{"the database " + path + " is read-only", 1, "io"};
  }
  return opened;
}

std::string iso_time(store::TimeMs ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>((ms % 1000 + 1000) % 1000));
  return buf;
}

store::TimeMs parse_time(const std::string& text, bool end_of_day, const std::string& option) {
  const auto bad = [&]() -> Failure {
    return Failure{option + " " + text + ": expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC) or milliseconds", 1,
                   "invalid_argument"};
  };
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    try {
      return std::stoll(text);
    } catch (...) {
      throw bad();
    }
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail[4] = {};
  const int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%3s", &y, &mo, &d, &h, &mi, &s, tail);
  const bool date_only = n == 3 && text.size() == 10;
  const bool ok_tail = tail[0] == '\0' || std::string(tail) == "Z";
  if (!(date_only || n == 5 || n == 6 || n == 7) || !ok_tail || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
      mi > 59 || s > 60) {
    throw bad();
  }
  if (n == 5 && text.size() > 16 && text.substr(16) != "Z") throw bad();
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d + (date_only && end_of_day ? 1 : 0);
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<store::TimeMs>(timegm(&tm)) * 1000;
}

}  // namespace hearth::cli
