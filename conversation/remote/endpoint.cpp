#include "conversation/remote/endpoint.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hearth::remote {
namespace {

Error bad(std::string_view url, const std::string& why) {
  return make_error(ErrorCode::kInvalidArgument, "endpoint URL '" + std::string(url) + "': " + why);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

Result<Endpoint> parse_endpoint(std::string_view url, std::string api_key) {
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad(url, "give a scheme (http:// or https://)");
  const std::string scheme = lower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") return bad(url, "the scheme must be http or https, not " + scheme);
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) return bad(url, "a query or fragment has no meaning here");
  for (const char c : rest) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad(url, "spaces or control characters");
  }
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string path(slash == std::string_view::npos ? std::string_view() : rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) {
    return bad(url, "credentials in the URL are not accepted (give the API key on its own)");
  }
  std::string_view host = authority, port_text;
  if (authority.starts_with('[')) {  // [IPv6]
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad(url, "an IPv6 address without its closing ']'");
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) return bad(url, "junk after the IPv6 address");
    if (!after.empty()) port_text = after.substr(1);
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
  }
  if (host.empty() || host == "[]") return bad(url, "no host");
  Endpoint e;
  e.https = scheme == "https";
  std::string origin = scheme + "://" + lower(host);
  if (!port_text.empty() || authority.ends_with(':')) {
    int port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
      return bad(url, "the port must be a number from 1 to 65535");
    }
    origin += ":" + std::to_string(port);
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty() || path == "/") path = "/v1";  // a bare server address: OpenAI's API lives under /v1
  e.origin = std::move(origin);
  e.path_prefix = std::move(path);
  e.base_url = e.origin + e.path_prefix;
  e.api_key = std::move(api_key);
  return e;
}

}  // namespace hearth::remote
