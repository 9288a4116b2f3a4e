// hearth-cli models --install / --delete: the model installer of models/install
// with its progress on stderr (one line redrawn on a terminal, a line per phase
// and every few seconds otherwise). Ctrl+C cancels cleanly: the partial
// download stays in the staging folder and the next --install resumes it.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/models_install.h"
#include "models/catalog.h"
#include "models/install/installer.h"
#include "models/install/package_index.h"

namespace hearth::cli {
namespace {

// Set by SIGINT; the installer polls it (a signal handler can only touch a lock-free atomic).
std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) {
  g_interrupted = true;
}

// Prints progress lines on stderr: redrawn in place on a terminal.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) != 0) {}
  ~ProgressPrinter() {
    if (tty_ && drawn_) std::fputc('\n', stderr);
  }
  void operator()(const models::install::InstallProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    const bool changed = p.phase != last_.phase || p.part != last_.part;
    last_ = p;
    if (!tty_ && !changed && now - printed_ < std::chrono::seconds(5)) return;
    printed_ = now;
    const std::string line = models::install::describe(p);
    if (tty_) {
      std::fprintf(stderr, "\r%-78s", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

 private:
  bool tty_;
  bool drawn_ = false;
  models::install::InstallProgress last_{models::install::InstallProgress::Phase::kResolving, -1, 0};
  std::chrono::steady_clock::time_point printed_{};
};

}  // namespace

void run_install(const std::string& name, bool json) {
  const models::Catalog& catalog = models::builtin_catalog();
  const models::CatalogEntry* entry = catalog.find(name == "default" ? catalog.default_name : name);
  if (!entry) {
    std::string known;
    for (const auto& e : catalog.entries) known += (known.empty() ? "" : ", ") + e.name;
    fail(make_error(ErrorCode::kNotFound, "no catalog entry named '" + name + "' (known: " + known + ")"));
  }
  models::install::InstallOptions options;
  options.cancel = &g_interrupted;
  auto printer = std::make_shared<ProgressPrinter>();
  options.on_progress = [printer](const models::install::InstallProgress& p) { (*printer)(p); };
  std::fprintf(stderr, "installing %s from %s into %s\n", entry->name.c_str(),
               models::install::package_index_url().c_str(), models::models_dir().c_str());
  const auto previous = std::signal(SIGINT, on_interrupt);
  auto result = models::install::install_model(*entry, options);
  std::signal(SIGINT, previous);
  printer.reset();  // ends the progress line
  const models::install::InstallReport report = unwrap(std::move(result));
  if (json) {
    std::cout << nlohmann::json{{"name", entry->name},
                                {"file", entry->file},
                                {"path", report.path.string()},
                                {"size_bytes", report.size_bytes},
                                {"sha256", entry->sha256},
                                {"already_installed", report.already_installed},
                                {"downloaded_bytes", report.downloaded_bytes},
                                {"resumed_bytes", report.resumed_bytes},
                                {"seconds", report.seconds}}
                     .dump(2)
              << "\n";
    return;
  }
  if (report.already_installed) {
    std::printf("%s is installed already (checksum verified): %s\n", entry->name.c_str(), report.path.c_str());
  } else {
    std::printf("installed %s: %s (%s, checksum verified, %s downloaded in %.1f s)\n", entry->name.c_str(),
                report.path.c_str(), models::install::format_size(report.size_bytes).c_str(),
                models::install::format_size(report.downloaded_bytes).c_str(), report.seconds);
  }
}

void run_delete(const std::string& name, bool json) {
  const std::string& target = name == "default" ? models::builtin_catalog().default_name : name;
  const auto deleted = unwrap(models::install::delete_model(target, models::models_dir()));
  if (json) {
    std::cout << nlohmann::json{{"deleted", deleted.path.string()}, {"size_bytes", deleted.size_bytes}}.dump(2) << "\n";
    return;
  }
  std::printf("deleted %s (%s)\n", deleted.path.c_str(), models::install::format_size(deleted.size_bytes).c_str());
}

}  // namespace hearth::cli
