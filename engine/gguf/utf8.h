// Quoting of names and strings read from files for error messages (internal to
// engine/gguf). Validation is engine/core/utf8.h's.
#pragma once

#include <string>
#include <string_view>

namespace hearth::gguf {

// `s` quoted for an error message: at most ~64 bytes, control and non-ASCII
// bytes as \xNN, so a hostile name cannot break the one-line message.
std::string quote_for_message(std::string_view s);

}  // namespace hearth::gguf
