// The package index's Simple API in JSON (PEP 691): which wheel file of a
// catalog part to download, its URL and its SHA-256. Pure parsing: the pages
// come from http_fetch.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hearth/result.h"
#include "models/catalog.h"
#include "models/install/url.h"

namespace hearth::models::install {

// What PEP 691 asks for in the Accept header.
inline constexpr const char* kSimpleJsonType = "application/vnd.pypi.simple.v1+json";

// $HEARTH_PACKAGE_INDEX, else https://pypi.org/simple (without a trailing '/').
std::string package_index_url();

// PEP 503's normalised project name: lower case, each run of '-', '_', '.' made one '-'.
std::string normalize_project_name(std::string_view name);

// The project's page: INDEX/NORMALISED-NAME/.
Result<Url> project_page_url(std::string_view index_url, std::string_view project);

struct WheelFile {
  std::string filename;
  Url url;                 // absolute (a relative URL on the page is resolved against the page)
  std::string sha256;      // lowercase hex, from the page's "hashes"
  std::uint64_t size = 0;  // bytes; 0 when the page does not say (PEP 700's "size" is optional)
};

// The pure wheel ("-none-any.whl") of `part.package` at exactly `part.version` on a project
// page. A page that is not PEP 691 JSON, lacks the version (the error lists the
// versions it has), or gives no SHA-256 is an error naming it.
Result<WheelFile> pick_wheel(std::string_view page_json, const Url& page_url, const PackagePart& part);

}  // namespace hearth::models::install
