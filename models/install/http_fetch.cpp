#include "models/install/http_fetch.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "models/install/out_file.h"

namespace hearth::models::install {
namespace {

std::string transport_failure(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (refused, or the host is unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting";
    case httplib::Error::Read:
      return "the connection closed or went silent";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "the server's TLS certificate was not accepted";
    default:
      return httplib::to_string(error);
  }
}

// What one request's response said before its body.
struct Answer {
  int status = 0;
  std::string location;
  std::string content_range;
  std::string content_encoding;
  std::uint64_t content_length = 0;  // 0: not given
};

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

Error status_error(const Answer& a, const Url& url) {
  const ErrorCode code = a.status == 404 || a.status == 410 ? ErrorCode::kNotFound : ErrorCode::kIo;
  return make_error(code, "HTTP " + std::to_string(a.status) + " from " + url.text());
}

using BodyStart = std::function<Result<void>(const Answer&)>;  // a non-redirect answer, before its body
using BodyChunk = std::function<Result<void>(const char*, std::size_t)>;

// GETs `url`, following redirects; `start` sees the final answer, `chunk` its body.
// An error from either stops the transfer and is returned as is.
Result<void> get(Url url, const httplib::Headers& headers, const HttpOptions& options, const BodyStart& start,
                 const BodyChunk& chunk) {
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    httplib::Client client(url.origin());
    client.set_connection_timeout(options.connect_timeout_ms / 1000, (options.connect_timeout_ms % 1000) * 1000);
    client.set_read_timeout(options.read_timeout_ms / 1000, (options.read_timeout_ms % 1000) * 1000);
    client.set_decompress(false);
    client.set_keep_alive(false);
    Answer answer;
    std::optional<Error> stopped;
    const auto result = client.Get(
        url.target, headers,
        [&](const httplib::Response& r) {
          answer.status = r.status;
          answer.location = r.get_header_value("Location");
          answer.content_range = r.get_header_value("Content-Range");
          answer.content_encoding = r.get_header_value("Content-Encoding");
          const std::string length = r.get_header_value("Content-Length");
          std::from_chars(length.data(), length.data() + length.size(), answer.content_length);
          if (is_redirect(r.status)) return false;  // the body of a redirect is of no interest
          if (auto ok = start(answer); !ok) stopped = std::move(ok).error();
          return !stopped;
        },
        [&](const char* data, std::size_t n) {
          // What arrived is kept (written) before a cancel stops the transfer.
          if (auto ok = chunk(data, n); !ok) stopped = std::move(ok).error();
          if (!stopped && options.cancel && options.cancel->load()) {
            stopped = make_error(ErrorCode::kCancelled, "cancelled");
          }
          return !stopped;
        });
    if (stopped) return *stopped;
    if (is_redirect(answer.status)) {
      if (answer.location.empty())
        return make_error(ErrorCode::kIo,
                          "HTTP " + std::to_string(answer.status) + " without a Location from " + url.text());
      HEARTH_ASSIGN_OR_RETURN(url, resolve_url(url, answer.location));
      continue;
    }
    if (result.error() != httplib::Error::Success) {
      if (options.cancel && options.cancel->load()) return make_error(ErrorCode::kCancelled, "cancelled");
      return make_error(ErrorCode::kIo, url.text() + ": " + transport_failure(result.error()));
    }
    return {};
  }
  return make_error(ErrorCode::kIo,
                    "more than " + std::to_string(kMaxRedirects) + " redirects, the last to " + url.text());
}

// "bytes FIRST-LAST/TOTAL" -> FIRST (and TOTAL when given).
bool read_content_range(const std::string& value, std::uint64_t& first, std::uint64_t& total) {
  if (!value.starts_with("bytes ")) return false;
  const char* p = value.data() + 6;
  const char* end = value.data() + value.size();
  auto r = std::from_chars(p, end, first);
  if (r.ec != std::errc{}) return false;
  const char* slash = std::find(r.ptr, end, '/');
  total = 0;
  if (slash != end && slash + 1 != end && slash[1] != '*') std::from_chars(slash + 1, end, total);
  return true;
}

}  // namespace

Result<std::string> http_get_text(const Url& url, const std::string& accept, std::size_t max_bytes,
                                  const HttpOptions& options) {
  std::string body;
  HEARTH_TRY(get(
      url, {{"Accept", accept}, {"Accept-Encoding", "identity"}}, options,
      [&](const Answer& a) -> Result<void> {
        if (a.status != 200) return status_error(a, url);
        return {};
      },
      [&](const char* data, std::size_t n) -> Result<void> {
        if (n > max_bytes - body.size()) {
          return make_error(ErrorCode::kCorruptFile,
                            url.text() + " answers more than " + std::to_string(max_bytes) + " bytes");
        }
        body.append(data, n);
        return {};
      }));
  return body;
}

Result<void> download_resumable(const FileDownload& d, const HttpOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(OutFile file, OutFile::open(d.path, OutFile::Mode::kAppend));
  if (d.expected_size > 0 && file.size() > d.expected_size) HEARTH_TRY(file.truncate(0));  // not this file's start
  const std::uint64_t from = file.size();
  if (d.expected_size > 0 && from == d.expected_size) return file.close();
  httplib::Headers headers{{"Accept-Encoding", "identity"}};
  if (from > 0) headers.emplace("Range", "bytes=" + std::to_string(from) + "-");
  std::uint64_t total = d.expected_size;
  bool started = false;  // the body began to arrive
  auto got = get(
      d.url, headers, options,
      [&](const Answer& a) -> Result<void> {
        if (!a.content_encoding.empty() && a.content_encoding != "identity") {
          return make_error(ErrorCode::kIo,
                            d.url.text() + " sent the file " + a.content_encoding + "-encoded, unasked");
        }
        if (a.status == 200) {
          HEARTH_TRY(file.truncate(0));  // the server ignored the range: the whole file comes
          if (total == 0) total = a.content_length;
          started = true;
          return {};
        }
        if (a.status != 206 || from == 0) return status_error(a, d.url);
        std::uint64_t first = 0, whole = 0;
        if (!read_content_range(a.content_range, first, whole) || first != from) {
          return make_error(ErrorCode::kIo, d.url.text() + " answered the range from byte " + std::to_string(from) +
                                                " with '" + a.content_range + "'");
        }
        if (total == 0) total = whole;
        started = true;
        return {};
      },
      [&](const char* data, std::size_t n) -> Result<void> {
        if (total > 0 && n > total - std::min(total, file.size())) {
          return make_error(ErrorCode::kCorruptFile,
                            d.url.text() + " sends more than the " + std::to_string(total) + " bytes the file has");
        }
        HEARTH_TRY(file.write(data, n));
        if (d.on_bytes) d.on_bytes(file.size());
        return {};
      });
  const auto truncated = [&](const std::string& why) {
    return make_error(ErrorCode::kIo, "truncated transfer: " + std::to_string(file.size()) + " of " +
                                          std::to_string(total) + " bytes of " + d.url.text() + " arrived (" + why +
                                          "); the next attempt resumes from there");
  };
  if (!got) {
    if (started && got.error().code == ErrorCode::kIo && total > 0 && file.size() < total) {
      return truncated(got.error().message);
    }
    return std::move(got).error();
  }
  if (total > 0 && file.size() != total) return truncated("the server closed the response early");
  return file.close();
}

}  // namespace hearth::models::install
