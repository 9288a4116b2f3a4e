#include "models/install/url.h"

#include <charconv>
#include <vector>

namespace hearth::models::install {
namespace {

Error bad_url(std::string_view text, const std::string& why) {
  return make_error(ErrorCode::kInvalidArgument, "bad URL '" + std::string(text) + "': " + why);
}

std::string_view drop_fragment(std::string_view s) {
  return s.substr(0, s.find('#'));
}

// Removes "." and ".." segments of an absolute path (RFC 3986, 5.2.4); a ".." above the root stays at the root.
std::string normalize_path(std::string_view path) {
  const std::size_t query_at = path.find('?');
  const std::string_view query = query_at == std::string_view::npos ? "" : path.substr(query_at);
  path = path.substr(0, query_at);
  std::vector<std::string_view> out;
  std::size_t start = 1;  // path[0] == '/'
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view seg = path.substr(start, end - start);
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
    } else if (seg != ".") {
      out.push_back(seg);
    }
    if (end == path.size() && (seg == "." || seg == "..")) out.emplace_back();  // "a/.." names the folder: keep the '/'
    start = end + 1;
  }
  std::string joined;
  for (std::size_t i = 0; i < out.size(); ++i) joined += "/" + std::string(out[i]);
  if (joined.empty()) joined = "/";
  return joined + std::string(query);
}

}  // namespace

std::string Url::origin() const {
  return scheme + "://" + host + ":" + std::to_string(port);
}

std::string Url::text() const {
  const bool default_port = (scheme == "https" && port == 443) || (scheme == "http" && port == 80);
  return scheme + "://" + host + (default_port ? "" : ":" + std::to_string(port)) + target;
}

Result<Url> parse_url(std::string_view text) {
  const std::string_view whole = text;
  text = drop_fragment(text);
  const std::size_t colon = text.find("://");
  if (colon == std::string_view::npos) return bad_url(whole, "no scheme (expected http:// or https://)");
  Url url;
  for (char c : text.substr(0, colon)) url.scheme += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (url.scheme != "http" && url.scheme != "https") return bad_url(whole, "only http and https are supported");
  text.remove_prefix(colon + 3);
  const std::size_t slash = std::min(text.find_first_of("/?"), text.size());
  std::string_view authority = text.substr(0, slash);
  if (authority.find('@') != std::string_view::npos || authority.find('[') != std::string_view::npos) {
    return bad_url(whole, "user names and IPv6 literals are not supported");
  }
  url.port = url.scheme == "https" ? 443 : 80;
  if (const std::size_t p = authority.find(':'); p != std::string_view::npos) {
    const std::string_view digits = authority.substr(p + 1);
    int port = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc{} || end != digits.data() + digits.size() || port <= 0 || port > 65535) {
      return bad_url(whole, "bad port '" + std::string(digits) + "'");
    }
    url.port = port;
    authority = authority.substr(0, p);
  }
  if (authority.empty()) return bad_url(whole, "no host");
  url.host = std::string(authority);
  const std::string_view rest = text.substr(slash);
  url.target = normalize_path(rest.empty() || rest[0] != '/' ? "/" + std::string(rest) : std::string(rest));
  return url;
}

Result<Url> resolve_url(const Url& base, std::string_view ref) {
  ref = drop_fragment(ref);
  if (ref.find("://") != std::string_view::npos) return parse_url(ref);
  if (ref.starts_with("//")) return parse_url(base.scheme + ":" + std::string(ref));
  Url url = base;
  if (ref.starts_with("/")) {
    url.target = normalize_path(ref);
    return url;
  }
  const std::string_view base_path = std::string_view(base.target).substr(0, base.target.find('?'));
  const std::string folder(base_path.substr(0, base_path.rfind('/') + 1));
  url.target = normalize_path(folder + std::string(ref));
  return url;
}

}  // namespace hearth::models::install
