#include "cli/gguf_json.h"

#include <array>
#include <string>

#include "engine/core/sha256.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

json scalar_json(const gguf::Value& v) {
  using gguf::ValueType;
  switch (v.type()) {
    case ValueType::kString:
      return std::string(*v.as<std::string_view>());
    case ValueType::kBool:
      return *v.as<bool>();
    case ValueType::kF32:
    case ValueType::kF64:
      return *v.as_float();
    case ValueType::kU64:
      return *v.as<std::uint64_t>();
    case ValueType::kU8:
    case ValueType::kU16:
    case ValueType::kU32:
      return *v.as_uint();
    default:
      return *v.as_int();  // signed integers
  }
}

Sha256Digest array_digest(const gguf::ArrayValue& a) {
  Sha256 h;
  if (a.element_type() == gguf::ValueType::kString) {
    for (std::string_view s : a.strings()) {
      const std::uint64_t n = s.size();
      h.update(&n, sizeof n);  // little-endian host (asserted in gguf_value.h)
      h.update(s.data(), s.size());
    }
  } else if (a.element_type() == gguf::ValueType::kArray) {
    for (const auto& child : a.arrays()) {
      const auto d = array_digest(child);
      h.update(d.data(), d.size());
    }
  } else {
    const auto raw = a.raw_bytes();
    h.update(raw.data(), raw.size());
  }
  return h.finish();
}

}  // namespace

json value_json(const gguf::Value& value, std::size_t max_items) {
  const gguf::ArrayValue* a = value.as_array();
  if (!a) return scalar_json(value);
  json items = json::array();
  const std::uint64_t shown = std::min<std::uint64_t>(a->size(), max_items);
  for (std::uint64_t i = 0; i < shown; ++i) items.push_back(value_json(a->element(i), max_items));
  return {{"element_type", gguf::to_string(a->element_type())},
          {"count", a->size()},
          {"sha256", Sha256::hex(array_digest(*a))},
          {"items", items},
          {"truncated", shown < a->size()}};
}

}  // namespace hearth::cli
