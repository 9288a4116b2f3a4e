#include "engine/gguf/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "engine/core/utf8.h"
#include "engine/gguf/utf8.h"
#include "engine/gguf/writer_value.h"

namespace hearth::gguf {
namespace {

constexpr std::string_view kAlignmentKey = "general.alignment";

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) {
  return x + (a - x % a) % a;
}

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

GgufWriter::GgufWriter(WriterOptions options) : options_(options) {
  if (options_.version != 2 && options_.version != 3) {
    defer(invalid("GGUF version " + std::to_string(options_.version) + " cannot be written (only 2 and 3)"));
  }
  if (options_.alignment == 0 || !std::has_single_bit(options_.alignment)) {
    defer(invalid("alignment " + std::to_string(options_.alignment) + " is not a power of two"));
    options_.alignment = kDefaultAlignment;  // keeps the layout arithmetic defined
  }
  if (options_.alignment != kDefaultAlignment) add_scalar(kAlignmentKey, options_.alignment);
}

void GgufWriter::defer(Error e) {
  if (!error_) error_ = std::move(e);
}

void GgufWriter::add(std::string_view key, WriterValue value) {
  const std::string ctx = "key " + quote_for_message(key);
  if (key.empty()) return defer(invalid("empty metadata key"));
  if (find_invalid_utf8(key)) return defer(invalid(ctx + " is not valid UTF-8"));
  for (const auto& kv : kvs_) {
    if (kv.first != key) continue;
    // general.alignment added by the constructor may be restated with the same value.
    if (key == kAlignmentKey && value.type == ValueType::kU32 && value.bits == options_.alignment) return;
    return defer(invalid("duplicate " + ctx));
  }
  if (key == kAlignmentKey && (value.type != ValueType::kU32 || value.bits != options_.alignment)) {
    return defer(invalid("set general.alignment through WriterOptions::alignment"));
  }
  if (auto r = validate_value(value, ctx); !r) return defer(std::move(r).error());
  kvs_.emplace_back(std::string(key), std::move(value));
}

void GgufWriter::add_tensor(std::string_view name, GgmlType type, std::vector<std::int64_t> ne,
                            std::vector<std::byte> data) {
  const std::size_t size = data.size();
  add_tensor(name, type, std::move(ne), TensorFiller{});
  if (tensors_.empty() || tensors_.back().name != name) return;  // rejected
  PendingTensor& t = tensors_.back();
  if (size != t.n_bytes) {
    defer(invalid("tensor " + quote_for_message(name) + ": " + std::to_string(size) +
                  " bytes of data, its shape needs " + std::to_string(t.n_bytes)));
  }
  t.data = std::move(data);
}

void GgufWriter::add_tensor(std::string_view name, GgmlType type, std::vector<std::int64_t> ne, TensorFiller fill) {
  const std::string ctx = "tensor " + quote_for_message(name);
  if (name.empty()) return defer(invalid("empty tensor name"));
  if (find_invalid_utf8(name)) return defer(invalid(ctx + ": name is not valid UTF-8"));
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) return defer(invalid("duplicate " + ctx));
  }
  if (ne.size() > kMaxDims) return defer(invalid(ctx + ": more than 4 dimensions"));
  auto bytes = ggml_tensor_bytes(type, ne);
  if (!bytes) return defer(invalid(ctx + ": " + bytes.error().message));
  PendingTensor t{
      std::string(name), type, std::move(ne), {}, std::move(fill), *bytes, align_up(data_end_, options_.alignment)};
  data_end_ = t.offset + t.n_bytes;
  tensors_.push_back(std::move(t));
}

Result<std::vector<std::byte>> GgufWriter::header() const {
  if (error_) return *error_;
  std::vector<std::byte> buf;
  ByteSink out{buf};
  out.bytes("GGUF", 4);
  out.u32(options_.version);
  out.u64(tensors_.size());
  out.u64(kvs_.size());
  for (const auto& [key, value] : kvs_) {
    out.string(key);
    write_value(out, value);
  }
  for (const PendingTensor& t : tensors_) {
    out.string(t.name);
    out.u32(static_cast<std::uint32_t>(t.ne.size()));
    for (std::int64_t d : t.ne) out.i64(d);
    out.u32(static_cast<std::uint32_t>(t.type));
    out.u64(t.offset);
  }
  buf.resize(static_cast<std::size_t>(align_up(buf.size(), options_.alignment)), std::byte{0});
  return buf;
}

// Header, then each tensor's data padded to the alignment. A filler's buffer
// holds one tensor at a time.
Result<void> GgufWriter::emit(const Sink& sink) const {
  HEARTH_ASSIGN_OR_RETURN(const std::vector<std::byte> head, header());
  HEARTH_TRY(sink(head));
  const std::vector<std::byte> zeros(options_.alignment, std::byte{0});
  std::uint64_t pos = 0;
  std::vector<std::byte> scratch;
  for (const PendingTensor& t : tensors_) {
    HEARTH_TRY(sink(std::span(zeros).first(static_cast<std::size_t>(t.offset - pos))));
    if (t.fill) {
      scratch.assign(static_cast<std::size_t>(t.n_bytes), std::byte{0});
      t.fill(scratch);
      HEARTH_TRY(sink(scratch));
    } else {
      HEARTH_TRY(sink(t.data));
    }
    pos = t.offset + t.n_bytes;
  }
  return sink(std::span(zeros).first(static_cast<std::size_t>(align_up(pos, options_.alignment) - pos)));
}

Result<std::vector<std::byte>> GgufWriter::to_bytes() const {
  std::vector<std::byte> out;
  HEARTH_TRY(emit([&](std::span<const std::byte> b) -> Result<void> {
    out.insert(out.end(), b.begin(), b.end());
    return {};
  }));
  return out;
}

Result<void> GgufWriter::write_file(const std::filesystem::path& path) const {
  if (error_) return *error_;
  const std::string final_name = path.string();
  const std::string tmp = final_name + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(ErrorCode::kIo, "cannot create '" + tmp + "': " + std::strerror(errno));
  auto fail = [&](const std::string& what, int err) -> Result<void> {
    ::close(fd);
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, what + " '" + tmp + "': " + std::strerror(err));
  };
  auto sink = [&](std::span<const std::byte> b) -> Result<void> {
    while (!b.empty()) {
      const ssize_t n = ::write(fd, b.data(), b.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return make_error(ErrorCode::kIo, "cannot write '" + tmp + "': " + std::strerror(n < 0 ? errno : ENOSPC));
      }
      b = b.subspan(static_cast<std::size_t>(n));
    }
    return {};
  };
  if (auto r = emit(sink); !r) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return r;
  }
  if (::fsync(fd) != 0) return fail("cannot flush", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, "cannot close '" + tmp + "': " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), final_name.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, "cannot rename '" + tmp + "' to '" + final_name + "': " + std::strerror(err));
  }
  return {};
}

}  // namespace hearth::gguf
