// Builds GGUF files (version 3 by default, 2 for tests): metadata of every
// value type including nested arrays, and tensors whose data is given as bytes
// or produced at write time by a callback (so multi-GB synthetic models never
// sit in memory whole). Offsets and padding follow general.alignment.
//
// The writer refuses what the reader would reject (empty or duplicate keys,
// duplicate tensor names, bad shapes, data of the wrong size): finish-time
// errors are values. Hostile files for tests are crafted byte by byte instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/gguf/ggml_types.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_value.h"
#include "hearth/result.h"

namespace hearth::gguf {

// An owned metadata value for the writer: a scalar, a string, or an array of
// elements that all have `element_type` (an empty array still has one).
struct WriterValue {
  ValueType type = ValueType::kU8;
  std::uint64_t bits = 0;                   // scalar: raw little-endian bits, zero-extended
  std::string str;                          // kString
  ValueType element_type = ValueType::kU8;  // kArray
  std::vector<WriterValue> elements;        // kArray

  template <class T>
  requires std::is_arithmetic_v<T>
  static WriterValue of(T v);  // scalar of value_type_of<T> (bool, ints, float, double)
  static WriterValue of(std::string_view s);
  static WriterValue array(ValueType element_type, std::vector<WriterValue> elements);
  template <class T>
  static WriterValue array_of(std::span<const T> values);  // numeric / bool elements
  static WriterValue array_of_strings(std::span<const std::string> values);
};

// Fills `out` (exactly the tensor's byte size) with the tensor's data.
using TensorFiller = std::function<void(std::span<std::byte> out)>;

struct WriterOptions {
  std::uint32_t version = 3;                    // 2 or 3
  std::uint32_t alignment = kDefaultAlignment;  // power of two; written as general.alignment when != 32
};

class GgufWriter {
 public:
  explicit GgufWriter(WriterOptions options = {});

  // Metadata, kept in insertion order.
  void add(std::string_view key, WriterValue value);
  template <class T>
  void add_scalar(std::string_view key, T v) {
    add(key, WriterValue::of(v));
  }
  void add_string(std::string_view key, std::string_view v) { add(key, WriterValue::of(v)); }
  void add_string_array(std::string_view key, std::span<const std::string> v) {
    add(key, WriterValue::array_of_strings(v));
  }
  template <class T>
  void add_array(std::string_view key, std::span<const T> v) {
    add(key, WriterValue::array_of<T>(v));
  }

  // Tensors, laid out in insertion order. `ne` has 0..4 dims, ne[0] contiguous.
  void add_tensor(std::string_view name, GgmlType type, std::vector<std::int64_t> ne, std::vector<std::byte> data);
  void add_tensor(std::string_view name, GgmlType type, std::vector<std::int64_t> ne, TensorFiller fill);

  // The whole file in memory.
  Result<std::vector<std::byte>> to_bytes() const;
  // Writes `path` atomically: a temporary file in the same folder, flushed and
  // renamed over `path`; on any error (kIo, e.g. disk full) the temporary is
  // removed and `path` is untouched.
  Result<void> write_file(const std::filesystem::path& path) const;

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<std::int64_t> ne;
    std::vector<std::byte> data;  // used when fill is empty
    TensorFiller fill;
    std::uint64_t n_bytes = 0;  // exact data size
    std::uint64_t offset = 0;   // relative to the data section, aligned
  };
  using Sink = std::function<Result<void>(std::span<const std::byte>)>;
  Result<std::vector<std::byte>> header() const;
  Result<void> emit(const Sink& sink) const;
  void defer(Error e);

  WriterOptions options_;
  std::vector<std::pair<std::string, WriterValue>> kvs_;
  std::vector<PendingTensor> tensors_;
  std::uint64_t data_end_ = 0;  // end of the last tensor's data, relative to the data section
  std::optional<Error> error_;  // the first invalid add_*, reported by to_bytes / write_file
};

}  // namespace hearth::gguf
