// A GGUF model file (versions 2 and 3), memory-mapped read-only and validated
// once at open: every count, length, dimension, offset and byte size is checked
// against the bytes that remain and against overflow before anything is sized
// from it. Metadata strings and arrays are views into the mapping (no copies of
// the vocabulary). Errors name the field and the byte offset where the bad item
// starts.
//
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64 kv count,
// kv pairs (key string, u32 value type, value), tensor infos (name string,
// u32 n_dims, n_dims x i64 ne, u32 ggml type, u64 offset into the data
// section), padding to general.alignment, data section.
//
// Accepted (what the Python gguf writer produces): n_dims 0..4 (missing dims are
// 1), each ne >= 0 (0 = an empty tensor of 0 bytes), tensors in any order with
// aligned offsets and non-overlapping data that ends inside the file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf/ggml_types.h"
#include "engine/gguf/gguf_value.h"
#include "engine/gguf/mapping_guard.h"
#include "hearth/result.h"

namespace hearth::gguf {

inline constexpr std::uint32_t kDefaultAlignment = 32;
inline constexpr std::uint32_t kMaxDims = 4;

struct KeyValue {
  std::string_view key;
  Value value;
  std::uint64_t file_offset = 0;  // byte offset of the key's length field
};

struct TensorInfo {
  std::string_view name;
  std::uint32_t n_dims = 0;
  std::array<std::int64_t, kMaxDims> ne{1, 1, 1, 1};  // ne[0] contiguous; unused dims are 1
  GgmlType type = GgmlType::kF32;
  std::uint64_t offset = 0;       // bytes, relative to the data section
  std::uint64_t file_offset = 0;  // bytes, absolute: data_offset() + offset
  std::uint64_t n_elements = 0;   // product of ne
  std::uint64_t n_bytes = 0;      // exact size of the data (no padding)
  const std::byte* data = nullptr;
  std::uint64_t info_offset = 0;  // byte offset of this tensor info in the file

  std::span<const std::byte> bytes() const { return {data, static_cast<std::size_t>(n_bytes)}; }
  std::span<const std::int64_t> shape() const { return {ne.data(), n_dims}; }
  // Bytes of one row (ne[0] elements).
  std::uint64_t row_bytes() const;
};

struct OpenOptions {
  // A file whose header and tensor infos are whole but whose tensor data is
  // cut short (an interrupted download) opens with incomplete() set and the
  // missing tensors' data null: for `hearth-cli inspect`, never for loading.
  // Otherwise such a file is kCorruptFile "incomplete file: N of M bytes
  // present (the tensor data ends at byte M)".
  bool allow_incomplete = false;
};

class GgufFile {
 public:
  // Maps `path` read-only and parses it. kNotFound / kIo for the file itself,
  // kCorruptFile / kUnsupported for its contents.
  static Result<std::unique_ptr<GgufFile>> open(const std::filesystem::path& path, const OpenOptions& options = {});
  // Parses an in-memory image. The caller keeps `bytes` alive and unchanged
  // for the life of the returned file (all views point into it).
  static Result<std::unique_ptr<GgufFile>> parse(std::span<const std::byte> bytes, const OpenOptions& options = {});

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  std::uint32_t version() const { return version_; }
  std::uint32_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }  // absolute, aligned
  std::uint64_t file_size() const { return bytes_.size(); }
  std::span<const std::byte> bytes() const { return bytes_; }
  const std::filesystem::path& path() const { return path_; }  // empty for parse()
  // Reports whether the file shrank under the mapping (reads then see zeros).
  const MappingWatch& mapping_watch() const { return watch_; }
  // With OpenOptions::allow_incomplete: the tensor data ends past the file's
  // last byte, at byte data_end() (the size the whole file must have).
  bool incomplete() const { return data_end_ > bytes_.size(); }
  std::uint64_t data_end() const { return data_end_; }

  // --- metadata -----------------------------------------------------------
  // Every key/value in file order.
  std::span<const KeyValue> metadata() const { return kvs_; }
  // The value of `key`, or nullptr.
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Exact type T (uint8_t..int64_t, float, double, bool, std::string_view).
  // kNotFound: "key 'x' not found"; kCorruptFile: "key 'llama.block_count' has
  // type u64, expected u32".
  template <class T>
  Result<T> get(std::string_view key) const;
  Result<std::string_view> get_string(std::string_view key) const { return get<std::string_view>(key); }
  // Any integer type whose value fits in the result (negative or too large is an error).
  Result<std::uint64_t> get_uint(std::string_view key) const;
  Result<std::int64_t> get_int(std::string_view key) const;
  // f32 or f64.
  Result<double> get_float(std::string_view key) const;

  // Arrays. get_array: any element type. get_string_array / get_numeric_array:
  // the exact element type, else kCorruptFile "key 'x' is array of i32, expected array of f32".
  Result<const ArrayValue*> get_array(std::string_view key) const;
  Result<std::span<const std::string_view>> get_string_array(std::string_view key) const;
  template <class T>
  Result<NumericArray<T>> get_numeric_array(std::string_view key) const;

  // --- tensors ------------------------------------------------------------
  // Every tensor in file order.
  std::span<const TensorInfo> tensors() const { return tensors_; }
  // The tensor named `name`, or nullptr.
  const TensorInfo* tensor(std::string_view name) const;
  // Tensor `index` (of tensors()) now has `type` and the bytes of `data`, which
  // the file owns from now on (a load-time weight conversion: models/
  // weight_convert.h). The caller checks that data holds the shape in that type.
  void replace_tensor_data(std::size_t index, GgmlType type, std::vector<std::byte> data);

 private:
  GgufFile() = default;
  friend class GgufParser;

  Error type_error(std::string_view key, const Value& v, std::string_view expected) const;
  Result<const Value*> require(std::string_view key) const;

  std::filesystem::path path_;
  void* mapping_ = nullptr;  // mmap'd region (open) or null (parse)
  std::size_t mapping_size_ = 0;
  MappingWatch watch_;  // see mapping_guard.h
  std::span<const std::byte> bytes_;

  std::uint32_t version_ = 0;
  std::uint32_t alignment_ = kDefaultAlignment;
  std::uint64_t data_offset_ = 0;
  std::uint64_t data_end_ = 0;  // the end of the last tensor's data (absolute)
  bool allow_incomplete_ = false;
  std::vector<KeyValue> kvs_;
  std::vector<std::unique_ptr<ArrayValue>> arrays_;  // owners of top-level array values
  std::unordered_map<std::string_view, std::size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, std::size_t> tensor_index_;
  std::vector<std::vector<std::byte>> replaced_;  // owners of replace_tensor_data's bytes
};

template <class T>
Result<T> GgufFile::get(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const Value* v, require(key));
  if (auto x = v->as<T>()) return *x;
  return type_error(key, *v, to_string(value_type_of<T>::value));
}

template <class T>
Result<NumericArray<T>> GgufFile::get_numeric_array(std::string_view key) const {
  HEARTH_ASSIGN_OR_RETURN(const ArrayValue* a, get_array(key));
  if (auto x = a->template as_numeric<T>()) return *x;
  return type_error(key, *find(key), std::string("array of ") + to_string(value_type_of<T>::value));
}

}  // namespace hearth::gguf
