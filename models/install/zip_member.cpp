#include "models/install/zip_member.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hearth::models::install {
namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::size_t kEndSize = 22, kLocatorSize = 20, kZip64EndSize = 56, kCentralSize = 46, kLocalSize = 30;
constexpr std::uint32_t kMax32 = 0xffffffff;
constexpr std::uint16_t kMax16 = 0xffff;
constexpr std::uint64_t kMaxDirectoryBytes = 64ull << 20;
constexpr std::size_t kChunk = 1 << 20;  // bytes read or written per step

std::uint64_t le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The zip file open for positioned reads; every read is checked against its size.
class ZipFile {
 public:
  explicit ZipFile(std::filesystem::path path) : path_(std::move(path)) {}
  ~ZipFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ZipFile(const ZipFile&) = delete;
  ZipFile& operator=(const ZipFile&) = delete;

  Result<void> open() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) return io_error("open");
    size_ = static_cast<std::uint64_t>(st.st_size);
    return {};
  }
  std::uint64_t size() const { return size_; }

  Result<void> read(std::uint64_t offset, std::size_t n, std::uint8_t* out, const char* what) const {
    if (offset > size_ || n > size_ - offset) {
      return corrupt(std::string(what) + " at byte " + std::to_string(offset) + " (" + std::to_string(n) +
                     " bytes) lies past the end of the file (" + std::to_string(size_) + " bytes)");
    }
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return io_error("read");
      done += static_cast<std::size_t>(got);
    }
    return {};
  }

  Error corrupt(const std::string& what) const {
    return make_error(ErrorCode::kCorruptFile, "zip " + path_.filename().string() + ": " + what);
  }
  Error io_error(const char* what) const {
    return make_error(ErrorCode::kIo,
                      "cannot " + std::string(what) + " " + path_.string() + ": " + std::strerror(errno));
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

struct Directory {
  std::uint64_t offset = 0;  // of the central directory
  std::uint64_t size = 0;    // bytes
  std::uint64_t entries = 0;
};

// The zip64 end record, when the classic one says its fields overflowed.
Result<Directory> read_zip64_end(const ZipFile& zip, std::uint64_t end_at) {
  if (end_at < kLocatorSize) return zip.corrupt("zip64 sizes are flagged but there is no zip64 locator");
  std::uint8_t loc[kLocatorSize];
  HEARTH_TRY(zip.read(end_at - kLocatorSize, kLocatorSize, loc, "the zip64 locator"));
  if (le(loc, 4) != kZip64LocatorSignature)
    return zip.corrupt("zip64 sizes are flagged but the zip64 locator is missing");
  const std::uint64_t record_at = le(loc + 8, 8);
  std::uint8_t rec[kZip64EndSize];
  HEARTH_TRY(zip.read(record_at, kZip64EndSize, rec, "the zip64 end record"));
  if (le(rec, 4) != kZip64EndSignature) return zip.corrupt("no zip64 end record where the locator points");
  Directory d;
  d.entries = le(rec + 32, 8);
  d.size = le(rec + 40, 8);
  d.offset = le(rec + 48, 8);
  if (d.offset > record_at || d.size > record_at - d.offset) {
    return zip.corrupt("the central directory (" + std::to_string(d.size) + " bytes at " + std::to_string(d.offset) +
                       ") overlaps the zip64 end record at " + std::to_string(record_at));
  }
  return d;
}

Result<Directory> read_directory(const ZipFile& zip) {
  // The end record is the last thing in the file, after a comment of at most 65535 bytes.
  const std::uint64_t tail = std::min<std::uint64_t>(zip.size(), kEndSize + kMax16);
  if (tail < kEndSize) return zip.corrupt("too short to be a zip (" + std::to_string(zip.size()) + " bytes)");
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(tail));
  HEARTH_TRY(zip.read(zip.size() - tail, buf.size(), buf.data(), "the end of the file"));
  std::optional<std::size_t> at;
  for (std::size_t i = buf.size() - kEndSize + 1; i-- > 0;) {
    if (le(&buf[i], 4) == kEndSignature && i + kEndSize + le(&buf[i + 20], 2) == buf.size()) {
      at = i;
      break;
    }
  }
  if (!at) return zip.corrupt("no end-of-central-directory record (not a zip, or cut short)");
  const std::uint8_t* e = &buf[*at];
  const std::uint64_t end_at = zip.size() - tail + *at;
  if (le(e + 4, 2) != 0 || le(e + 6, 2) != 0) return zip.corrupt("split (multi-disk) archives are not supported");
  Directory d{le(e + 16, 4), le(e + 12, 4), le(e + 10, 2)};
  if (d.entries == kMax16 || d.size == kMax32 || d.offset == kMax32) {
    HEARTH_ASSIGN_OR_RETURN(d, read_zip64_end(zip, end_at));
  } else if (d.offset > end_at || d.size > end_at - d.offset) {
    return zip.corrupt("the central directory (" + std::to_string(d.size) + " bytes at " + std::to_string(d.offset) +
                       ") runs past the end record at " + std::to_string(end_at));
  }
  // A wheel's directory is a few KiB; the bound keeps a hostile one from taking the memory.
  if (d.size > kMaxDirectoryBytes) {
    return zip.corrupt("the central directory claims " + std::to_string(d.size) + " bytes (more than 64 MiB)");
  }
  return d;
}

// Zip64's extra field (id 1) holds, in this order, the fields that are 0xffffffff in the header.
Result<void> apply_zip64_extra(const ZipFile& zip, const std::uint8_t* extra, std::size_t n, ZipMember& m,
                               std::uint64_t* local_offset) {
  for (std::size_t i = 0; i + 4 <= n;) {
    const std::uint64_t id = le(extra + i, 2), len = le(extra + i + 2, 2);
    if (i + 4 + len > n) return zip.corrupt(m.name + ": an extra field runs past its header");
    if (id == 1) {
      const std::uint8_t* p = extra + i + 4;
      std::size_t left = static_cast<std::size_t>(len);
      for (std::uint64_t* field : {&m.size, &m.compressed_size, local_offset}) {
        if (!field || *field != kMax32) continue;
        if (left < 8) return zip.corrupt(m.name + ": the zip64 extra field is too short for its sizes");
        *field = le(p, 8);
        p += 8;
        left -= 8;
      }
      return {};
    }
    i += 4 + static_cast<std::size_t>(len);
  }
  if (m.size == kMax32 || m.compressed_size == kMax32 || (local_offset && *local_offset == kMax32)) {
    return zip.corrupt(m.name + ": zip64 sizes are flagged but there is no zip64 extra field");
  }
  return {};
}

// The member's central directory entry, or kNotFound; its local header offset in `local_offset`.
Result<ZipMember> find_in_directory(const ZipFile& zip, const Directory& d, std::string_view name,
                                    std::uint64_t& local_offset) {
  std::vector<std::uint8_t> cd(static_cast<std::size_t>(d.size));
  HEARTH_TRY(zip.read(d.offset, cd.size(), cd.data(), "the central directory"));
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < d.entries; ++k) {
    if (at + kCentralSize > cd.size() || le(&cd[at], 4) != kCentralSignature) {
      return zip.corrupt("central directory entry " + std::to_string(k) + " of " + std::to_string(d.entries) +
                         " is missing or damaged");
    }
    const std::uint8_t* h = &cd[at];
    const std::size_t name_len = le(h + 28, 2), extra_len = le(h + 30, 2), comment_len = le(h + 32, 2);
    if (at + kCentralSize + name_len + extra_len + comment_len > cd.size()) {
      return zip.corrupt("central directory entry " + std::to_string(k) + " runs past the directory");
    }
    const std::string_view entry_name(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    if (entry_name == name) {
      ZipMember m;
      m.name = std::string(entry_name);
      if (le(h + 8, 2) & 1) return zip.corrupt(m.name + " is encrypted");
      m.method = static_cast<std::uint16_t>(le(h + 10, 2));
      m.crc32 = static_cast<std::uint32_t>(le(h + 16, 4));
      m.compressed_size = le(h + 20, 4);
      m.size = le(h + 24, 4);
      local_offset = le(h + 42, 4);
      HEARTH_TRY(apply_zip64_extra(zip, h + kCentralSize + name_len, extra_len, m, &local_offset));
      return m;
    }
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  return make_error(ErrorCode::kNotFound, "no member " + std::string(name));
}

// The local header must agree with the central directory; the data must end before the directory.
Result<void> check_local_header(const ZipFile& zip, const Directory& d, std::uint64_t local_offset, ZipMember& m) {
  std::uint8_t h[kLocalSize];
  HEARTH_TRY(zip.read(local_offset, kLocalSize, h, ("the local header of " + m.name).c_str()));
  if (le(h, 4) != kLocalSignature)
    return zip.corrupt(m.name + ": no local header at byte " + std::to_string(local_offset));
  const std::size_t name_len = le(h + 26, 2), extra_len = le(h + 28, 2);
  std::vector<std::uint8_t> rest(name_len + extra_len);
  HEARTH_TRY(zip.read(local_offset + kLocalSize, rest.size(), rest.data(), ("the local header of " + m.name).c_str()));
  if (std::string_view(reinterpret_cast<const char*>(rest.data()), name_len) != m.name) {
    return zip.corrupt(m.name + ": the local header names a different file");
  }
  if (le(h + 8, 2) != m.method)
    return zip.corrupt(m.name + ": the local header's compression method differs from the directory's");
  const bool descriptor = (le(h + 6, 2) & 8) != 0;  // sizes follow the data instead
  if (!descriptor) {
    ZipMember local = m;
    local.compressed_size = le(h + 18, 4);
    local.size = le(h + 22, 4);
    HEARTH_TRY(apply_zip64_extra(zip, rest.data() + name_len, extra_len, local, nullptr));
    if (local.compressed_size != m.compressed_size || local.size != m.size || le(h + 14, 4) != m.crc32) {
      return zip.corrupt(m.name + ": the local header says " + std::to_string(local.compressed_size) + " -> " +
                         std::to_string(local.size) + " bytes, the central directory " +
                         std::to_string(m.compressed_size) + " -> " + std::to_string(m.size));
    }
  }
  m.data_offset = local_offset + kLocalSize + rest.size();
  if (m.data_offset > d.offset || m.compressed_size > d.offset - m.data_offset) {
    return zip.corrupt(m.name + ": its " + std::to_string(m.compressed_size) + " compressed bytes at byte " +
                       std::to_string(m.data_offset) + " run into the central directory at byte " +
                       std::to_string(d.offset));
  }
  if (m.method == 0 && m.compressed_size != m.size) {
    return zip.corrupt(m.name + ": stored, yet " + std::to_string(m.compressed_size) + " bytes in the zip and " +
                       std::to_string(m.size) + " extracted");
  }
  if (m.method != 0 && m.method != 8) {
    return zip.corrupt(m.name + ": compression method " + std::to_string(m.method) +
                       " (only stored and deflate are supported)");
  }
  return {};
}

// DEFLATE data (raw, no zlib header) streamed through `sink`. The stream must end exactly at the member's
// compressed size and produce at most its declared size; the caller checks the total and the CRC.
Result<void> inflate_member(const ZipFile& zip, const ZipMember& m, const ChunkSink& sink,
                            const std::atomic<bool>* cancel, std::uint64_t& produced, uLong& crc) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return make_error(ErrorCode::kInternal, "zlib: inflateInit2 failed");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  std::vector<std::uint8_t> in(kChunk), out(kChunk);
  std::uint64_t consumed = 0;  // compressed bytes handed to zlib
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (cancel && cancel->load()) return make_error(ErrorCode::kCancelled, "cancelled while extracting " + m.name);
    if (zs.avail_in == 0) {
      if (consumed == m.compressed_size) {
        return zip.corrupt(m.name + ": its " + std::to_string(m.compressed_size) +
                           " compressed bytes end before the deflate stream does");
      }
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, m.compressed_size - consumed));
      HEARTH_TRY(zip.read(m.data_offset + consumed, n, in.data(), ("the data of " + m.name).c_str()));
      consumed += n;
      zs.next_in = in.data();
      zs.avail_in = static_cast<uInt>(n);
    }
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    ret = inflate(&zs, Z_NO_FLUSH);
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
      return zip.corrupt(m.name + ": not valid deflate data (" + (zs.msg ? zs.msg : "zlib error") + ")");
    }
    const std::size_t n = out.size() - zs.avail_out;
    if (n > m.size - produced) {
      return zip.corrupt(m.name + ": inflates to more than the " + std::to_string(m.size) +
                         " bytes its headers declare");
    }
    crc = crc32(crc, out.data(), static_cast<uInt>(n));
    produced += n;
    if (n > 0) HEARTH_TRY(sink(reinterpret_cast<const char*>(out.data()), n));
  }
  if (zs.avail_in != 0 || consumed != m.compressed_size) {
    return zip.corrupt(m.name + ": the deflate stream ends before the " + std::to_string(m.compressed_size) +
                       " compressed bytes its headers declare");
  }
  return {};
}

Result<void> copy_stored(const ZipFile& zip, const ZipMember& m, const ChunkSink& sink, const std::atomic<bool>* cancel,
                         std::uint64_t& produced, uLong& crc) {
  std::vector<std::uint8_t> buf(kChunk);
  while (produced < m.size) {
    if (cancel && cancel->load()) return make_error(ErrorCode::kCancelled, "cancelled while extracting " + m.name);
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, m.size - produced));
    HEARTH_TRY(zip.read(m.data_offset + produced, n, buf.data(), ("the data of " + m.name).c_str()));
    crc = crc32(crc, buf.data(), static_cast<uInt>(n));
    produced += n;
    HEARTH_TRY(sink(reinterpret_cast<const char*>(buf.data()), n));
  }
  return {};
}

}  // namespace

Result<void> extract_zip_member(const std::filesystem::path& path, const ZipMember& m, const ChunkSink& sink,
                                const std::atomic<bool>* cancel) {
  ZipFile zip(path);
  HEARTH_TRY(zip.open());
  std::uint64_t produced = 0;
  uLong crc = crc32(0, nullptr, 0);
  if (m.method == 0) {
    HEARTH_TRY(copy_stored(zip, m, sink, cancel, produced, crc));
  } else {
    HEARTH_TRY(inflate_member(zip, m, sink, cancel, produced, crc));
  }
  if (produced != m.size) {
    return zip.corrupt(m.name + ": extracted " + std::to_string(produced) + " of the " + std::to_string(m.size) +
                       " bytes its headers declare");
  }
  if (crc != m.crc32) {
    char text[64];
    std::snprintf(text, sizeof text, "headers say %08x, the data gives %08lx", m.crc32, crc);
    return zip.corrupt(m.name + ": CRC-32 mismatch (" + text + ")");
  }
  return {};
}

Result<ZipMember> find_zip_member(const std::filesystem::path& path, std::string_view name) {
  ZipFile zip(path);
  HEARTH_TRY(zip.open());
  HEARTH_ASSIGN_OR_RETURN(const Directory d, read_directory(zip));
  std::uint64_t local_offset = 0;
  auto m = find_in_directory(zip, d, name, local_offset);
  if (!m) {
    if (m.error().code == ErrorCode::kNotFound) {
      return make_error(ErrorCode::kNotFound, path.filename().string() + " has no member " + std::string(name));
    }
    return std::move(m).error();
  }
  HEARTH_TRY(check_local_header(zip, d, local_offset, *m));
  return m;
}

}  // namespace hearth::models::install
