// A remote OpenAI-compatible endpoint: the base URL the user gave
// ("http://gpu-box:8000/v1", "https://api.example.com/v1", or a bare
// "http://127.0.0.1:8080", which means its /v1), split for the HTTP client,
// and the optional API key (sent as "Authorization: Bearer KEY", never
// recorded or logged).
#pragma once

#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::remote {

struct Endpoint {
  std::string base_url;     // normalised: "http://host:port/v1" (no trailing '/'); what records name
  std::string origin;       // "http://host:port": the HTTP client's target
  std::string path_prefix;  // "/v1": put before "/models", "/chat/completions"
  std::string api_key;      // "" when none
  bool https = false;
};

// kInvalidArgument naming what is wrong: a scheme other than http or https,
// no host, a bad port, credentials in the URL (give the key apart), a query
// or fragment.
Result<Endpoint> parse_endpoint(std::string_view url, std::string api_key = {});

}  // namespace hearth::remote
