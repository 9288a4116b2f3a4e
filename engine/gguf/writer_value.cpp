// WriterValue constructors and the serialization of metadata values.
#include "engine/gguf/writer_value.h"

#include <cstring>

#include "engine/core/utf8.h"
#include "engine/gguf/utf8.h"

namespace hearth::gguf {

template <class T>
requires std::is_arithmetic_v<T> WriterValue WriterValue::of(T v) {
  WriterValue w;
  w.type = value_type_of<T>::value;
  if constexpr (std::is_same_v<T, bool>) {
    w.bits = v ? 1 : 0;
  } else {
    std::memcpy(&w.bits, &v, sizeof(T));
  }
  return w;
}

WriterValue WriterValue::of(std::string_view s) {
  WriterValue w;
  w.type = ValueType::kString;
  w.str = std::string(s);
  return w;
}

WriterValue WriterValue::array(ValueType element_type, std::vector<WriterValue> elements) {
  WriterValue w;
  w.type = ValueType::kArray;
  w.element_type = element_type;
  w.elements = std::move(elements);
  return w;
}

template <class T>
WriterValue WriterValue::array_of(std::span<const T> values) {
  std::vector<WriterValue> e;
  e.reserve(values.size());
  for (const T& v : values) e.push_back(of(v));
  return array(value_type_of<T>::value, std::move(e));
}

WriterValue WriterValue::array_of_strings(std::span<const std::string> values) {
  std::vector<WriterValue> e;
  e.reserve(values.size());
  for (const std::string& v : values) e.push_back(of(std::string_view(v)));
  return array(ValueType::kString, std::move(e));
}

#define HEARTH_WRITER_VALUE_INSTANTIATE(T)    \
  template WriterValue WriterValue::of<T>(T); \
  template WriterValue WriterValue::array_of<T>(std::span<const T>);
HEARTH_WRITER_VALUE_INSTANTIATE(std::uint8_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::int8_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::uint16_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::int16_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::uint32_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::int32_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::uint64_t)
HEARTH_WRITER_VALUE_INSTANTIATE(std::int64_t)
HEARTH_WRITER_VALUE_INSTANTIATE(float)
HEARTH_WRITER_VALUE_INSTANTIATE(double)
HEARTH_WRITER_VALUE_INSTANTIATE(bool)
#undef HEARTH_WRITER_VALUE_INSTANTIATE

void ByteSink::bytes(const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

void ByteSink::string(std::string_view s) {
  u64(s.size());
  bytes(s.data(), s.size());
}

namespace {

Result<void> check_value(const WriterValue& v, const std::string& ctx, int depth) {
  if (static_cast<std::uint32_t>(v.type) >= kValueTypeCount) {
    return make_error(ErrorCode::kInvalidArgument, ctx + ": invalid value type");
  }
  if (v.type == ValueType::kString && find_invalid_utf8(v.str)) {
    return make_error(ErrorCode::kInvalidArgument, ctx + ": string is not valid UTF-8");
  }
  if (v.type != ValueType::kArray) return {};
  if (depth > ArrayValue::kMaxArrayDepth) {
    return make_error(ErrorCode::kInvalidArgument,
                      ctx + ": arrays nested deeper than " + std::to_string(ArrayValue::kMaxArrayDepth));
  }
  for (std::size_t i = 0; i < v.elements.size(); ++i) {
    const WriterValue& e = v.elements[i];
    const std::string ectx = ctx + " element " + std::to_string(i);
    if (e.type != v.element_type) {
      return make_error(ErrorCode::kInvalidArgument,
                        ectx + " has type " + to_string(e.type) + ", array holds " + to_string(v.element_type));
    }
    HEARTH_TRY(check_value(e, ectx, depth + 1));
  }
  return {};
}

// Array payload: element type, count, elements (nested arrays recurse).
void write_array_payload(ByteSink& out, const WriterValue& v) {
  out.u32(static_cast<std::uint32_t>(v.element_type));
  out.u64(v.elements.size());
  for (const WriterValue& e : v.elements) {
    if (e.type == ValueType::kString) {
      out.string(e.str);
    } else if (e.type == ValueType::kArray) {
      write_array_payload(out, e);
    } else {
      out.bytes(&e.bits, scalar_size(e.type));  // little-endian host: low bytes first
    }
  }
}

}  // namespace

Result<void> validate_value(const WriterValue& v, const std::string& ctx) {
  return check_value(v, ctx, 1);
}

void write_value(ByteSink& out, const WriterValue& v) {
  out.u32(static_cast<std::uint32_t>(v.type));
  if (v.type == ValueType::kString) {
    out.string(v.str);
  } else if (v.type == ValueType::kArray) {
    write_array_payload(out, v);
  } else {
    out.bytes(&v.bits, scalar_size(v.type));
  }
}

}  // namespace hearth::gguf
