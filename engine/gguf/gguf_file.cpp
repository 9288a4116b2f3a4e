#include "engine/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/log.h"
#include "engine/gguf/gguf_parse.h"

namespace hearth::gguf {
namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::uint64_t TensorInfo::row_bytes() const {
  auto r = ggml_row_bytes(type, static_cast<std::uint64_t>(n_dims == 0 ? 1 : ne[0]));
  return r ? *r : 0;  // validated at open: cannot fail for a parsed tensor
}

GgufFile::~GgufFile() {
  if (mapping_ != nullptr) {
    unguard_mapping(watch_);
    ::munmap(mapping_, mapping_size_);
  }
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(std::span<const std::byte> bytes, const OpenOptions& options) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->bytes_ = bytes;
  f->allow_incomplete_ = options.allow_incomplete;
  HEARTH_TRY(run_parser(*f));
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::filesystem::path& path, const OpenOptions& options) {
  const std::string where = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return make_error(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                      "cannot open '" + where + "': " + errno_text(err));
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(ErrorCode::kIo, "cannot stat '" + where + "': " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return make_error(ErrorCode::kInvalidArgument, "'" + where + "' is not a regular file");

  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->allow_incomplete_ = options.allow_incomplete;
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > 0) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) return make_error(ErrorCode::kIo, "cannot map '" + where + "': " + errno_text(errno));
    f->mapping_ = m;
    f->mapping_size_ = size;
    f->watch_ = guard_mapping(m, size);  // a file truncated under us reads zeros and reports lost()
    f->bytes_ = {static_cast<const std::byte*>(m), size};
  }
  if (auto r = run_parser(*f); !r) {
    Error e = std::move(r).error();
    e.message = where + ": " + e.message;
    return e;
  }
  log::get("gguf")->debug("opened {}: GGUF v{}, {} keys, {} tensors, data at {}", where, f->version_, f->kvs_.size(),
                          f->tensors_.size(), f->data_offset_);
  return f;
}

const Value* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const TensorInfo* GgufFile::tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::replace_tensor_data(std::size_t index, GgmlType type, std::vector<std::byte> data) {
  TensorInfo& t = tensors_.at(index);
  t.type = type;
  t.n_bytes = data.size();
  t.data = data.data();
  replaced_.push_back(std::move(data));  // the buffer moves, its bytes stay where t.data points
}

Result<const Value*> GgufFile::require(std::string_view key) const {
  if (const Value* v = find(key)) return v;
  return make_error(ErrorCode::kNotFound, "key '" + std::string(key) + "' not found");
}

Error GgufFile::type_error(std::string_view key, const Value& v, std::string_view expected) const {
  std::string actual = to_string(v.type());
  if (const ArrayValue* a = v.as_array()) actual = std::string("array of ") + to_string(a->element_type());
  return make_error(ErrorCode::kCorruptFile,
                    "key '" + std::string(key) + "' has type " + actual + ", expected " + std::string(expected));
}

Result<std::uint64_t> GgufFile::get_uint(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const Value* v, require(key));
  if (auto x = v->as_uint()) return *x;
  if (is_integer(v->type())) {
    return make_error(ErrorCode::kCorruptFile,
                      "key '" + std::string(key) + "' is negative, expected an unsigned value");
  }
  return type_error(key, *v, "an integer");
}

Result<std::int64_t> GgufFile::get_int(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const Value* v, require(key));
  if (auto x = v->as_int()) return *x;
  if (is_integer(v->type())) {
    return make_error(ErrorCode::kCorruptFile, "key '" + std::string(key) + "' does not fit in i64");
  }
  return type_error(key, *v, "an integer");
}

Result<double> GgufFile::get_float(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const Value* v, require(key));
  if (auto x = v->as_float()) return *x;
  return type_error(key, *v, "f32 or f64");
}

Result<const ArrayValue*> GgufFile::get_array(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const Value* v, require(key));
  if (const ArrayValue* a = v->as_array()) return a;
  return type_error(key, *v, "array");
}

Result<std::span<const std::string_view>> GgufFile::get_string_array(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const ArrayValue* a, get_array(key));
  if (a->element_type() == ValueType::kString) return a->strings();
  return type_error(key, *find(key), "array of string");
}

}  // namespace hearth::gguf
