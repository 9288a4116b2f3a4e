// Absolute http(s) URLs as the installer needs them: the index's base URL, the
// file URLs of its pages (absolute or relative to the page) and redirect
// targets. No user info, no IPv6 literals: the package index needs neither.
#pragma once

#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::models::install {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;
  int port = 0;        // the scheme's default when the URL names none
  std::string target;  // path and query, always starting with '/'; no fragment

  std::string origin() const;  // "scheme://host:port", what httplib::Client takes
  std::string text() const;    // the whole URL, for messages
};

Result<Url> parse_url(std::string_view text);

// `ref` (absolute, "//host/...", "/path" or a relative path) read against `base`, as a browser would.
Result<Url> resolve_url(const Url& base, std::string_view ref);

}  // namespace hearth::models::install
