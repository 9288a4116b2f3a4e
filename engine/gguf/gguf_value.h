// GGUF metadata values as zero-copy views into the file's bytes. A Value or
// ArrayValue is valid as long as the GgufFile it came from (and, for
// GgufFile::parse, the caller's buffer) is alive.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace hearth::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF views assume a little-endian host");

// Serialized in GGUF files: do not change or reuse values.
enum class ValueType : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,  // one byte, 0 or 1
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
inline constexpr std::uint32_t kValueTypeCount = 13;

// "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array",
// "u64", "i64", "f64"; "invalid" for anything else.
const char* to_string(ValueType type);

// Bytes of one scalar of this type; 0 for kString and kArray.
std::size_t scalar_size(ValueType type);

bool is_integer(ValueType type);  // u8..i64 (not bool)

// The ValueType a C++ scalar type maps to (exact: uint32_t <-> kU32, ...).
template <class T>
struct value_type_of;
template <>
struct value_type_of<std::uint8_t> {
  static constexpr ValueType value = ValueType::kU8;
};
template <>
struct value_type_of<std::int8_t> {
  static constexpr ValueType value = ValueType::kI8;
};
template <>
struct value_type_of<std::uint16_t> {
  static constexpr ValueType value = ValueType::kU16;
};
template <>
struct value_type_of<std::int16_t> {
  static constexpr ValueType value = ValueType::kI16;
};
template <>
struct value_type_of<std::uint32_t> {
  static constexpr ValueType value = ValueType::kU32;
};
template <>
struct value_type_of<std::int32_t> {
  static constexpr ValueType value = ValueType::kI32;
};
template <>
struct value_type_of<float> {
  static constexpr ValueType value = ValueType::kF32;
};
template <>
struct value_type_of<bool> {
  static constexpr ValueType value = ValueType::kBool;
};
template <>
struct value_type_of<std::uint64_t> {
  static constexpr ValueType value = ValueType::kU64;
};
template <>
struct value_type_of<std::int64_t> {
  static constexpr ValueType value = ValueType::kI64;
};
template <>
struct value_type_of<double> {
  static constexpr ValueType value = ValueType::kF64;
};
template <>
struct value_type_of<std::string_view> {
  static constexpr ValueType value = ValueType::kString;
};

// A zero-copy view of `size()` little-endian scalars of type T. The bytes may
// be unaligned, so elements are memcpy'd out one at a time.
template <class T>
class NumericArray {
 public:
  static_assert(std::is_arithmetic_v<T>);
  NumericArray() = default;
  NumericArray(const std::byte* data, std::size_t count) : data_(data), count_(count) {}

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Precondition: i < size().
  T operator[](std::size_t i) const {
    if constexpr (std::is_same_v<T, bool>) {
      return data_[i] != std::byte{0};
    } else {
      T v;
      std::memcpy(&v, data_ + i * sizeof(T), sizeof(T));
      return v;
    }
  }
  std::vector<T> to_vector() const {
    std::vector<T> out(count_);
    for (std::size_t i = 0; i < count_; ++i) out[i] = (*this)[i];
    return out;
  }
  std::span<const std::byte> bytes() const { return {data_, count_ * sizeof(T)}; }

 private:
  const std::byte* data_ = nullptr;
  std::size_t count_ = 0;
};

class ArrayValue;

// One metadata value: a scalar, a string view, or an array view.
class Value {
 public:
  Value() = default;
  static Value scalar(ValueType type, std::uint64_t raw_bits);
  static Value string(std::string_view s);
  static Value array(const ArrayValue* a);

  ValueType type() const { return type_; }

  // Exact-type access: nullopt when the stored type is not value_type_of<T>.
  template <class T>
  std::optional<T> as() const;
  // Any integer type whose value fits (u64 >= 0 / int64 range); nullopt otherwise.
  std::optional<std::uint64_t> as_uint() const;
  std::optional<std::int64_t> as_int() const;
  // f32 or f64 (widened); nullopt otherwise.
  std::optional<double> as_float() const;
  // nullptr when not an array.
  const ArrayValue* as_array() const { return type_ == ValueType::kArray ? array_ : nullptr; }

  // Raw little-endian bits of a scalar, zero-extended to 64 bits.
  std::uint64_t raw_bits() const { return raw_; }

 private:
  ValueType type_ = ValueType::kU8;
  std::uint64_t raw_ = 0;
  std::string_view str_;
  const ArrayValue* array_ = nullptr;
};

// An array of `size()` elements of one type. Numeric and bool elements stay in
// the file's bytes; string elements are string_views; array elements (nested
// arrays) are ArrayValues, nested at most kMaxArrayDepth deep.
class ArrayValue {
 public:
  static constexpr int kMaxArrayDepth = 8;

  ValueType element_type() const { return element_type_; }
  std::uint64_t size() const { return count_; }

  // Exact element type: nullopt when element_type() is not value_type_of<T>.
  template <class T>
  std::optional<NumericArray<T>> as_numeric() const {
    if (element_type_ != value_type_of<T>::value) return std::nullopt;
    return NumericArray<T>(raw_, static_cast<std::size_t>(count_));
  }
  // Raw element bytes (size() * scalar_size) for numeric/bool elements; empty otherwise.
  std::span<const std::byte> raw_bytes() const;
  // String elements; empty unless element_type() == kString.
  std::span<const std::string_view> strings() const { return strings_; }
  // Nested arrays; empty unless element_type() == kArray.
  std::span<const ArrayValue> arrays() const { return arrays_; }
  // Element i of any type as a Value (precondition: i < size()).
  Value element(std::uint64_t i) const;

 private:
  friend class ArrayBuilder;  // the parser fills these
  ValueType element_type_ = ValueType::kU8;
  std::uint64_t count_ = 0;
  const std::byte* raw_ = nullptr;
  std::vector<std::string_view> strings_;
  std::vector<ArrayValue> arrays_;
};

template <class T>
std::optional<T> Value::as() const {
  if (type_ != value_type_of<T>::value) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string_view>) {
    return str_;
  } else if constexpr (std::is_same_v<T, bool>) {
    return raw_ != 0;
  } else {
    T v;
    std::memcpy(&v, &raw_, sizeof(T));  // little-endian: the low bytes hold the value
    return v;
  }
}

}  // namespace hearth::gguf
