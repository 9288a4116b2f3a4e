// Where the settings file lives, and reading / atomically writing it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "settings/settings.h"

namespace hearth::settings {

namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& what, const fs::path& path, int err) {
  return make_error(ErrorCode::kIo, what + " " + path.string() + ": " + std::strerror(err));
}

// Writes all of `data` to a new file and flushes it to disk.
Result<void> write_file_synced(const fs::path& path, const std::string& data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", path, errno);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return io_error("cannot write", path, err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error("cannot flush", path, err);
  }
  if (::close(fd) != 0) return io_error("cannot close", path, errno);
  return {};
}

void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename happened; durability of the folder entry is best effort
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Result<fs::path> default_settings_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "hearth" / "settings.json";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return fs::path(home) / ".config" / "hearth" / "settings.json";
  return make_error(ErrorCode::kNotFound, "neither XDG_CONFIG_HOME nor HOME is set: no folder for settings.json");
}

Result<fs::path> default_database_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "hearth" / "hearth" / "hearth.db";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0')
    return fs::path(home) / ".local" / "share" / "hearth" / "hearth" / "hearth.db";
  return make_error(ErrorCode::kNotFound, "neither XDG_DATA_HOME nor HOME is set: no folder for the database");
}

Result<LoadedSettings> load_settings(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {  // first start
    LoadedSettings first;
    first.first_start = true;
    return first;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot read", path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error("cannot read", path, errno);
  LoadedSettings loaded = from_json_text(text.str());
  if (!loaded.unreadable) return loaded;
  // Unreadable as a whole: keep a copy before the app's next save replaces it.
  fs::path backup = path;
  backup += ".corrupt";
  fs::copy_file(path, backup, fs::copy_options::overwrite_existing, ec);
  loaded.warnings.front() +=
      ec ? " (could not keep a copy: " + ec.message() + ")" : " (the old file is kept as " + backup.string() + ")";
  return loaded;
}

Result<void> save_settings(const Settings& settings, const fs::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) return make_error(ErrorCode::kIo, "cannot create " + path.parent_path().string() + ": " + ec.message());
  }
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  if (auto written = write_file_synced(temp, to_json_text(settings)); !written) {
    fs::remove(temp, ec);
    return written;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    fs::remove(temp, ec);
    return io_error("cannot replace", path, err);
  }
  sync_folder(path.has_parent_path() ? path.parent_path() : fs::path("."));
  return {};
}

}  // namespace hearth::settings
