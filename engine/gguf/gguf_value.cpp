#include "engine/gguf/gguf_value.h"

#include <limits>

namespace hearth::gguf {

const char* to_string(ValueType type) {
  switch (type) {
    case ValueType::kU8:
      return "u8";
    case ValueType::kI8:
      return "i8";
    case ValueType::kU16:
      return "u16";
    case ValueType::kI16:
      return "i16";
    case ValueType::kU32:
      return "u32";
    case ValueType::kI32:
      return "i32";
    case ValueType::kF32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kU64:
      return "u64";
    case ValueType::kI64:
      return "i64";
    case ValueType::kF64:
      return "f64";
  }
  return "invalid";
}

std::size_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

bool is_integer(ValueType type) {
  switch (type) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kU16:
    case ValueType::kI16:
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kU64:
    case ValueType::kI64:
      return true;
    default:
      return false;
  }
}

Value Value::scalar(ValueType type, std::uint64_t raw_bits) {
  Value v;
  v.type_ = type;
  v.raw_ = raw_bits;
  return v;
}

Value Value::string(std::string_view s) {
  Value v;
  v.type_ = ValueType::kString;
  v.str_ = s;
  return v;
}

Value Value::array(const ArrayValue* a) {
  Value v;
  v.type_ = ValueType::kArray;
  v.array_ = a;
  return v;
}

namespace {

// Signed integer types widened to int64; nullopt for anything else.
std::optional<std::int64_t> signed_value(const Value& v) {
  switch (v.type()) {
    case ValueType::kI8:
      return *v.as<std::int8_t>();
    case ValueType::kI16:
      return *v.as<std::int16_t>();
    case ValueType::kI32:
      return *v.as<std::int32_t>();
    case ValueType::kI64:
      return *v.as<std::int64_t>();
    default:
      return std::nullopt;
  }
}

constexpr auto kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

}  // namespace

// Unsigned scalars are stored zero-extended, so raw_ is their value.
std::optional<std::uint64_t> Value::as_uint() const {
  if (auto i = signed_value(*this)) {
    if (*i < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*i);
  }
  if (is_integer(type_)) return raw_;
  return std::nullopt;
}

std::optional<std::int64_t> Value::as_int() const {
  if (auto i = signed_value(*this)) return i;
  if (is_integer(type_) && raw_ <= kInt64Max) return static_cast<std::int64_t>(raw_);
  return std::nullopt;
}

std::optional<double> Value::as_float() const {
  if (auto f = as<float>()) return static_cast<double>(*f);
  return as<double>();
}

std::span<const std::byte> ArrayValue::raw_bytes() const {
  const std::size_t size = scalar_size(element_type_);
  if (size == 0) return {};
  return {raw_, static_cast<std::size_t>(count_) * size};
}

Value ArrayValue::element(std::uint64_t i) const {
  switch (element_type_) {
    case ValueType::kString:
      return Value::string(strings_[i]);
    case ValueType::kArray:
      return Value::array(&arrays_[i]);
    default:
      break;
  }
  const std::size_t size = scalar_size(element_type_);
  std::uint64_t bits = 0;
  std::memcpy(&bits, raw_ + i * size, size);
  return Value::scalar(element_type_, bits);
}

}  // namespace hearth::gguf
