// UTF-8 checks for names and strings read from files (internal to engine/gguf).
#pragma once

#include <string>
#include <string_view>

namespace hearth::gguf {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

// `s` quoted for an error message: at most ~64 bytes, control and non-ASCII
// bytes as \xNN, so a hostile name cannot break the one-line message.
std::string quote_for_message(std::string_view s);

}  // namespace hearth::gguf
