// HTTP(S) GETs for the installer over cpp-httplib (OpenSSL): a small text page
// (the index's JSON) and a file downloaded resumably (Range from the partial
// file's size). Redirects are followed, at most kMaxRedirects; the transfer is
// never decompressed (Accept-Encoding: identity), so byte offsets are the file's.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "hearth/result.h"
#include "models/install/url.h"

namespace hearth::models::install {

inline constexpr int kMaxRedirects = 10;

struct HttpOptions {
  int connect_timeout_ms = 15000;
  int read_timeout_ms = 30000;                // a silent connection for this long is a failed transfer
  const std::atomic<bool>* cancel = nullptr;  // checked for each received chunk
};

// The body of a 200 answer, at most `max_bytes`.
Result<std::string> http_get_text(const Url& url, const std::string& accept, std::size_t max_bytes,
                                  const HttpOptions& options);

struct FileDownload {
  Url url;
  std::filesystem::path path;       // the partial file: appended to from its current size
  std::uint64_t expected_size = 0;  // bytes of the whole file; 0: unknown (the server's length is used)
  std::function<void(std::uint64_t bytes_in_file)> on_bytes;  // after each chunk written
};

// One attempt: asks for the bytes from the partial file's size on. A 206 must
// start there; a 200 (the server ignores ranges) starts the file over. A cut
// transfer is a kIo error that says how far it got (the bytes stay for the next
// attempt); a cancel is kCancelled; an HTTP error status names the status and URL.
Result<void> download_resumable(const FileDownload& download, const HttpOptions& options);

}  // namespace hearth::models::install
