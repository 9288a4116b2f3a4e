// GGUF metadata values as JSON, for `inspect --json` and the oracle test that
// compares it with the Python gguf reader.
//
// Scalars become JSON numbers, booleans and strings. An array becomes
//   {"element_type": "i32", "count": N, "sha256": "...", "items": [...], "truncated": bool}
// with at most `max_items` items. sha256 covers the whole array in a canonical
// byte form: numeric and bool elements as their little-endian bytes; strings as
// u64 length + UTF-8 bytes each; nested arrays as the 32-byte digest of each
// element's own canonical form.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_value.h"

namespace hearth::cli {

nlohmann::json value_json(const gguf::Value& value, std::size_t max_items);

}  // namespace hearth::cli
